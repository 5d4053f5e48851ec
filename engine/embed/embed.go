package embed

import "context"

// Embedder turns texts into vectors. Implementations must be safe for
// concurrent use, return exactly one vector of length Dim() per input text,
// in input order, and be deterministic for a given Name() where the model
// is: Name is part of the embedding cache key, so two embedders that can
// return different vectors for the same text must have different names.
type Embedder interface {
	// Name identifies the model and its configuration, e.g. "hash-v1-384"
	// or "openai:text-embedding-3-small".
	Name() string
	// Dim is the length of every vector Embed returns.
	Dim() int
	// Embed embeds texts in one batched call.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}
