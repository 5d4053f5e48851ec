// Package embed defines the Embedder interface of lazymem and its
// implementations: hash (the zero-dependency default), openai (any
// OpenAI-compatible /v1/embeddings endpoint) and replay (vectors read from
// .fvecs files, for evaluation).
package embed
