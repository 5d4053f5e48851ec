package eval

import "errors"

var (
	// ErrConfig is wrapped by every Config.Validate error; the message names
	// the field.
	ErrConfig = errors.New("lazymem: eval: invalid config")
	// ErrEmbedder reports an embedder spec that names no available embedder
	// ("use" until the in-process USE-lite model lands).
	ErrEmbedder = errors.New("lazymem: eval: embedder not available")
	// ErrNoQuestions reports a data directory whose conversations hold no
	// question of the evaluated categories with evidence.
	ErrNoQuestions = errors.New("lazymem: eval: no questions to evaluate")
	// ErrUnknownText reports a text that a Replay embedder has no vector for
	// and no fallback to compute one.
	ErrUnknownText = errors.New("lazymem: eval: replay: unknown text")
	// ErrSource reports replay source files that do not load or do not agree
	// (vector count differs from text count, mixed dimensions).
	ErrSource = errors.New("lazymem: eval: bad replay source")
)
