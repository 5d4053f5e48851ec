// Package httpretry holds the retry primitives of the engine's clients of
// OpenAI-compatible HTTP endpoints (the embedder in engine/embed and the LLM
// consolidator in engine/consolidate): a jittered exponential backoff, a
// marker for the attempt errors worth retrying, a sleep that ends with its
// context, and the reading of a server's Retry-After. One home, so the two
// clients cannot drift apart.
package httpretry
