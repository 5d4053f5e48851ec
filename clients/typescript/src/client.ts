// The HTTP client of lazymemd: global fetch (Node 20+), no dependencies.

import { Busy, ConnectionFailed, LazymemError, errorFor } from "./errors.js";
import type {
  AgentStats,
  AppendResult,
  ConsolidateReport,
  CoreUnits,
  FeedbackResult,
  Memory,
  Meta,
  Metrics,
  Query,
  RecallResult,
  RecordInput,
  Status,
  StoredRecord,
  Unit,
} from "./types.js";

export const DEFAULT_URL = "http://127.0.0.1:7373";

/** A record to append: RecordInput, with time also as a Date. */
export interface NewRecord extends Omit<RecordInput, "time"> {
  time?: Date | string;
}

/** A query for recall(): Query, with times also as Dates. */
export interface RecallQuery extends Omit<Query, "since" | "until" | "now"> {
  since?: Date | string;
  until?: Date | string;
  now?: Date | string;
}

export interface ClientOptions {
  /** The bearer token of a daemon started with --token-file. */
  token?: string;
  /** Milliseconds per HTTP attempt (default 30000). */
  timeoutMs?: number;
  /** How many times a 503 is retried (default 3; 0: never). */
  retries?: number;
  /** First wait when a 503 has no Retry-After, doubled per attempt with jitter (default 100 ms). */
  backoffMs?: number;
  /** Bound of one wait, Retry-After included (default 10000 ms). */
  maxWaitMs?: number;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  /** The fetch to use (default the global one). */
  fetch?: typeof fetch;
  /** How to wait between attempts (default setTimeout). */
  sleep?: (ms: number) => Promise<void>;
}

// 503 codes after which nothing was done, so any request may be sent again
// unchanged. After other 503s (timeout, closed, canceled) an append may
// already be written, so only requests that change nothing are retried.
const retryAny = new Set(["busy", "starting"]);

// How many agents' last append sequences a client keeps (cluster mode).
const seqAgents = 10000;

/**
 * A client of one lazymemd daemon.
 *
 *     const mem = new Client("http://127.0.0.1:7373");
 *     const id = await mem.append("Set the pool to 20.", { agent: "bot", role: "user" });
 *     const res = await mem.recall("what pool size?", { agent: "bot" });
 *
 * Against a cluster (lazymemd --cluster, docs/CLUSTER.md) an append's
 * reply carries the stream sequence that stored it; the client keeps the
 * last one of each agent and sends it as ?min_seq= with that agent's
 * recalls, feedback, consolidations and core reads (the highest of all
 * with a get, or a call naming no agent), so it reads its own appends
 * through any node. A standalone daemon answers no sequence: nothing is
 * added.
 */
export class Client {
  readonly baseUrl: string;
  readonly token: string | undefined;
  readonly timeoutMs: number;
  readonly retries: number;
  readonly backoffMs: number;
  readonly maxWaitMs: number;
  readonly headers: Record<string, string>;
  readonly #fetch: typeof fetch;
  readonly #sleep: (ms: number) => Promise<void>;
  /** Each agent's last append sequence (cluster mode), oldest first. */
  readonly #seqs = new Map<string, number>();
  /** The highest of all. */
  #seq = 0;

