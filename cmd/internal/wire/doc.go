// Package wire is the JSON form of lazymem's records, queries and results:
// what `lazymem ingest` reads, what `lazymem recall --json` prints, and what
// the lazymemd HTTP API takes and returns. One package, so that a record
// line of an ingest file and the body of POST /v1/records are the same
// thing, and the CLI and the daemon print the same result.
//
// Record (one JSONL line, or one element of {"records": [...]}):
//
//	{"time": "2026-05-01T14:03:00Z",   RFC 3339; absent: now
//	 "agent": "a1", "session": "s1", "role": "user",
//	 "text": "...",                    required (may be "" only to be rejected by the engine)
//	 "meta": {"k": "v", "tags": ["x", "y"]}}
//
// Query (the body of POST /v1/recall): see Query; every field but agent is
// optional and takes the engine's default.
//
// Result: {"memories": [{"id", "time", "agent", "session", "role", "text",
// "meta", "score", "sparse", "dense", "reasons"?}], "stats": {...}}.
//
// Decoding is strict: unknown fields, a second JSON value, invalid UTF-8
// and wrong types are errors of type *Error naming the field. What the
// engine checks itself (required agent, sizes, K range, since < until) is
// left to the engine, whose *engine.FieldError names the field too.
package wire
