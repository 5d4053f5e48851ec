// The types-versus-schema check passes on src/types.ts and catches each
// kind of drift it is meant to catch.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

import { checkTypes } from "../scripts/check-types.mjs";
import { packageRoot } from "./daemon.mjs";

const spec = readFileSync(resolve(packageRoot, "..", "..", "docs", "openapi.yaml"), "utf8");
const types = readFileSync(resolve(packageRoot, "src", "types.ts"), "utf8");

function mutate(from, to) {
  assert.ok(types.includes(from), `types.ts no longer contains ${JSON.stringify(from)}`);
  return checkTypes(spec, types.replace(from, to));
}

test("src/types.ts matches docs/openapi.yaml", () => {
  assert.deepEqual(checkTypes(spec, types), []);
});

test("the check catches drift", () => {
  const cases = [
    [["  bm25_hits: number;\n", ""], "RecallStats.bm25_hits: is in the schema but not in the type"],
    [["  score: number;\n", "  score: string;\n"], "Memory.score: want number, the type is string"],
    [["export interface RecordInput {\n  /** RFC 3339; absent: the daemon's clock. */\n  time?: string;\n  agent: string;",
      "export interface RecordInput {\n  /** RFC 3339; absent: the daemon's clock. */\n  time?: string;\n  agent?: string;"],
     "RecordInput.agent: is required in the schema but optional in the type"],
    [['export type Mode = "lazy" | "sparse" | "dense";', 'export type Mode = "lazy" | "sparse";'],
     "Mode: literals lazy|sparse, the schema's enum is dense|lazy|sparse"],
    [["  reasons?: string[];\n", "  reasons?: string[];\n  bogus: number;\n"], "Memory.bogus: is in the type but not in the schema"],
    [["export type StoredMeta = Record<string, string[]>;", "export type StoredMeta = Record<string, string[]> | null;"],
     "StoredMeta: want an object type, the type is Record<string, string[]> | null"],
    [["export interface StageMicros {", "interface StageMicros {"], "StageMicros: no exported type StageMicros in types.ts"],
    [["  ids: number[];", "  ids: number;"], "AppendResult.ids: want an array, the type is number"],
    [["  synonyms?: Record<string, string[]>;", "  synonyms?: Record<string, string>;"], "Query.synonyms{}: want an array, the type is string"],
    [["  stage_us: StageMicros;", "  stage_us: Metrics;"], "RecallStats.stage_us: is Metrics, the schema refers to StageMicros"],
  ];
  for (const [[from, to], want] of cases) {
    const errs = mutate(from, to);
    assert.ok(errs.includes(want), `want ${JSON.stringify(want)} among ${JSON.stringify(errs)}`);
  }
});
