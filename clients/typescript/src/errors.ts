// One error class per HTTP status family. Every error reply of lazymemd
// has the body {"error": {"code", "field"?, "message"}}; the error carries
// those and the status. Branch on the class (the status) and, where it
// matters, on code: the daemon may add codes, not statuses with another
// meaning.

export interface LazymemErrorInit {
  status?: number;
  code?: string;
  field?: string | undefined;
  retryAfter?: number | undefined;
  cause?: unknown;
}

/** Base of every error the client throws. status is 0 when no reply arrived. */
export class LazymemError extends Error {
  /** The HTTP status; 0 when no reply arrived. */
  readonly status: number;
  /** The daemon's machine-readable cause: "invalid", "busy", ... ("" when none). */
  readonly code: string;
  /** The input at fault ("records[3].agent", "query.k"), if one is. */
  readonly field: string | undefined;
  /** Retry-After in seconds, when the reply had one. */
  readonly retryAfter: number | undefined;

  constructor(message: string, init: LazymemErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.status = init.status ?? 0;
    this.code = init.code ?? "";
    this.field = init.field;
    this.retryAfter = init.retryAfter;
  }

  override toString(): string {
    const head = this.status ? `lazymem: ${this.status} ${this.code}` : "lazymem";
    // The daemon's messages start "lazymem: " themselves: said once.
    const msg = this.message.startsWith("lazymem: ") ? this.message.slice("lazymem: ".length) : this.message;
    return `${head}: ${msg}`;
  }
}

/** No HTTP reply: nothing listening, the connection broke, or the timeout passed. */
export class ConnectionFailed extends LazymemError {}
/** 400: malformed JSON, a wrong type, an unknown field, or a value the engine rejects; field names it. */
export class InvalidInput extends LazymemError {}
/** 401: the daemon has a token and the request lacked it or carried another. */
export class Unauthorized extends LazymemError {}
/** 403: the key lacks the scope or the agent (forbidden), a browser Origin (forbidden_origin) or a Host (forbidden_host) not allowed, or a quota (QuotaExceeded). */
export class Forbidden extends LazymemError {}
/** 403 quota: the append would pass the quota of the key's agent; nothing was written. Forget records (or have the quota raised): retrying unchanged fails again. */
export class QuotaExceeded extends Forbidden {}
/** 404: an unknown path, a record id never assigned, another tenant's or a forgotten record. */
export class NotFound extends LazymemError {}
/** 405: a known path with another method. */
export class MethodNotAllowed extends LazymemError {}
/** 413: a body, batch, synonym table or agent list over a limit: split it, do not retry it. */
export class TooLarge extends LazymemError {}
/** 415: a body that is not application/json. */
export class UnsupportedMediaType extends LazymemError {}
/** 500 (internal) or 502 (the embedder failed). */
export class ServerError extends LazymemError {}
/** 503: busy or starting (retry after Retry-After), timeout, closed or canceled; from a probe, code is its status ("opening", "closing", "stopped"). */
export class Busy extends LazymemError {}
/** 507: the store's disk is full; nothing was written. */
export class DiskFull extends LazymemError {}

const byStatus: Record<number, typeof LazymemError> = {
  400: InvalidInput,
  401: Unauthorized,
  403: Forbidden,
  404: NotFound,
  405: MethodNotAllowed,
  413: TooLarge,
  415: UnsupportedMediaType,
  503: Busy,
  507: DiskFull,
};

/** The error for a reply: its status, its body (decoded JSON or raw text) and Retry-After. */
export function errorFor(status: number, body: unknown, retryAfter?: number): LazymemError {
  let code = "";
  let field: string | undefined;
  let message = "";
  const detail = typeof body === "object" && body !== null ? (body as { error?: unknown }).error : undefined;
  if (typeof detail === "object" && detail !== null) {
    const d = detail as { code?: unknown; field?: unknown; message?: unknown };
    code = typeof d.code === "string" ? d.code : "";
    field = typeof d.field === "string" && d.field !== "" ? d.field : undefined;
    message = typeof d.message === "string" ? d.message : "";
  } else if (typeof body === "object" && body !== null && typeof (body as { status?: unknown }).status === "string") {
    // A probe's 503: {"status": "opening"}, {"status": "closing"} or
    // {"status": "stopped", "error": "..."} (the storage engine stopped).
    const b = body as { status: string; error?: unknown };
    code = b.status;
    message = typeof b.error === "string" && b.error !== "" ? b.error : `the store is ${code}`;
  } else if (typeof body === "string") {
    message = body.trim();
  }
  if (message === "") message = `HTTP ${status}`;
  const cls = status === 403 && code === "quota" ? QuotaExceeded : (byStatus[status] ?? (status >= 500 ? ServerError : LazymemError));
  return new cls(message, { status, code, field, retryAfter });
}
