package main

import (
	"strings"

	"github.com/lazymem/lazymem/engine/embed"
	"github.com/lazymem/lazymem/engine/embed/use"
)

// embedderUsage is the help text of the --embedder flag of recall and demo.
const embedderUsage = "hash (built in, lexical) or use[:DIR] (USE-lite in process; model files from `make use-model`, default $LAZYMEM_USE_DIR or .cache/use-lite)"

// openEmbedder returns the embedder a --embedder spec names; nil for hash,
// the engine's default. Vectors are cached per embedder name, so a store can
// be recalled with either.
func openEmbedder(spec string) (embed.Embedder, error) {
	kind, dir, _ := strings.Cut(spec, ":")
	switch kind {
	case "", "hash":
		if dir != "" {
			return nil, usagef("--embedder %q: hash takes no argument", spec)
		}
		return nil, nil
	case "use":
		return use.New(use.ModelDir(dir), use.Options{})
	}
	return nil, usagef("--embedder %q: want hash or use[:DIR]", spec)
}
