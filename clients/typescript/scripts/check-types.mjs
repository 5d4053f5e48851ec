#!/usr/bin/env node
// Compares the hand-written types of src/types.ts with the schemas of
// docs/openapi.yaml: every schema has a type of the same name (Error is
// ErrorBody), every schema property exists with a compatible type, a
// required property is not optional and an optional one is, enums match,
// and no type has a property the schema lacks. Exit status 1 on any
// mismatch, listing them all.
//
//   node scripts/check-types.mjs [--spec docs/openapi.yaml] [--types src/types.ts]

import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import YAML from "yaml";

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** TS names of schemas whose name would shadow a global. */
const tsNames = { Error: "ErrorBody" };

export function checkTypes(specText, typesText) {
  const spec = YAML.parse(specText);
  const schemas = spec.components.schemas;
  const sf = ts.createSourceFile("types.ts", typesText, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const decls = new Map();
  for (const st of sf.statements) {
    if ((ts.isInterfaceDeclaration(st) || ts.isTypeAliasDeclaration(st)) && st.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) {
      decls.set(st.name.text, st);
    }
  }
  const errs = [];
  const fail = (path, msg) => errs.push(`${path}: ${msg}`);
  const tsName = (schemaName) => tsNames[schemaName] ?? schemaName;
  const refName = (ref) => ref.replace("#/components/schemas/", "");

  /** The members of an interface or type literal, or undefined. */
  const membersOf = (node) => {
    if (ts.isInterfaceDeclaration(node)) {
      if (node.heritageClauses?.length) return undefined; // not used in types.ts; keep the check simple
      return node.members;
    }
    if (ts.isTypeLiteralNode(node)) return node.members;
    return undefined;
  };
  const typeOf = (decl) => (ts.isTypeAliasDeclaration(decl) ? decl.type : decl);
  const strip = (node) => (node && ts.isParenthesizedTypeNode(node) ? strip(node.type) : node);
  const isNull = (n) => ts.isLiteralTypeNode(n) && n.literal.kind === ts.SyntaxKind.NullKeyword;
  const literalValue = (n) => {
    if (!ts.isLiteralTypeNode(n)) return undefined;
    const l = n.literal;
    if (ts.isStringLiteral(l)) return l.text;
    if (ts.isNumericLiteral(l)) return Number(l.text);
    if (ts.isPrefixUnaryExpression(l) && l.operator === ts.SyntaxKind.MinusToken && ts.isNumericLiteral(l.operand)) return -Number(l.operand.text);
    return undefined;
  };
  const refTo = (n) => (ts.isTypeReferenceNode(n) && ts.isIdentifier(n.typeName) ? n.typeName.text : undefined);

  function compare(schema, node, path) {
    node = strip(node);
    if (schema.$ref) {
      const name = refName(schema.$ref);
      const r = refTo(node);
      if (r !== undefined && decls.has(r)) {
        if (r !== tsName(name)) fail(path, `is ${r}, the schema refers to ${name}`);
        return; // the referenced type is checked on its own
      }
      return compare(schemas[name], node, path);
    }
    const r = refTo(node);
    if (r !== undefined && decls.has(r)) return compare(schema, typeOf(decls.get(r)), path);
    if (schema.oneOf) return compareUnion(schema.oneOf, node, path);
    const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
    if (types.length > 1) {
      return compareUnion(types.map((t) => ({ ...schema, type: t })), node, path);
    }
    const t = types[0] ?? (schema.properties || schema.additionalProperties ? "object" : undefined);
    switch (t) {
      case "null":
        if (!isNull(node)) fail(path, `want null, the type is ${node.getText()}`);
        return;
      case "string":
      case "integer":
      case "number":
        return compareScalar(schema, t, node, path);
      case "boolean":
        if (node.kind !== ts.SyntaxKind.BooleanKeyword) fail(path, `want boolean, the type is ${node.getText()}`);
        return;
      case "array": {
        let el;
        if (ts.isArrayTypeNode(node)) el = node.elementType;
        else if (refTo(node) === "Array" && node.typeArguments?.length === 1) el = node.typeArguments[0];
        if (!el) return fail(path, `want an array, the type is ${node.getText()}`);
        if (schema.items) compare(schema.items, el, `${path}[]`);
        return;
      }
      case "object":
        return compareObject(schema, node, path);
      case undefined:
        return; // any value
      default:
        fail(path, `the schema type ${t} is not understood by this check`);
    }
  }

  function compareScalar(schema, t, node, path) {
    const keyword = t === "string" ? ts.SyntaxKind.StringKeyword : ts.SyntaxKind.NumberKeyword;
    const want = schema.const !== undefined ? [schema.const] : schema.enum;
    const members = ts.isUnionTypeNode(node) ? node.types.map(strip) : [node];
    if (want) {
      const got = members.map(literalValue);
      if (got.some((v) => v === undefined)) return fail(path, `want the literals ${JSON.stringify(want)}, the type is ${node.getText()}`);
      const a = [...got].sort().join("|");
      const b = [...want].sort().join("|");
      if (a !== b) fail(path, `literals ${a}, the schema's enum is ${b}`);
      return;
    }
    if (members.length !== 1 || node.kind !== keyword) fail(path, `want ${t === "string" ? "string" : "number"}, the type is ${node.getText()}`);
  }

  function compareUnion(branches, node, path) {
    const members = ts.isUnionTypeNode(node) ? node.types.map(strip) : [node];
    const used = new Set();
    for (const b of branches) {
      const i = members.findIndex((m, j) => !used.has(j) && quiet(() => compare(b, m, path)));
      if (i < 0) fail(path, `no member of ${node.getText()} matches the schema's ${JSON.stringify(b.type ?? b.$ref ?? b)}`);
      else used.add(i);
    }
    members.forEach((m, j) => { if (!used.has(j)) fail(path, `member ${m.getText()} is not in the schema`); });
  }

  /** Whether compare adds no error, without keeping the errors it would add. */
  function quiet(fn) {
    const n = errs.length;
    fn();
    const ok = errs.length === n;
    errs.length = n;
    return ok;
  }

  function compareObject(schema, node, path) {
    const members = membersOf(node);
    const props = schema.properties ?? {};
    if (!members) {
      // Record<string, V> for a map; Record<string, unknown> for a free object.
      if (refTo(node) === "Record" && node.typeArguments?.length === 2) {
        if (node.typeArguments[0].kind !== ts.SyntaxKind.StringKeyword) fail(path, "a map's keys must be string");
        if (Object.keys(props).length) fail(path, `the schema has properties ${Object.keys(props).join(", ")}, the type is a map`);
        const v = schema.additionalProperties;
        if (typeof v === "object") compare(v, node.typeArguments[1], `${path}{}`);
        else if (node.typeArguments[1].kind !== ts.SyntaxKind.UnknownKeyword) fail(path, "a free-form object should be Record<string, unknown>");
        return;
      }
      return fail(path, `want an object type, the type is ${node.getText()}`);
    }
    const required = new Set(schema.required ?? []);
    const seen = new Set();
    for (const m of members) {
      if (!ts.isPropertySignature(m)) {
        fail(path, `member ${m.getText()} is not a plain property`);
        continue;
      }
      const name = m.name.getText().replace(/^["']|["']$/g, "");
      seen.add(name);
      const p = props[name];
      if (!p) {
        fail(`${path}.${name}`, "is in the type but not in the schema");
        continue;
      }
      if (required.has(name) && m.questionToken) fail(`${path}.${name}`, "is required in the schema but optional in the type");
      if (!required.has(name) && !m.questionToken) fail(`${path}.${name}`, "is optional in the schema but required in the type");
      if (!m.type) fail(`${path}.${name}`, "has no type");
      else compare(p, m.type, `${path}.${name}`);
    }
    for (const name of Object.keys(props)) if (!seen.has(name)) fail(`${path}.${name}`, "is in the schema but not in the type");
    for (const name of required) if (!(name in props)) fail(`${path}.${name}`, "is required but the schema does not define it");
  }

  for (const [name, schema] of Object.entries(schemas)) {
    const decl = decls.get(tsName(name));
    if (!decl) {
      fail(name, `no exported type ${tsName(name)} in types.ts`);
      continue;
    }
    compare(schema, typeOf(decl), tsName(name));
  }
  const schemaNames = new Set(Object.keys(schemas).map(tsName));
  for (const name of decls.keys()) if (!schemaNames.has(name)) fail(name, "is exported by types.ts but is not a schema");
  return errs;
}

const isMain = process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const arg = (flag, dflt) => {
    const i = process.argv.indexOf(flag);
    return i > 0 ? resolve(process.argv[i + 1]) : dflt;
  };
  const specPath = arg("--spec", resolve(pkg, "..", "..", "docs", "openapi.yaml"));
  const typesPath = arg("--types", resolve(pkg, "src", "types.ts"));
  const errs = checkTypes(readFileSync(specPath, "utf8"), readFileSync(typesPath, "utf8"));
  if (errs.length) {
    console.error(`${typesPath} does not match ${specPath}:\n  ${errs.join("\n  ")}`);
    process.exit(1);
  }
  const n = Object.keys(YAML.parse(readFileSync(specPath, "utf8")).components.schemas).length;
  console.log(`${typesPath}: the ${n} schemas of ${specPath} match`);
}
