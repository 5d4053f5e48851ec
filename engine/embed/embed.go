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

// Fusion is what an embedder recommends for the engine's fusion of
// sparse and dense evidence in lazy recalls: how much its cosine can be
// trusted, and how many BM25 candidates it should see. A lexical
// embedder repeats what BM25 already found and wants a small weight and
// few candidates; a semantic one can rank the right record from further
// down the BM25 list, and wants more of both.
type Fusion struct {
	// DenseWeight is the recommended share of the dense evidence in
	// weighted fusion, in (0, 1]; 0: no recommendation.
	DenseWeight float64
	// Candidates is the recommended least number of BM25 candidates of a
	// recall (the engine still takes at least 5 per requested memory); 0:
	// no recommendation.
	Candidates int
	// Lexical says the embedder matches shared words and character
	// n-grams rather than meaning (the hash embedder): the engine then
	// does not fill the candidate budget with the latest records for it to
	// rank, since it cannot find paraphrases among them, and a question
	// with no BM25 hit ranks the window's records mostly by time.
	Lexical bool
}

// FusionAdvisor is implemented by an Embedder that recommends fusion
// settings (optional). The engine uses them where the caller set
// neither the Options nor the Query field: a caller's value always wins.
//
// A wrapper that leaves the vectors as they are (a meter, a logger, a
// retry) should pass its embedder's recommendation on: a struct that
// embeds the Embedder interface does not have this method, and the
// engine then fuses as for an embedder that recommends nothing (dense
// weight 0.5, where the hash embedder asks for 0.2).
type FusionAdvisor interface {
	RecommendedFusion() Fusion
}
