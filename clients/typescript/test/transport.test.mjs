// Retries and the status-to-error mapping, against a scripted local HTTP
// server: statuses a healthy daemon cannot be made to return on demand
// (503 busy, 507 disk full) are replayed as the daemon writes them.

import { afterEach, beforeEach, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";

import {
  Busy,
  Client,
  DiskFull,
  Forbidden,
  QuotaExceeded,
  InvalidInput,
  LazymemError,
  MethodNotAllowed,
  NotFound,
  ServerError,
  TooLarge,
  Unauthorized,
  UnsupportedMediaType,
  parseRetryAfter,
} from "../dist/index.js";

let server;
let url;
let replies; // [status, headers, body]; the last one repeats
let requests; // {method, path, headers, body}

beforeEach(async () => {
  replies = [];
  requests = [];
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => { body += c; });
    req.on("end", () => {
      requests.push({ method: req.method, path: req.url, headers: req.headers, body });
      const [status, headers, payload] = replies[Math.min(requests.length, replies.length) - 1];
      const data = payload === undefined ? "" : JSON.stringify(payload);
      res.writeHead(status, { "Content-Type": "application/json", ...headers });
      res.end(data);
    });
  });
  await new Promise((res) => server.listen(0, "127.0.0.1", res));
  url = `http://127.0.0.1:${server.address().port}`;
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise((res) => server.close(res));
});

const err = (code, message, field) => ({ error: field ? { code, field, message } : { code, message } });
const OK_IDS = [200, {}, { ids: [7] }];
const BUSY = [503, { "Retry-After": "1" }, err("busy", "the records being appended fill the budget")];

function recorder() {
  const waits = [];
  return { waits, sleep: async (ms) => { waits.push(ms); } };
}

test("busy is retried, honouring Retry-After", async () => {
  replies = [BUSY, BUSY, OK_IDS];
  const { waits, sleep } = recorder();
  const c = new Client(url, { token: "t", retries: 3, sleep });
  assert.equal(await c.append("hello", { agent: "a" }), 7);
  assert.deepEqual(waits, [1000, 1000]);
  assert.equal(requests.length, 3);
  assert.equal(new Set(requests.map((r) => r.body)).size, 1);
  assert.deepEqual(JSON.parse(requests[0].body), { agent: "a", text: "hello" });
  for (const r of requests) {
    assert.equal(r.headers.authorization, "Bearer t");
    assert.equal(r.headers["content-type"], "application/json");
  }
});

test("retries are bounded", async () => {
  replies = [BUSY];
  const { waits, sleep } = recorder();
  const c = new Client(url, { retries: 2, sleep });
  const e = await c.append("x", { agent: "a" }).catch((e) => e);
  assert.ok(e instanceof Busy);
  assert.equal(e.code, "busy");
  assert.equal(e.retryAfter, 1);
  assert.equal(requests.length, 3);
  assert.equal(waits.length, 2);
});

test("Retry-After is capped; backoff without it", async () => {
  replies = [[503, { "Retry-After": "3600" }, err("busy", "b")], [503, {}, err("starting", "opening")], [503, {}, err("starting", "opening")], OK_IDS];
  const { waits, sleep } = recorder();
  const c = new Client(url, { retries: 5, backoffMs: 200, maxWaitMs: 2000, sleep });
  assert.equal(await c.append("x", { agent: "a" }), 7);
  assert.equal(waits[0], 2000);
  assert.ok(waits[1] >= 200 && waits[1] <= 400, `${waits[1]}`); // 200 * 2^1 * [0.5, 1]
  assert.ok(waits[2] >= 400 && waits[2] <= 800, `${waits[2]}`);
});

test("a timeout is not retried for appends, but is for reads", async () => {
  const timeout = [503, {}, err("timeout", "the request took longer than 30s")];
  replies = [timeout, OK_IDS];
  const { waits, sleep } = recorder();
  const c = new Client(url, { retries: 3, sleep });
  const e = await c.append("x", { agent: "a" }).catch((e) => e);
  assert.ok(e instanceof Busy);
  assert.equal(e.code, "timeout");
  assert.equal(requests.length, 1);
  assert.deepEqual(waits, []);
  requests = [];
  replies = [timeout, [200, {}, { appended: 1 }]];
  assert.deepEqual(await c.stats(), { appended: 1 });
  assert.equal(requests.length, 2);
  assert.equal(waits.length, 1);
});

test("retries: 0 never retries", async () => {
  replies = [BUSY, OK_IDS];
  const c = new Client(url, { retries: 0, sleep: async () => assert.fail("slept") });
  await assert.rejects(c.append("x", { agent: "a" }), Busy);
  assert.equal(requests.length, 1);
});

