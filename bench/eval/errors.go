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
)
