package main

import (
	"errors"
	"strings"

	"github.com/lazymem/lazymem/cmd/internal/embedspec"
	"github.com/lazymem/lazymem/engine/embed"
)

// embedderUsage is the help text of the --embedder flag of recall and demo.
const embedderUsage = embedspec.Usage

// openEmbedder returns the embedder a --embedder spec names (nil for hash,
// the engine's default); a malformed spec is a usage error.
func openEmbedder(spec string) (embed.Embedder, error) {
	e, err := embedspec.Open(spec)
	if errors.Is(err, embedspec.ErrSpec) {
		return nil, usagef("%s", strings.TrimPrefix(err.Error(), "lazymem: "))
	}
	return e, err
}