for (const [status, code, cls] of [
  [400, "invalid", InvalidInput],
  [400, "bad_body", InvalidInput],
  [401, "unauthorized", Unauthorized],
  [403, "forbidden_host", Forbidden],
  [404, "not_found", NotFound],
  [405, "method_not_allowed", MethodNotAllowed],
  [403, "quota", QuotaExceeded],
  [413, "too_large", TooLarge],
  [415, "unsupported_media_type", UnsupportedMediaType],
  [500, "internal", ServerError],
  [502, "embedder", ServerError],
  [503, "closed", Busy],
  [507, "disk_full", DiskFull],
  [418, "teapot", LazymemError],
]) {
  test(`status ${status} ${code} is ${cls.name}`, async () => {
    replies = [[status, {}, err(code, `${code} happened`, "records[3].agent")]];
    const e = await new Client(url, { retries: 0 }).append("x", { agent: "a" }).catch((e) => e);
    assert.equal(e.constructor, cls);
    assert.equal(e.name, cls.name);
    assert.deepEqual([e.status, e.code, e.field, e.message], [status, code, "records[3].agent", `${code} happened`]);
    assert.equal(String(e), `lazymem: ${status} ${code}: ${code} happened`);
  });
}

test("the daemon's lazymem: prefix is said once", async () => {
  replies = [[404, {}, err("not_found", "lazymem: engine: record not found: id 99")]];
  const e = await new Client(url, { retries: 0 }).get(99).catch((e) => e);
  assert.ok(e instanceof NotFound);
  assert.equal(e.message, "lazymem: engine: record not found: id 99");
  assert.equal(String(e), "lazymem: 404 not_found: engine: record not found: id 99");
});

test("an error reply without a JSON body", async () => {
  replies = [[502, {}, undefined]];
  const e = await new Client(url, { retries: 0 }).stats().catch((e) => e);
  assert.ok(e instanceof ServerError);
  assert.deepEqual([e.status, e.code, e.message], [502, "", "HTTP 502"]);
});

test("probes are false on 503 and not retried", async () => {
  replies = [[503, {}, { status: "opening" }]];
  const c = new Client(url, { sleep: async () => {} });
  assert.equal(await c.ready(), false);
  assert.equal(await c.health(), false);
  assert.equal(requests.length, 2);
  replies = [[200, {}, { status: "ok" }]];
  assert.equal(await c.ready(), true);
  assert.equal(await c.health(), true);
  assert.equal(await c.live(), true);
});

test("a probe's 503 body gives the code", async () => {
  const { errorFor } = await import("../dist/index.js");
  const e = errorFor(503, { status: "closing" });
  assert.ok(e instanceof Busy);
  assert.deepEqual([e.code, e.message], ["closing", "the store is closing"]);
  const s = errorFor(503, { status: "stopped", error: "lazymem: segment: the storage engine stopped; restart the process" });
  assert.ok(s instanceof Busy);
  assert.equal(s.code, "stopped");
  assert.match(s.message, /restart the process/);
});

test("parseRetryAfter", () => {
  assert.equal(parseRetryAfter("2"), 2);
  assert.equal(parseRetryAfter("-1"), 0);
  assert.equal(parseRetryAfter(null), undefined);
  assert.equal(parseRetryAfter("soon"), undefined);
  assert.equal(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT"), 0);
  assert.equal(parseRetryAfter("Wed, 21 Oct 2015 07:28:10 GMT", Date.parse("2015-10-21T07:28:00Z")), 10);
});

test("bad options", () => {
  assert.throws(() => new Client("localhost:7373"), /baseUrl/);
  assert.throws(() => new Client(url, { retries: -1 }), /retries/);
  assert.throws(() => new Client(url, { timeoutMs: 0 }), /timeoutMs/);
});

const RECALL_EMPTY = [200, {}, { memories: [], recall_id: 1, stats: {} }];
const RECORD = [200, {}, { id: 5, time: "2026-01-01T00:00:00Z", agent: "a", text: "x" }];

test("cluster mode: an agent's reads carry its last append's seq as min_seq", async () => {
  replies = [[200, {}, { ids: [5], seq: 42 }], [200, {}, { ids: [6, 7], seq: 44 }],
    RECALL_EMPTY, RECALL_EMPTY, RECALL_EMPTY, RECORD, [200, {}, { units: [] }]];
  const c = new Client(url, { retries: 0 });
  await c.append("first", { agent: "a" });
  await c.appendBatch([{ agent: "b", text: "x" }, { agent: "c", text: "y" }]);
  await c.recall("first", { agent: "a" });
  await c.recall("x", { agent: "z" });
  await c.recall("x", { agents: ["a", "c"] });
  await c.get(5);
  await c.core({ agent: "b" });
  assert.deepEqual(requests.slice(2).map((r) => r.path), [
    "/v1/recall?min_seq=42", "/v1/recall", "/v1/recall?min_seq=44", "/v1/records/5?min_seq=44", "/v1/core?agent=b&min_seq=44"]);
});

test("a standalone daemon's reads carry no sequence", async () => {
  replies = [OK_IDS, RECALL_EMPTY, RECORD];
  const c = new Client(url, { retries: 0 });
  await c.append("x", { agent: "a" });
  await c.recall("x", { agent: "a" });
  await c.get(7);
  assert.deepEqual(requests.map((r) => r.path), ["/v1/records", "/v1/recall", "/v1/records/7"]);
});
