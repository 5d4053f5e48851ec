// The JSON the daemon takes and returns, one type per schema of
// docs/openapi.yaml (components.schemas), with the same names and the
// same snake_case keys. `npm run check-types` compares the two.
// Times are RFC 3339 strings, as on the wire (nanoseconds kept).

/** A probe's reply: "ok"; with a 503 from /v1/ready or /v1/health, "opening", "closing" or "stopped" (then error names the storage engine's report; restart the process). */
export interface Status {
  status: "ok" | "opening" | "closing" | "stopped";
  error?: string;
}

/** Every error reply's body (schema Error). */
export interface ErrorBody {
  error: ErrorDetail;
}

export interface ErrorDetail {
  /** Machine-readable cause: invalid, too_large, busy, ... (new codes may appear). */
  code: string;
  /** The input at fault: "records[3].agent", "query.k", "id". */
  field?: string;
  message: string;
}

/** Metadata labels: a key to a string or an array of strings. */
export type Meta = Record<string, string | string[]>;

/** Metadata as stored: a key to its values; {} when the record has none (never null). */
export type StoredMeta = Record<string, string[]>;

/** One record to append. agent and a non-blank text are required. */
export interface RecordInput {
  /** RFC 3339; absent: the daemon's clock. */
  time?: string;
  agent: string;
  session?: string;
  role?: string;
  text: string;
  meta?: Meta;
}

export interface RecordBatch {
  records: RecordInput[];
}

export interface AppendResult {
  ids: number[];
  /** Cluster mode only (docs/CLUSTER.md): the stream sequence to pass as ?min_seq= for read-your-writes. */
  seq?: number;
}

/** A record read back (GET /v1/records/{id}). */
export interface StoredRecord {
  id: number;
  time: string;
  agent: string;
  session: string;
  role: string;
  text: string;
  meta: StoredMeta;
}

/** A recalled record with its scores. */
export interface Memory {
  id: number;
  time: string;
  agent: string;
  session: string;
  role: string;
  text: string;
  meta: StoredMeta;
  /** The fused score. */
  score: number;
  /** The BM25 score; 0 if the record was not a BM25 hit. */
  sparse: number;
  /** Cosine of query and constructed text; 0 in sparse mode. */
  dense: number;
  /** "raw" for a logged record, "core" for a unit of core memory (then id is 0 and unit is set). */
  kind: "raw" | "core";
  /** The unit, for a core memory; feedback names it by unit.id. */
  unit?: Unit;
  /** Why it scored, when the query set explain. */
  reasons?: string[];
}

/** A task an action-item unit assigns; due only when one was said. */
export interface ActionItem {
  owner: string;
  task: string;
  due?: string;
}

/** A unit of core memory, consolidated from the raw records it cites. Lists are [] when empty, never null. */
export interface Unit {
  id: number;
  type: "decision" | "action_item" | "preference" | "outcome" | "fact";
  topic: string;
  content: string;
  action_items: ActionItem[];
  participants: string[];
  source_ids: number[];
  time: string;
  confidence: number;
  supersedes: number[];
  /** The unit that replaced it; 0 while live. */
  superseded_by: number;
  agent: string;
}

/** The body of POST /v1/feedback. */
export interface Feedback {
  agent?: string;
  /** The recall's recall_id; 0 or absent: ids are record ids. */
  recall_id?: number;
  ids: number[];
  /** +1 useful, -1 not useful. */
  signal: 1 | -1;
}

/** The reply of POST /v1/feedback. */
export interface FeedbackResult {
  judged: number;
  signal: 1 | -1;
  /** Cluster mode only (docs/CLUSTER.md): the stream sequence of the feedback message. */
  seq?: number;
}

/** The body of POST /v1/consolidate. */
export interface ConsolidateRequest {
  agent?: string;
  /** Only this session's queued records (the end-of-session trigger). */
  session?: string;
  /** Records to consolidate whatever their value. */
  ids?: number[];
}

/** The reply of POST /v1/consolidate. */
export interface ConsolidateReport {
  labelled: number;
  selected: number;
  units: Unit[];
  superseded: number[];
  duration_us: number;
}

/** The reply of GET /v1/core. */
export interface CoreUnits {
  agent: string;
  units: Unit[];
}

export type Mode = "lazy" | "sparse" | "dense";

export type Fusion = "weighted" | "rrf";

/** The body of POST /v1/recall. agent or agents is required. */
export interface Query {
  text?: string;
  agent?: string;
  /** all (default, or ""), core or raw. */
  tier?: "" | "all" | "core" | "raw";
  agents?: string[];
  sessions?: string[];
  roles?: string[];
  since?: string;
  until?: string;
  where?: Meta;
  not?: Meta;
  k?: number;
  candidates?: number;
  current_session?: string;
  session_turns?: number;
  mode?: Mode;
  fusion?: Fusion;
  dense_weight?: number;
  speaker_boost?: number;
  /** A Go duration such as "72h", or "off"; absent: 14 days. */
  recency_half_life?: string;
  recency_weight?: number;
  now?: string;
  /** On unless false. */
  parse_time?: boolean;
  synonyms?: Record<string, string[]>;
  explain?: boolean;
  /** Latest filtered records ranked when BM25 finds fewer than k/2; 0: 64; negative: none. */
  fallback_scan?: number;
  /** Turns off the built-in lexicon's query expansion. */
  no_expansion?: boolean;
  /** Pseudo-relevance feedback from the top N BM25 hits (0..50); 0: off. */
  feedback_docs?: number;
  /** Dense mode: refuse (413) rather than embed more records; lowers the daemon's --max-dense-scan. */
  max_dense_scan?: number;
}

