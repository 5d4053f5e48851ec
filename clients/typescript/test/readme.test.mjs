// The README's usage example runs as written against a real lazymemd: a
// newcomer copies it first (it once asked about "last week" right after
// appending, found nothing, and failed on res.memories[0]).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import ts from "typescript";

import { packageRoot, startDaemon } from "./daemon.mjs";

const d = await startDaemon();
after(async () => { if (d.stop) await d.stop(); });

test("the README's usage example runs", { skip: d.skip ?? false }, async () => {
  const readme = readFileSync(resolve(packageRoot, "README.md"), "utf8");
  const m = /```ts\n([\s\S]*?)```/.exec(readme.split("## Use")[1] ?? "");
  assert.ok(m, "no ts block under '## Use' in the README");
  let code = m[1];
  for (const s of ['from "lazymem"', 'new Client("http://127.0.0.1:7373", { token: process.env.LAZYMEMD_TOKEN })', '"support-bot"']) {
    assert.ok(code.includes(s), `the example no longer contains ${s}`);
  }
  const agent = `ts-readme-${randomBytes(3).toString("hex")}`;
  code = code
    .replace('from "lazymem"', `from ${JSON.stringify(pathToFileURL(resolve(packageRoot, "dist", "index.js")).href)}`)
    .replace('new Client("http://127.0.0.1:7373", { token: process.env.LAZYMEMD_TOKEN })',
      `new Client(${JSON.stringify(d.url)}, { token: ${JSON.stringify(d.token)} })`)
    .replaceAll('"support-bot"', JSON.stringify(agent));
  code += "\nexport { res };\n";
  const js = ts.transpileModule(code, { compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 } }).outputText;
  const file = join(mkdtempSync(join(tmpdir(), "lazymem-readme-")), "example.mjs");
  writeFileSync(file, js);
  const { res } = await import(pathToFileURL(file).href);
  assert.ok(res.memories.length > 0, "the example's recall found nothing");
  assert.ok(res.memories.some((x) => x.text.includes("pool")));
});
