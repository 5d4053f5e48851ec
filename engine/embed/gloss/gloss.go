package gloss

import (
	"context"
	"fmt"

	"github.com/lazymem/lazymem/engine/embed"
)

// Options configures the gloss embedder. The zero value is valid.
type Options struct {
	// Senses is the most English senses one Chinese word contributes to
	// the glossed text, most common first. More senses find more
	// paraphrases and add more noise. Default 2; 1..8.
	Senses int
}

// DefaultSenses is Options.Senses' default.
const DefaultSenses = 2

// EnsureDefaults fills zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.Senses == 0 {
		o.Senses = DefaultSenses
	}
}

// Validate reports the first invalid field.
func (o *Options) Validate() error {
	if o.Senses < 1 || o.Senses > 8 {
		return fmt.Errorf("%w: Options.Senses = %d, want 1..8", ErrOptions, o.Senses)
	}
	return nil
}

// Embedder glosses Chinese text into English with a Chinese-English
// dictionary and embeds the glossed text with an English embedder. Text
// without Chinese goes to the inner embedder unchanged, so English and
// Chinese land in one vector space. Safe for concurrent use when the inner
// embedder is.
type Embedder struct {
	dict  *Dict
	inner embed.Embedder
	opts  Options
	name  string
}

var _ embed.Embedder = (*Embedder)(nil)

// New returns the gloss embedder over dict and inner (an English
// embedder, USE-lite in the CLI).
func New(dict *Dict, inner embed.Embedder, opts Options) (*Embedder, error) {
	if dict == nil {
		return nil, fmt.Errorf("%w: dict is nil", ErrOptions)
	}
	if inner == nil {
		return nil, fmt.Errorf("%w: inner embedder is nil", ErrOptions)
	}
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	name := fmt.Sprintf("gloss-v1-s%d-%s+%s", opts.Senses, dict.digest[:12], inner.Name())
	return &Embedder{dict: dict, inner: inner, opts: opts, name: name}, nil
}

// Name is "gloss-v1-s<senses>-<dictionary digest>+<inner name>": it
// changes whenever the vectors could.
func (e *Embedder) Name() string { return e.name }

// Dim is the inner embedder's.
func (e *Embedder) Dim() int { return e.inner.Dim() }

// Gloss is the English text the embedder gives the inner embedder for
// text.
func (e *Embedder) Gloss(text string) string { return e.dict.Gloss(text, e.opts.Senses) }

// Embed glosses every text and embeds the glosses in one call of the
// inner embedder.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	g := make([]string, len(texts))
	for i, t := range texts {
		g[i] = e.Gloss(t)
	}
	return e.inner.Embed(ctx, g)
}

// RecommendedFusion is dense weight 0.35 and 50 candidates. Chosen on
// the Chinese set of bench/zhmem with the first version of the glosses
// (lazy R@1/5/10, docs/benchmarks/zh-embedders.md): 0.2 .393/.786/.862,
// 0.35 .428/.803/.869, 0.5 .414/.797/.869, 0.8 .390/.759/.855; 200
// candidates gain nothing (at 0.35 .428/.790/.872). The current glosses
// give .407/.803/.852 at 0.35. English text passes through to USE-lite
// unchanged: on LoCoMo this is USE-lite at 0.35, lazy .466/.707/.763/.804
// against .463/.708/.759/.802 at 0.2.
func (e *Embedder) RecommendedFusion() embed.Fusion {
	return embed.Fusion{DenseWeight: 0.35, Candidates: 50}
}
