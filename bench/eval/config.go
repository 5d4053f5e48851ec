package eval

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/engine/embed"
)

// Defaults of Config.
var (
	// DefaultKs are the cut-offs recall is reported at.
	DefaultKs = []int{1, 5, 10, 25}
	// DefaultModes are the pipelines evaluated, each on its own store.
	DefaultModes = []engine.Mode{engine.ModeSparse, engine.ModeDense, engine.ModeLazy}
	// DefaultCategories are the LoCoMo question categories evaluated:
	// 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop (5, adversarial,
	// has no evidence to recall).
	DefaultCategories = []int{1, 2, 3, 4}
)

// DefaultEmbedder is the embedder spec used when Config.Embedder is empty.
const DefaultEmbedder = "hash"

// Config configures Run. The zero value with DataDir set is valid.
type Config struct {
	// DataDir is a directory of LoCoMo-format *.json files. Required.
	DataDir string
	// Embedder names the embedder:
	//   "hash"        the engine's default hash embedder (embed.NewHash);
	//   "replay:DIR"  the vectors of DIR/N.speaker_turns.fvecs,
	//                 N.turns.fvecs and N.questions.fvecs beside DIR/N.json
	//                 (USE-lite vectors of the published LoCoMo data), keyed
	//                 by text (Replay); the question without the speakers'
	//                 names, which the engine embeds, gets the vector of
	//                 the question as written; any other text without a
	//                 vector is an error;
	//   "use[:DIR]"   USE-lite in process (engine/embed/use) from the model
	//                 files in DIR, default $LAZYMEM_USE_DIR or .cache/use-lite
	//                 (fetched by `make use-model`); it embeds any text, so
	//                 it gives the replay results without the .fvecs files.
	// Default "hash".
	Embedder string
	// Embed, when set, is used instead of the embedder Embedder names
	// (tests, experiments); Embedder is then only a label.
	Embed embed.Embedder
	// Modes are the recall pipelines evaluated, one run (and one fresh
	// store) each. Default sparse, dense, lazy.
	Modes []engine.Mode
	// Ks are the cut-offs recall is reported at; each recall asks for
	// max(Ks). Default 1, 5, 10, 25.
	Ks []int
	// Categories are the question categories evaluated. Default 1-4.
	Categories []int
	// Progress receives one line per conversation and per run. Default nil:
	// silent.
	Progress io.Writer

	// Query knobs passed to every recall; zero leaves the engine default
	// (see engine.Query).
	Candidates  int
	Fusion      engine.Fusion
	DenseWeight float64
	// DisableSessionContext indexes each turn without its session's
	// previous turn (engine.Options.DisableSessionContext), for ablations.
	DisableSessionContext bool
	// NoCaptions stores a turn's text alone. By default the caption of the
	// image a turn shares (LoCoMo's blip_caption) follows its text, for
	// the sparse stage only: the embedded text is the turn's own (see the
	// package doc).
	NoCaptions bool
	// ContextSample and ContextWeight set the index's rule for inherited
	// words (index.Options.ContextSample, ContextWeight), for ablations.
	// Zero: the index's defaults.
	ContextSample bool
	ContextWeight float64
	// Construct overrides the engine's constructed memory text
	// (default "Role: Text").
	Construct func(r *engine.Record) string
	// Rewrite, when set, turns a question into the query sent to the
	// engine (experiments with query-side processing). Default: the
	// question as written.
	Rewrite func(conv Conversation, question string) engine.Query

	// Experiment hooks (package tests only; see experiment_test.go).
	x experiment
}

// experiment holds the hooks the experiments in experiment_test.go use to
// simulate engine-side changes without editing the engine.
type experiment struct {
	// perConversation opens one store per conversation, so BM25's document
	// frequencies and average length are the conversation's own.
	perConversation bool
	// options edits the engine options of every store.
	options func(o *engine.Options)
	// record edits each record before ingest.
	record func(r *engine.Record)
	// records edits a conversation's records before ingest (after record).
	records func(recs []engine.Record)
	// recall replaces db.Recall; question is the question as written
	// (q.Text may be rewritten).
	recall recallFunc
}

