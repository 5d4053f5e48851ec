// lazymem: TypeScript client of lazymemd, the lazymem long-term memory
// daemon. Zero runtime dependencies: global fetch, Node 20 or later.

export { Client, DEFAULT_URL, formatContext, parseRetryAfter } from "./client.js";
export type { ClientOptions, NewRecord, RecallQuery } from "./client.js";
export {
  Busy,
  ConnectionFailed,
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
  errorFor,
} from "./errors.js";
export type { LazymemErrorInit } from "./errors.js";
export type * from "./types.js";
