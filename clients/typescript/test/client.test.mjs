// The client against a real lazymemd (see daemon.mjs).

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import net from "node:net";

import {
  Busy,
  Client,
  ConnectionFailed,
  Forbidden,
  InvalidInput,
  LazymemError,
  MethodNotAllowed,
  NotFound,
  TooLarge,
  Unauthorized,
  formatContext,
} from "../dist/index.js";
import { MAX_AGENTS, MAX_BATCH, MAX_BODY, startDaemon } from "./daemon.mjs";

const d = await startDaemon();
after(async () => { if (d.stop) await d.stop(); });
const skip = d.skip ?? false;
const client = () => new Client(d.url, { token: d.token });
const agentName = (t) => `ts-${t.replace(/[^A-Za-z0-9]+/g, "-")}-${randomBytes(3).toString("hex")}`;

async function rejects(p, cls, check = () => {}) {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof cls, `want ${cls.name}, got ${e?.name}: ${e?.message}`);
    assert.ok(e instanceof LazymemError);
    check(e);
    return e;
  }
  assert.fail(`want ${cls.name}, nothing was thrown`);
}

test("append and get round trip", { skip }, async (t) => {
  const c = client();
  const agent = agentName(t.name);
  const time = "2026-05-01T14:03:00.123456789Z";
  const id = await c.append("Let's set the connection pool to 20 on billing-api.", {
    agent, session: "s-42", role: "user", time, meta: { tags: ["db", "config"], team: "infra" },
  });
  assert.ok(id >= 1);
  assert.deepEqual(await c.get(id), {
    id, time, agent, session: "s-42", role: "user",
    text: "Let's set the connection pool to 20 on billing-api.",
    meta: { tags: ["db", "config"], team: ["infra"] },
  });
});

test("append a record object; the daemon's clock; Date times", { skip }, async (t) => {
  const c = client();
  const agent = agentName(t.name);
  const before = Date.now() - 5000;
  const rec = await c.get(await c.append({ agent, text: "no time given" }));
  assert.ok(Date.parse(rec.time) >= before);
  assert.equal(rec.session, "");
  assert.deepEqual(rec.meta, {}); // never null: {} when the record has none
  assert.equal(rec.role, "");
  const when = new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678));
  const got = await c.get(await c.append({ agent, text: "dated", time: when }));
  assert.equal(Date.parse(got.time), when.getTime());
});

test("appendBatch: consecutive ids, in order", { skip }, async (t) => {
  const c = client();
  const agent = agentName(t.name);
  const recs = Array.from({ length: 5 }, (_, i) => ({ agent, session: "s1", role: i % 2 ? "assistant" : "user", text: `turn ${i} about kafka` }));
  const ids = await c.appendBatch(recs);
  assert.deepEqual(ids, ids.map((_, i) => ids[0] + i));
  for (const [i, id] of ids.entries()) assert.equal((await c.get(id)).text, recs[i].text);
  assert.deepEqual(await c.appendBatch([]), []);
});

test("a batch with a bad record writes nothing", { skip }, async (t) => {
  const c = client();
  const agent = agentName(t.name);
  const before = (await c.stats()).log.next_id;
  await rejects(c.appendBatch([{ agent, text: "fine" }, { agent: "", text: "no agent" }]), InvalidInput, (e) => {
    assert.equal(e.status, 400);
    assert.equal(e.code, "invalid");
    assert.equal(e.field, "records[1].agent");
    assert.match(e.message, /records\[1\]\.agent/);
  });
  assert.equal((await c.stats()).log.next_id, before);
});

test("recall finds, explains and reports stats", { skip }, async (t) => {
  const c = client();
  const agent = agentName(t.name);
  await c.appendBatch([
    { agent, session: "s1", role: "user", text: "We picked Postgres for the billing service." },
    { agent, session: "s1", role: "assistant", text: "Noted: the pool size is 20 connections." },
    { agent, session: "s2", role: "user", text: "Lunch is at noon on Friday." },
  ]);
  const res = await c.recall("what pool size did we choose?", { agent, k: 2, explain: true });
  assert.ok(res.memories.length >= 1 && res.memories.length <= 2);
  const top = res.memories[0];
  assert.match(top.text, /pool size is 20/);
  assert.equal(top.agent, agent);
  assert.ok(top.reasons.length > 0 && top.score > 0 && top.sparse > 0);
  const scores = res.memories.map((m) => m.score);
  assert.deepEqual(scores, [...scores].sort((a, b) => b - a));
  assert.equal(res.stats.mode, "lazy");
  assert.equal(res.stats.filtered, 3);
  assert.deepEqual(Object.keys(res.stats.stage_us).sort(), ["broad", "embed", "fetch", "filter", "score", "total"]);
  // Every engine count is carried, lists as [] rather than null.
  for (const k of ["fallback", "speaker_records", "disk_hits", "shared"]) assert.equal(typeof res.stats[k], "number", k);
  assert.ok(Array.isArray(res.stats.speakers) && Array.isArray(res.stats.notes));
  assert.equal(typeof res.stats.dense_text, "string");
});