// recallFunc is the signature of the experiments' recall hook.
type recallFunc func(ctx context.Context, db *engine.DB, conv Conversation, question string, q engine.Query) (*engine.Result, error)

// Conversation is what a Rewrite hook knows about the conversation a
// question is asked against.
type Conversation struct {
	ID       string
	Speakers []string
}

// EnsureDefaults fills unset fields with their defaults and returns c.
func (c *Config) EnsureDefaults() *Config {
	if c.Embedder == "" {
		c.Embedder = DefaultEmbedder
	}
	if len(c.Modes) == 0 {
		c.Modes = slices.Clone(DefaultModes)
	}
	if len(c.Ks) == 0 {
		c.Ks = slices.Clone(DefaultKs)
	}
	if len(c.Categories) == 0 {
		c.Categories = slices.Clone(DefaultCategories)
	}
	return c
}

// Validate reports the first invalid field. Call it after EnsureDefaults.
func (c *Config) Validate() error {
	if c.DataDir == "" {
		return fmt.Errorf("%w: DataDir: missing", ErrConfig)
	}
	if c.Embed == nil {
		if _, _, err := parseEmbedder(c.Embedder); err != nil {
			return err
		}
	}
	seen := map[engine.Mode]bool{}
	for i, m := range c.Modes {
		switch m {
		case engine.ModeLazy, engine.ModeSparse, engine.ModeDense:
		default:
			return fmt.Errorf("%w: Modes[%d]: unknown mode %q (want lazy, sparse or dense)", ErrConfig, i, m)
		}
		if seen[m] {
			return fmt.Errorf("%w: Modes[%d]: %q given twice", ErrConfig, i, m)
		}
		seen[m] = true
	}
	for i, k := range c.Ks {
		if k < 1 || k > engine.MaxK {
			return fmt.Errorf("%w: Ks[%d]: %d out of range [1, %d]", ErrConfig, i, k, engine.MaxK)
		}
		if slices.Index(c.Ks, k) != i {
			return fmt.Errorf("%w: Ks[%d]: %d given twice", ErrConfig, i, k)
		}
	}
	for i, cat := range c.Categories {
		if cat < 1 || cat > 5 {
			return fmt.Errorf("%w: Categories[%d]: %d out of range [1, 5]", ErrConfig, i, cat)
		}
	}
	if c.Candidates < 0 || c.Candidates > engine.MaxCandidates {
		return fmt.Errorf("%w: Candidates: %d out of range [0, %d]", ErrConfig, c.Candidates, engine.MaxCandidates)
	}
	if c.DenseWeight < 0 || c.DenseWeight > 1 {
		return fmt.Errorf("%w: DenseWeight: %g out of range [0, 1]", ErrConfig, c.DenseWeight)
	}
	switch c.Fusion {
	case "", engine.FusionRRF, engine.FusionWeighted:
	default:
		return fmt.Errorf("%w: Fusion: unknown %q (want rrf or weighted)", ErrConfig, c.Fusion)
	}
	return nil
}

// parseEmbedder splits an embedder spec into its kind and argument.
func parseEmbedder(spec string) (kind, arg string, err error) {
	kind, arg, hasArg := strings.Cut(spec, ":")
	switch kind {
	case "hash":
		if hasArg {
			return "", "", fmt.Errorf("%w: Embedder: %q: hash takes no argument", ErrConfig, spec)
		}
	case "replay":
		if arg == "" {
			return "", "", fmt.Errorf("%w: Embedder: %q: want replay:DIR", ErrConfig, spec)
		}
	case "use":
	default:
		return "", "", fmt.Errorf("%w: Embedder: unknown %q (want hash, replay:DIR or use)", ErrConfig, spec)
	}
	return kind, arg, nil
}
