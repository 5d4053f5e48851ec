// Package httpretry holds the retry primitives of the engine's clients of
// OpenAI-compatible HTTP endpoints (the embedder in engine/embed and the LLM
// consolidator in engine/consolidate): the endpoint that makes one attempt
// (headers, the attempt's timeout, a bounded body, the server's error
// message, transport errors told apart, each wrapped in the calling
// package's sentinel), a jittered exponential backoff, a marker for the
// attempt errors worth retrying, a sleep that ends with its context, the
// reading of a server's Retry-After, and the retry loop. One home, so the
// two clients cannot drift apart.
package httpretry