test("feedback, consolidate and core memory", { skip }, async (t) => {
  const c = client();
  const agent = agentName(t.name);
  const [a, b] = await c.appendBatch([
    { agent, session: "s1", role: "ann", text: "We decided to move the billing service to Postgres 16." },
    { agent, session: "s1", role: "bo", text: "Bo will write the migration script by Friday." },
  ]);
  const rep = await c.consolidate({ agent, ids: [a, b] });
  assert.ok(rep.selected >= 1 && rep.units.length >= 1, JSON.stringify(rep));
  assert.ok(Array.isArray(rep.superseded) && typeof rep.duration_us === "number");
  const units = await c.core({ agent });
  assert.deepEqual(units.map((u) => u.id).sort(), rep.units.map((u) => u.id).sort());
  for (const u of units) {
    assert.equal(u.agent, agent);
    assert.ok(Array.isArray(u.action_items) && Array.isArray(u.participants) && Array.isArray(u.supersedes));
    assert.equal(u.superseded_by, 0);
  }
  assert.ok((await c.core({ agent, history: true })).length >= units.length);
  const res = await c.recall("billing Postgres", { agent, tier: "core" });
  assert.ok(res.recall_id > 0 && res.memories.length >= 1);
  const m = res.memories[0];
  assert.equal(m.kind, "core");
  assert.equal(m.id, 0);
  assert.ok(m.unit && m.unit.id > 0);
  assert.deepEqual(await c.feedback([m.unit.id], true, { recallId: res.recall_id, agent }), { judged: 1, signal: 1 });
  assert.deepEqual(await c.feedback([a], false, { agent }), { judged: 1, signal: -1 });
  await rejects(c.feedback([424242], true, { recallId: res.recall_id, agent }), InvalidInput, (e) => assert.equal(e.field, "feedback.ids[0]"));
  await rejects(c.feedback([a], true, { recallId: 99999999, agent }), NotFound);
  await rejects(c.consolidate({}), InvalidInput, (e) => assert.equal(e.field, "consolidate.agent"));
});

test("recall filters and modes", { skip }, async (t) => {
  const c = client();
  const agent = agentName(t.name);
  const t0 = Date.UTC(2026, 2, 1);
  const day = 86400000;
  await c.appendBatch([
    { agent, session: "a", role: "user", text: "deploy the cache on monday", time: new Date(t0), meta: { env: "prod" } },
    { agent, session: "b", role: "user", text: "deploy the cache on tuesday", time: new Date(t0 + day), meta: { env: "dev" } },
    { agent, session: "b", role: "bot", text: "deploy the cache on wednesday", time: new Date(t0 + 2 * day), meta: { env: "prod" } },
  ]);
  let res = await c.recall("deploy cache", { agent, mode: "sparse", where: { env: "prod" }, roles: ["user"] });
  assert.deepEqual(res.memories.map((m) => m.text), ["deploy the cache on monday"]);
  assert.equal(res.memories[0].dense, 0);
  res = await c.recall({ text: "deploy cache", agent, since: new Date(t0 + day / 2), until: new Date(t0 + 2 * day), parse_time: false, fusion: "rrf" });
  assert.deepEqual(res.memories.map((m) => m.text), ["deploy the cache on tuesday"]);
  assert.equal(Date.parse(res.stats.since), t0 + day / 2);
  res = await c.recall("deploy cache", { agent, not: { env: "prod" }, mode: "dense", recency_half_life: "72h", synonyms: { deploy: ["ship"] } });
  assert.deepEqual(res.memories.map((m) => m.session), ["b"]);
  res = await c.recall("deploy cache", { agent, recency_half_life: "off", no_expansion: true, feedback_docs: 2, fallback_scan: -1, max_dense_scan: 1000 });
  assert.ok(res.memories.length > 0);
  assert.deepEqual((await c.recall("deploy cache", { agent: agent + "-other" })).memories, []);
});