/** Time per recall stage, microseconds. */
export interface StageMicros {
  filter: number;
  broad: number;
  fetch: number;
  embed: number;
  score: number;
  total: number;
}

/** Every field of the engine's RecallStats; since and until only when the window is bounded. */
export interface RecallStats {
  mode: Mode;
  text: string;
  dense_text: string;
  time_expr: string;
  since?: string;
  until?: string;
  speakers: string[];
  expansion: string;
  notes: string[];
  filtered: number;
  bm25_hits: number;
  session_turns: number;
  fallback: number;
  speaker_records: number;
  neighbours: number;
  candidates: number;
  embedded: number;
  cache_hits: number;
  disk_hits: number;
  shared: number;
  stage_us: StageMicros;
}

export interface RecallResult {
  memories: Memory[];
  /** Names this recall to feedback(). */
  recall_id: number;
  stats: RecallStats;
}

export interface LogMetrics {
  /** Record ids assigned: next_id - 1. */
  records: number;
  next_id: number;
  appended: number;
  groups: number;
  tail_records: number;
  segments: number;
  sealed_records: number;
  raw_bytes: number;
  segment_bytes: number;
  tail_bytes: number;
  disk_bytes: number;
  tombstones: number;
  deleted: number;
  dropped_records: number;
  cache_hits: number;
  cache_misses: number;
  cache_bytes: number;
  corruptions: number;
  pebble_corruptions: number;
  /** Writes are refused now (a full disk); write_error says why. */
  read_only: boolean;
  write_error?: string;
  reopens: number;
  /** Log segments sealed by appends since open because the background sealer fell behind. */
  seal_assists: number;
  /** Appends since open that gave up waiting for the sealers' lock after 20 ms (the tail stayed over its bound). */
  assist_timeouts: number;
}

export interface IndexMetrics {
  docs: number;
  deleted: number;
  segments: number;
  mem_docs: number;
  segment_bytes: number;
  flushes: number;
  merges: number;
  merge_errors: number;
  flush_errors: number;
  rebuilt: number;
  dropped: number;
  late_docs: number;
  /** Records indexed again since the index was last built (their session predecessor was forgotten). */
  amended: number;
  terms: number;
  /** The segments the open dropped and rebuilt from the log, described. */
  repairs: string[];
  context_errors: number;
  /** Bytes the index keeps of searched filters (an agent's records per sealed segment). */
  filter_cache_bytes: number;
  filter_cache_entries: number;
}

export interface CacheMetrics {
  embedder: string;
  mem_hits: number;
  disk_hits: number;
  computed: number;
  shared: number;
  embed_calls: number;
  mem_bytes: number;
  mem_evicted: number;
  mem_dropped: number;
  /** Why the open emptied the cache's disk tier; absent normally. */
  disk_reset?: string;
  /** Vectors kept in memory only because the disk tier took no writes. */
  disk_skipped: number;
  /** The full disk that stopped the disk tier's writes; absent normally. */
  disk_error?: string;
  /** Times the disk tier was opened again after a full disk. */
  disk_reopens: number;
}

export interface RetentionMetrics {
  passes: number;
  expired: number;
  dropped_records: number;
  pinned: number;
}

/** POST /v1/forget: what to forget. */
export interface Selector {
  agent?: string;
  ids?: number[];
  sessions?: string[];
  roles?: string[];
  where?: Record<string, string[]>;
  since?: string;
  until?: string;
}

/** The reply of POST /v1/forget. */
export interface ForgetResult {
  forgotten: number;
  ranges: number[][];
  reindexed: number;
}

/** GET /v1/stats for an admin key or a daemon without keys (snake case). */
export interface Metrics {
  scope: "store";
  appended: number;
  recalls: number;
  index_errors: number;
  background_errors: number;
  /** Where a corrupt index was moved; absent normally. */
  index_repaired?: string;
  /** The store's format version. */
  store_format: number;
  forgotten: number;
  compactions: number;
  retention: RetentionMetrics;
  log: LogMetrics;
  index: IndexMetrics;
  cache: CacheMetrics;
  working_memory: WorkingMemoryMetrics;
}

/** The background embedding of a live conversation's latest turns. */
export interface WorkingMemoryMetrics {
  queued: number;
  dropped: number;
  embedded: number;
  cached: number;
  skipped: number;
  pending: number;
}

/** GET /v1/stats for a key limited to some agents. */
export interface AgentStats {
  scope: "agents";
  agents: AgentCount[];
  /** The key's quota per agent, when it has one. */
  quota?: Quota;
}

/** A key's quota per agent (--keys); 0 is unlimited. */
export interface Quota {
  records: number;
  bytes: number;
}

/** One agent of a key and its live records. */
export interface AgentCount {
  agent: string;
  records: number;
}

/** One JSON-RPC 2.0 message to POST /mcp. */
export interface RpcRequest {
  jsonrpc: "2.0";
  id?: string | number;
  method: string;
  params?: Record<string, unknown>;
}

export interface RpcError {
  code: -32700 | -32600 | -32601 | -32602;
  message: string;
}

export interface RpcResponse {
  jsonrpc: "2.0";
  id: string | number | null;
  result?: Record<string, unknown>;
  error?: RpcError;
}

/** The body of POST /v1/backup (admin only). */
export interface BackupRequest {
  /** An absolute directory path on the server that does not exist or is empty. */
  to: string;
}

/** The reply of POST /v1/backup. */
export interface BackupResult {
  to: string;
  /** How long the copy took. */
  seconds: number;
  /** Cluster mode only (docs/CLUSTER.md): the node that made the copies. */
  node?: string;
  /** Cluster mode only: each partition this node owns, copied to `to`/p<N>, with the stream sequence its copy holds. */
  partitions?: Record<string, number>;
}