  constructor(baseUrl: string = DEFAULT_URL, opts: ClientOptions = {}) {
    let u: URL;
    try {
      u = new URL(baseUrl);
    } catch {
      throw new TypeError(`baseUrl: ${JSON.stringify(baseUrl)}, want http(s)://host:port`);
    }
    if (u.protocol !== "http:" && u.protocol !== "https:") {
      throw new TypeError(`baseUrl: ${JSON.stringify(baseUrl)}, want http(s)://host:port`);
    }
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.token = opts.token;
    this.timeoutMs = opts.timeoutMs ?? 30000;
    this.retries = opts.retries ?? 3;
    this.backoffMs = opts.backoffMs ?? 100;
    this.maxWaitMs = opts.maxWaitMs ?? 10000;
    if (!(this.timeoutMs > 0)) throw new RangeError(`timeoutMs: ${this.timeoutMs}, want > 0`);
    if (!Number.isInteger(this.retries) || this.retries < 0) throw new RangeError(`retries: ${this.retries}, want an integer >= 0`);
    if (!(this.backoffMs >= 0) || !(this.maxWaitMs >= 0)) throw new RangeError("backoffMs and maxWaitMs: want >= 0");
    this.headers = { ...(opts.headers ?? {}) };
    this.#fetch = opts.fetch ?? globalThis.fetch;
    this.#sleep = opts.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** Appends one record; resolves to its id once it is durable. */
  append(record: NewRecord): Promise<number>;
  /** Appends text with the other fields of the record (agent is required). */
  append(text: string, fields: Omit<NewRecord, "text">): Promise<number>;
  async append(recordOrText: NewRecord | string, fields?: Omit<NewRecord, "text">): Promise<number> {
    const rec = typeof recordOrText === "string" ? { ...fields, text: recordOrText } : recordOrText;
    if (typeof recordOrText !== "string" && fields !== undefined) {
      throw new TypeError("append: give a record, or a text and its fields, not both");
    }
    const body = wireRecord(rec as NewRecord, "record");
    const res = (await this.#call("POST", "/v1/records", body, false)) as AppendResult;
    this.#saw([String(body.agent ?? "")], res);
    return res.ids[0]!;
  }

  /**
   * Appends records as one durable write; resolves to their ids, in order.
   * One invalid record rejects the batch (InvalidInput, field like
   * "records[3].agent") and nothing is written.
   */
  async appendBatch(records: NewRecord[]): Promise<number[]> {
    if (records.length === 0) return [];
    const body = { records: records.map((r, i) => wireRecord(r, `records[${i}]`)) };
    const res = (await this.#call("POST", "/v1/records", body, false)) as AppendResult;
    // A batch's sequence is its last record's: an upper bound for each of
    // its agents, which the owner caps at its partition's last.
    this.#saw(body.records.map((r) => String(r.agent ?? "")), res);
    return res.ids;
  }

  /** Reads one stored record: NotFound for an id never assigned, another tenant's or a forgotten one. */
  async get(id: number): Promise<StoredRecord> {
    if (!Number.isSafeInteger(id) || id < 1) throw new RangeError(`id: ${id}, want a positive integer`);
    return (await this.#call("GET", this.#after(`/v1/records/${id}`, undefined), undefined, true)) as StoredRecord;
  }

  /**
   * Finds the memories that answer text, best first. query holds the rest
   * of the query (agent or agents required); absent fields take the
   * daemon's defaults; parse_time is on unless false.
   */
  recall(text: string, query: Omit<RecallQuery, "text">): Promise<RecallResult>;
  recall(query: RecallQuery): Promise<RecallResult>;
  async recall(textOrQuery: string | RecallQuery, rest?: Omit<RecallQuery, "text">): Promise<RecallResult> {
    const q: RecallQuery = typeof textOrQuery === "string" ? { ...rest, text: textOrQuery } : { ...textOrQuery };
    const body: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(q)) {
      if (v === undefined) continue;
      body[k] = k === "since" || k === "until" || k === "now" ? wireTime(v as Date | string, `query.${k}`) : v;
    }
    const named = q.agent !== undefined ? [q.agent] : q.agents;
    return (await this.#call("POST", this.#after("/v1/recall", named), body, true)) as RecallResult;
  }

  /**
   * Judges memories a recall returned: useful (+1) or not (-1). Pass the
   * recall's recall_id and ids it returned (a record's id, or a core
   * memory's unit.id); without recallId the ids are record ids. agent may
   * be left out for a key of one agent. Not retried: feedback counts.
   */
  async feedback(ids: number[], useful: boolean, opts: { recallId?: number; agent?: string } = {}): Promise<FeedbackResult> {
    const body: Record<string, unknown> = { ids, signal: useful ? 1 : -1 };
    if (opts.recallId !== undefined) body.recall_id = opts.recallId;
    if (opts.agent !== undefined) body.agent = opts.agent;
    const path = this.#after("/v1/feedback", opts.agent === undefined ? undefined : [opts.agent]);
    return (await this.#call("POST", path, body, false)) as FeedbackResult;
  }

  /**
   * Turns the agent's queued records (of one session, when named; plus
   * ids, whatever their value) into units of core memory, and reports them.
   */
  async consolidate(opts: { agent?: string; session?: string; ids?: number[] } = {}): Promise<ConsolidateReport> {
    const body: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(opts)) if (v !== undefined) body[k] = v;
    const path = this.#after("/v1/consolidate", opts.agent === undefined ? undefined : [opts.agent]);
    return (await this.#call("POST", path, body, false)) as ConsolidateReport;
  }

  /** The agent's core memory: its live units, or with history also the superseded ones. */
  async core(opts: { agent?: string; history?: boolean } = {}): Promise<Unit[]> {
    const q = new URLSearchParams();
    if (opts.agent !== undefined) q.set("agent", opts.agent);
    if (opts.history) q.set("history", "true");
    const qs = q.toString();
    const path = this.#after("/v1/core" + (qs ? "?" + qs : ""), opts.agent === undefined ? undefined : [opts.agent]);
    return ((await this.#call("GET", path, undefined, true)) as CoreUnits).units;
  }

  /** The store's metrics. */
  async stats(): Promise<Metrics | AgentStats> {
    return (await this.#call("GET", "/v1/stats", undefined, true)) as Metrics | AgentStats;
  }

  /** True when the process answers its liveness probe (GET /v1/live), which it does while the store opens too. */
  async live(): Promise<boolean> {
    return ((await this.#call("GET", "/v1/live", undefined, true)) as Status).status === "ok";
  }

  /** True when the store is open (GET /v1/ready answers 200), false while it opens or closes (503; not retried). */
  async ready(): Promise<boolean> {
    return this.#probe("/v1/ready");
  }

  /** GET /v1/health, the same as ready() (kept for older supervisors). */
  async health(): Promise<boolean> {
    return this.#probe("/v1/health");
  }

  async #probe(path: string): Promise<boolean> {
    try {
      return ((await this.#call("GET", path, undefined, true, 0)) as Status).status === "ok";
    } catch (e) {
      if (e instanceof Busy) return false;
      throw e;
    }
  }

  /** Polls ready() until it is true; throws the last failure after timeoutMs. */
  async waitReady(timeoutMs = 30000, intervalMs = 100): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      let err: LazymemError;
      try {
        if (await this.ready()) return;
        err = new Busy("the store is not open yet", { status: 503, code: "opening" });
      } catch (e) {
        if (!(e instanceof ConnectionFailed)) throw e;
        err = e;
      }
      if (Date.now() >= deadline) throw err;
      await this.#sleep(intervalMs);
    }
  }

  /** Keeps an append reply's sequence (cluster mode) for its agents. */
  #saw(agents: string[], res: AppendResult): void {
    const seq = res.seq;
    if (typeof seq !== "number" || !Number.isSafeInteger(seq) || seq <= 0) return;
    this.#seq = Math.max(this.#seq, seq);
    for (const a of agents) {
      const had = this.#seqs.get(a) ?? 0;
      this.#seqs.delete(a); // re-inserted last: the map's order is the agents' last use
      this.#seqs.set(a, Math.max(had, seq));
    }
    for (const a of this.#seqs.keys()) {
      if (this.#seqs.size <= seqAgents) break;
      this.#seqs.delete(a);
    }
  }

  /**
   * path with ?min_seq= of the agents' last appends through this client
   * (all of them when agents is undefined); path itself when there is
   * none (a standalone daemon).
   */
  #after(path: string, agents: string[] | undefined): string {
    const seq = agents === undefined ? this.#seq : Math.max(0, ...agents.map((a) => this.#seqs.get(a) ?? 0));
    if (seq === 0) return path;
    return path + (path.includes("?") ? "&" : "?") + "min_seq=" + seq;
  }

  async #call(method: string, path: string, body: unknown, idempotent: boolean, retries = this.retries): Promise<unknown> {
    const headers: Record<string, string> = { Accept: "application/json", ...this.headers };
    let data: string | undefined;
    if (body !== undefined) {
      data = JSON.stringify(body);
      headers["Content-Type"] = "application/json";
    }
    if (this.token) headers["Authorization"] = `Bearer ${this.token}`;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#once(method, path, data, headers);
      } catch (e) {
        if (!(e instanceof Busy) || attempt >= retries || !(idempotent || retryAny.has(e.code))) throw e;
        await this.#sleep(this.#wait(attempt, e.retryAfter));
      }
    }
  }

  #wait(attempt: number, retryAfter: number | undefined): number {
    if (retryAfter !== undefined) return Math.min(Math.max(retryAfter * 1000, 0), this.maxWaitMs);
    const wait = this.backoffMs * 2 ** attempt;
    return Math.min(wait * (0.5 + Math.random() / 2), this.maxWaitMs);
  }

  async #once(method: string, path: string, data: string | undefined, headers: Record<string, string>): Promise<unknown> {
    let resp: Response;
    let text: string;
    try {
      const init: RequestInit = { method, headers, signal: AbortSignal.timeout(this.timeoutMs) };
      if (data !== undefined) init.body = data;
      resp = await this.#fetch(this.baseUrl + path, init);
      text = await resp.text();
    } catch (e) {
      const cause = (e as { cause?: { message?: string } }).cause;
      const why = cause?.message ?? (e as Error).message ?? String(e);
      throw new ConnectionFailed(`${method} ${this.baseUrl}${path}: ${why}`, { cause: e });
    }
    let json: unknown = text;
    try {
      json = text === "" ? {} : JSON.parse(text);
    } catch {
      if (resp.ok) throw new LazymemError(`${method} ${path}: the reply is not JSON`, { status: resp.status });
    }
    if (!resp.ok) throw errorFor(resp.status, json, parseRetryAfter(resp.headers.get("Retry-After")));
    return json;
  }
}

/** Retry-After in seconds: a number of seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(v: string | null | undefined, now: number = Date.now()): number | undefined {
  if (v == null || v.trim() === "") return undefined;
  const s = v.trim();
  if (/^-?\d+(\.\d+)?$/.test(s)) return Math.max(Number(s), 0);
  const t = Date.parse(s);
  if (Number.isNaN(t)) return undefined;
  return Math.max((t - now) / 1000, 0);
}

function wireTime(t: Date | string, name: string): string {
  if (typeof t === "string") return t;
  if (!(t instanceof Date) || Number.isNaN(t.getTime())) throw new TypeError(`${name}: want a valid Date or an RFC 3339 string`);
  return t.toISOString();
}

function wireRecord(r: NewRecord, name: string): RecordInput {
  if (typeof r !== "object" || r === null) throw new TypeError(`${name}: want a record object`);
  const out: RecordInput = { agent: r.agent, text: r.text };
  if (r.session) out.session = r.session;
  if (r.role) out.role = r.role;
  if (r.time !== undefined) out.time = wireTime(r.time, `${name}.time`);
  if (r.meta !== undefined && Object.keys(r.meta).length > 0) out.meta = r.meta as Meta;
  return out;
}

/**
 * The memories as a prompt block: oldest first, one line each
 * ("[2026-05-01 14:03] user: text"), the best ones kept within budget
 * characters.
 */
export function formatContext(memories: Memory[], budget = 4000): string {
  const line = (m: Memory) => {
    const utc = new Date(m.time).toISOString(); // the daemon may write another offset
    return `[${utc.slice(0, 10)} ${utc.slice(11, 16)}] ${m.role || m.agent}: ${m.text}`;
  };
  const kept: Memory[] = [];
  let used = 0;
  for (const m of memories) {
    const n = line(m).length + 1;
    if (used + n > budget) continue;
    kept.push(m);
    used += n;
  }
  kept.sort((a, b) => Date.parse(a.time) - Date.parse(b.time) || a.id - b.id);
  return kept.map(line).join("\n");
}