test("invalid queries name the field", { skip }, async (t) => {
  const c = client();
  const agent = agentName(t.name);
  for (const [q, field] of [[{ k: -1 }, "query.k"], [{ mode: "eager" }, "query.mode"], [{ fusion: "max" }, "query.fusion"], [{ recency_half_life: "soon" }, "query.recency_half_life"], [{ feedback_docs: 51 }, "query.feedback_docs"]]) {
    await rejects(c.recall("x", { agent, ...q }), InvalidInput, (e) => {
      assert.equal(e.status, 400);
      assert.equal(e.field, field);
    });
  }
  await rejects(c.recall("x", {}), InvalidInput, (e) => assert.match(e.field ?? "", /agent/));
});

test("bad arguments are refused before sending", { skip }, async () => {
  const c = client();
  await assert.rejects(c.get(0), RangeError);
  await assert.rejects(c.append({ agent: "a", text: "x", time: new Date(NaN) }), /record\.time/);
  await assert.rejects(c.appendBatch([{ agent: "a", text: "x", time: new Date(NaN) }]), /records\[0\]\.time/);
});

test("404, 413, 405", { skip }, async (t) => {
  const c = client();
  await rejects(c.get(1e12), NotFound, (e) => assert.equal(e.code, "not_found"));
  await rejects(c.append("x".repeat(MAX_BODY + 1), { agent: agentName(t.name) }), TooLarge, (e) => {
    assert.equal(e.status, 413);
    assert.equal(e.code, "too_large");
  });
  const agent = agentName(t.name);
  const before = (await c.stats()).log.next_id;
  const batch = (n) => Array.from({ length: n }, (_, i) => ({ agent, text: `r${i}` }));
  await rejects(c.appendBatch(batch(MAX_BATCH + 1)), TooLarge, (e) => assert.deepEqual([e.code, e.field], ["too_large", "records"]));
  assert.equal((await c.stats()).log.next_id, before);
  assert.equal((await c.appendBatch(batch(MAX_BATCH))).length, MAX_BATCH);
  const agents = Array.from({ length: MAX_AGENTS }, (_, i) => `a${i}`);
  await rejects(c.recall("x", { agent, agents }), TooLarge, (e) => assert.deepEqual([e.code, e.field], ["too_large", "query.agents"]));
  const r = await fetch(d.url + "/v1/records", { method: "DELETE", headers: { Authorization: `Bearer ${d.token}` } });
  assert.equal(r.status, 405);
  const { errorFor } = await import("../dist/index.js");
  const e = errorFor(r.status, await r.json());
  assert.ok(e instanceof MethodNotAllowed);
  assert.equal(e.code, "method_not_allowed");
});

test("401 without the token; the probes need none", { skip }, async (t) => {
  for (const token of [undefined, "wrong"]) {
    await rejects(new Client(d.url, { token }).recall("x", { agent: agentName(t.name) }), Unauthorized, (e) => {
      assert.equal(e.status, 401);
      assert.equal(e.code, "unauthorized");
    });
  }
  assert.equal(await new Client(d.url).ready(), true);
});

test("403 for a browser origin", { skip }, async (t) => {
  const c = new Client(d.url, { token: d.token, headers: { Origin: "http://evil.example" } });
  await rejects(c.append("x", { agent: agentName(t.name) }), Forbidden, (e) => {
    assert.equal(e.status, 403);
    assert.match(e.code, /^forbidden_/);
  });
});

test("stats", { skip }, async (t) => {
  const c = client();
  await c.append("counted", { agent: agentName(t.name) });
  const st = await c.stats();
  assert.ok(st.scope === "store" && st.appended >= 1 && st.log.next_id >= 2 && typeof st.index.docs === "number" && typeof st.cache.embedder === "string");
});

test("probes", { skip }, async (t) => {
  const anon = new Client(d.url); // the probes need no token
  for (const c of [client(), anon]) {
    assert.equal(await c.live(), true);
    assert.equal(await c.ready(), true);
    assert.equal(await c.health(), true);
  }
  await anon.waitReady(5000);
});

