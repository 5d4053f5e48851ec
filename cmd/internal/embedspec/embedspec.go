// Package embedspec turns the --embedder flag of the lazymem commands and
// of lazymemd into an embedder:
//
//	hash                    the engine's built-in lexical embedder (default)
//	use[:DIR]               USE-lite in process; model files from
//	                        "make use-model" (default $LAZYMEM_USE_DIR or
//	                        .cache/use-lite)
//	gloss[:DIR]             Chinese glossed into English with CC-CEDICT
//	                        (from "make cedict"; default
//	                        $LAZYMEM_CEDICT_DIR or .cache/cc-cedict),
//	                        embedded by USE-lite (as use)
//	openai:MODEL[@BASEURL]  an OpenAI-compatible /v1/embeddings endpoint
//	                        (default base URL https://api.openai.com/v1; the
//	                        key is read from $OPENAI_API_KEY, none needed for
//	                        a local server such as Ollama or vLLM); Open
//	                        embeds one probe text to learn the dimension,
//	                        which the engine needs before the first append
package embedspec

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lazymem/lazymem/engine/embed"
	"github.com/lazymem/lazymem/engine/embed/gloss"
	"github.com/lazymem/lazymem/engine/embed/use"
)

// Usage is the help text of an --embedder flag. Its one back-quoted word
// is the placeholder the flag package shows ("-embedder SPEC"): no other
// word of it may be back-quoted.
const Usage = "embedder `SPEC`: hash (built in, lexical), use[:DIR] (USE-lite in process; model files from \"make use-model\", default $LAZYMEM_USE_DIR or .cache/use-lite), gloss[:DIR] (Chinese glossed into English with CC-CEDICT from \"make cedict\", default $LAZYMEM_CEDICT_DIR or .cache/cc-cedict, then USE-lite) or openai:MODEL[@BASEURL] (an OpenAI-compatible endpoint; key from $OPENAI_API_KEY)"

// ErrSpec is wrapped by the errors of a malformed spec.
var ErrSpec = errors.New("lazymem: bad --embedder")

// ProbeTimeout bounds the probe of an openai endpoint, its retries
// included (a refused connection is retried with backoff for about 15 s).
const ProbeTimeout = time.Minute

// Open returns the embedder spec names; nil for hash, the engine's
// default. Vectors are cached per embedder name, so one store can be
// recalled with several embedders.
func Open(spec string) (embed.Embedder, error) {
	kind, arg, _ := strings.Cut(spec, ":")
	switch kind {
	case "", "hash":
		if arg != "" {
			return nil, fmt.Errorf("%w %q: hash takes no argument", ErrSpec, spec)
		}
		return nil, nil
	case "use":
		return use.New(use.ModelDir(arg), use.Options{})
	case "gloss":
		d, err := gloss.LoadDict(gloss.DataDir(arg))
		if err != nil {
			return nil, err
		}
		u, err := use.New(use.ModelDir(""), use.Options{})
		if err != nil {
			return nil, err
		}
		return gloss.New(d, u, gloss.Options{})
	case "openai":
		model, base, _ := strings.Cut(arg, "@")
		if model == "" {
			return nil, fmt.Errorf("%w %q: want openai:MODEL or openai:MODEL@BASEURL", ErrSpec, spec)
		}
		if base != "" && !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
			return nil, fmt.Errorf("%w %q: base URL %q must start with http:// or https://", ErrSpec, spec, base)
		}
		e, err := embed.NewOpenAI(embed.OpenAIOptions{Model: model, BaseURL: base})
		if err != nil {
			return nil, err
		}
		// engine.Open rejects an embedder whose Dim is 0: learn it now,
		// which also says at once when the endpoint does not answer.
		ctx, cancel := context.WithTimeout(context.Background(), ProbeTimeout)
		defer cancel()
		if _, err := e.Probe(ctx); err != nil {
			return nil, fmt.Errorf("lazymem: --embedder %q: probing %s: %w", spec, e.URL(), err)
		}
		return e, nil
	}
	return nil, fmt.Errorf("%w %q: want hash, use[:DIR], gloss[:DIR] or openai:MODEL[@BASEURL]", ErrSpec, spec)
}