test("no daemon: ConnectionFailed", async () => {
  const port = await new Promise((res) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => res(p)); });
  });
  await rejects(new Client(`http://127.0.0.1:${port}`, { timeoutMs: 2000 }).health(), ConnectionFailed, (e) => assert.equal(e.status, 0));
});

test("unicode round trip", { skip }, async (t) => {
  const c = client();
  const agent = agentName(t.name);
  const id = await c.append("昨天我们决定把连接池设为20 🚀", { agent, role: "用户" });
  assert.equal((await c.get(id)).text, "昨天我们决定把连接池设为20 🚀");
  const res = await c.recall("连接池", { agent, mode: "sparse", parse_time: false });
  assert.deepEqual(res.memories.map((m) => m.id), [id]);
});

test("formatContext: oldest first within the budget", { skip }, async (t) => {
  const c = client();
  const agent = agentName(t.name);
  const t0 = Date.UTC(2026, 1, 1, 9, 0);
  await c.appendBatch([
    { agent, role: "user", text: "the pool should be 20", time: new Date(t0 + 5 * 60000) },
    { agent, role: "assistant", text: "pool set to 20", time: new Date(t0) },
  ]);
  const res = await c.recall("pool", { agent, mode: "sparse" });
  assert.deepEqual(formatContext(res.memories).split("\n"), [
    "[2026-02-01 09:00] assistant: pool set to 20",
    "[2026-02-01 09:05] user: the pool should be 20",
  ]);
  assert.equal(formatContext(res.memories, 45).split("\n").length, 1);
});

test("a real 503 busy is retried", { skip }, async () => {
  // A stalled request holds the daemon's --max-decode-bytes budget; the
  // client's append is refused with Retry-After, and its retry, once the
  // stalled request is finished, succeeds.
  const budget = 65536; // --max-body and --max-decode-bytes: one body fills it
  const dm = await startDaemon(["--max-body", String(budget), "--max-decode-bytes", String(budget)]);
  try {
    const { hostname, port } = new URL(dm.url);
    const stalled = Buffer.from(JSON.stringify({ agent: "stall", text: "s".repeat(budget - 200) })); // leaves < 200 bytes
    const head = `POST /v1/records HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${dm.token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${stalled.length}\r\nConnection: close\r\n\r\n`;
    const probe = new Client(dm.url, { token: dm.token, retries: 0 });
    // Sends the headers and the start of the body; resolves once the daemon
    // holds the budget (a harmless recall of the client's size is refused),
    // or to undefined when the daemon refused the stalled request itself (a
    // probe held part of the budget at that moment).
    const stall = async () => {
      const s = net.connect(Number(port), hostname);
      await new Promise((res, rej) => { s.once("connect", res); s.once("error", rej); });
      const conn = { sock: s, reply: "" };
      s.on("data", (b) => { conn.reply += b; });
      conn.ended = new Promise((res) => s.on("end", res));
      s.write(head);
      s.write(stalled.subarray(0, 100)); // the daemon reserves the announced length
      for (;;) {
        const e = await probe.recall("y".repeat(300), { agent: "busy-test" }).then(() => undefined, (e) => e);
        if (e !== undefined) {
          assert.ok(e instanceof Busy && e.code === "busy", String(e));
          return conn;
        }
        if (conn.reply !== "") { // the stalled request got its reply: a 503
          s.destroy();
          return undefined;
        }
        await new Promise((res) => setTimeout(res, 10));
      }
    };
    let conn;
    for (const deadline = Date.now() + 30000; (conn = await stall()) === undefined; ) {
      assert.ok(Date.now() < deadline, "the stalled request never held the budget");
    }
    const { sock } = conn;
    const waits = [];
    const sleep = async (ms) => {
      waits.push(ms);
      if (waits.length === 1) {
        sock.write(stalled.subarray(100));
        await conn.ended;
        assert.match(conn.reply, /^HTTP\/1\.1 200/);
      }
    };
    const c = new Client(dm.url, { token: dm.token, retries: 3, sleep });
    const id = await c.append("x".repeat(300), { agent: "busy-test" });
    assert.deepEqual(waits, [1000]); // the daemon's Retry-After
    assert.equal((await c.get(id)).text, "x".repeat(300));
    sock.destroy();
  } finally {
    await dm.stop();
  }
});
