package eval

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"unicode/utf8"

	"github.com/lazymem/lazymem/bench/locomo"
	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/engine/embed"
)

// ReplayOptions configures a Replay embedder.
type ReplayOptions struct {
	// Fallback embeds texts that have no stored vector. Its Dim must equal
	// the stored vectors' (or be 0, checked on use) and its name becomes
	// part of Name. Default nil: an unknown text is an ErrUnknownText error.
	Fallback embed.Embedder
	// Label names the source in Name. Default "pairs" for NewReplay,
	// "locomo" for LoadLoCoMoReplay.
	Label string
	// Tolerance is the largest absolute difference allowed between two
	// vectors given for the same text (the first is kept). Default 1e-4.
	Tolerance float64
}

// Replay is an embedder that serves precomputed vectors keyed by exact
// text: it replays the output of a model that is not run in process (the
// USE-lite vectors published beside the LoCoMo conversations) so that an
// evaluation can use it. Safe for concurrent use: it is read-only after
// construction.
type Replay struct {
	name     string
	dim      int
	vecs     map[string][]float32
	fallback embed.Embedder
}

var _ embed.Embedder = (*Replay)(nil)

func (o *ReplayOptions) ensureDefaults(label string) {
	if o.Label == "" {
		o.Label = label
	}
	if o.Tolerance == 0 {
		o.Tolerance = 1e-4
	}
}

// NewReplay serves vecs[i] for texts[i]. The vectors are used, not copied.
// texts and vecs must have one length, the vectors one dimension, and a
// text given twice must come with (nearly, see Tolerance) the same vector.
func NewReplay(texts []string, vecs [][]float32, opts ReplayOptions) (*Replay, error) {
	opts.ensureDefaults("pairs")
	d := sha256.New()
	r := &Replay{vecs: make(map[string][]float32, len(texts))}
	if err := r.add(d, texts, vecs, "pairs", opts.Tolerance); err != nil {
		return nil, err
	}
	return r.finish(d, opts)
}

// add records pairs and feeds them to the digest (length-prefixed text,
// then the vector's bits).
func (r *Replay) add(d hash.Hash, texts []string, vecs [][]float32, src string, tol float64) error {
	if len(texts) != len(vecs) {
		return fmt.Errorf("%w: %s: %d texts but %d vectors", ErrSource, src, len(texts), len(vecs))
	}
	var buf []byte
	for i, t := range texts {
		v := vecs[i]
		if len(v) == 0 {
			return fmt.Errorf("%w: %s: vector %d is empty", ErrSource, src, i)
		}
		if r.dim == 0 {
			r.dim = len(v)
		}
		if len(v) != r.dim {
			return fmt.Errorf("%w: %s: vector %d has dimension %d, want %d", ErrSource, src, i, len(v), r.dim)
		}
		if old, ok := r.vecs[t]; ok {
			for j := range old {
				if math.Abs(float64(old[j])-float64(v[j])) > tol {
					return fmt.Errorf("%w: %s: text %s given twice with different vectors (component %d: %v vs %v)",
						ErrSource, src, quoteText(t), j, old[j], v[j])
				}
			}
			continue
		}
		r.vecs[t] = v[:len(v):len(v)]
		if d != nil {
			buf = binary.AppendUvarint(buf[:0], uint64(len(t)))
			buf = append(buf, t...)
			for _, x := range v {
				buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
			}
			d.Write(buf)
		}
	}
	return nil
}

func (r *Replay) finish(d hash.Hash, opts ReplayOptions) (*Replay, error) {
	if len(r.vecs) == 0 {
		return nil, fmt.Errorf("%w: no vectors", ErrSource)
	}
	if fb := opts.Fallback; fb != nil && fb.Dim() != 0 && fb.Dim() != r.dim {
		return nil, fmt.Errorf("%w: ReplayOptions.Fallback %s has dimension %d, the stored vectors %d",
			ErrConfig, fb.Name(), fb.Dim(), r.dim)
	}
	r.fallback = opts.Fallback
	r.name = "replay-" + opts.Label + "-" + hex.EncodeToString(d.Sum(nil)[:8]) + "-d" + strconv.Itoa(r.dim)
	if r.fallback != nil {
		r.name += "+" + r.fallback.Name()
	}
	return r, nil
}

// LoCoMoReplayOptions configures LoadLoCoMoReplay.
type LoCoMoReplayOptions struct {
	ReplayOptions
	// Sets names the vector files loaded per conversation N:
	//   "turns"          N.turns.fvecs, keyed by each turn's text;
	//   "speaker_turns"  N.speaker_turns.fvecs, keyed by "Speaker: text";
	//   "questions"      N.questions.fvecs, keyed by each qa question.
	// Default all three.
	Sets []string
	// IDs restricts loading to these conversations ("26"). Default all
	// *.json files of the directory.
	IDs []string
}

// LoCoMoSets are the vector file kinds of a LoCoMo directory.
var LoCoMoSets = []string{"turns", "speaker_turns", "questions"}

// LoadLoCoMoReplay loads a LoCoMo-style directory: each conversation N.json
// (read with bench/locomo) and the .fvecs files beside it (read with codec),
// whose i-th vector belongs to the i-th turn in file order or the i-th qa
// entry. Name carries a digest of every file read, in order, so other data
// gets another name and so another embedding cache key.
func LoadLoCoMoReplay(dir string, opts LoCoMoReplayOptions) (*Replay, error) {
	opts.ensureDefaults("locomo")
	sets := opts.Sets
	if len(sets) == 0 {
		sets = LoCoMoSets
	}
	for _, s := range sets {
		if s != "turns" && s != "speaker_turns" && s != "questions" {
			return nil, fmt.Errorf("%w: LoCoMoReplayOptions.Sets: unknown set %q (want turns, speaker_turns, questions)", ErrConfig, s)
		}
	}
	var convs []*locomo.Conversation
	if len(opts.IDs) == 0 {
		var err error
		if convs, err = locomo.Load(dir); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSource, err)
		}
	} else {
		for _, id := range opts.IDs {
			cs, err := locomo.LoadFile(filepath.Join(dir, id+".json"))
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrSource, err)
			}
			convs = append(convs, cs...)
		}
	}
	if len(convs) == 0 {
		return nil, fmt.Errorf("%w: no LoCoMo conversation in %s", ErrSource, dir)
	}
	d := sha256.New()
	r := &Replay{vecs: make(map[string][]float32)}
	digestFile := func(path string) ([]byte, error) {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSource, err)
		}
		var hdr []byte
		hdr = binary.AppendUvarint(hdr, uint64(len(filepath.Base(path))))
		hdr = append(hdr, filepath.Base(path)...)
		hdr = binary.AppendUvarint(hdr, uint64(len(data)))
		d.Write(hdr)
		d.Write(data)
		return data, nil
	}
	// The engine embeds a turn with its pleasantries removed
	// (engine.StripPleasantries); such a text is served the vector of the
	// whole turn, the one USE-lite computed.
	aliases := map[string]string{}
	alias := func(orig, constructed string) {
		if constructed != orig {
			aliases[constructed] = orig
		}
	}
	for _, c := range convs {
		if _, err := digestFile(filepath.Join(dir, c.ID+".json")); err != nil {
			return nil, err
		}
		turns := c.Turns()
		for _, set := range sets {
			path := filepath.Join(dir, c.ID+"."+set+".fvecs")
			data, err := digestFile(path)
			if err != nil {
				return nil, err
			}
			vecs, err := codec.ReadAll(codec.NewFvecsReader(bytes.NewReader(data), codec.VecOptions{}))
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %w", ErrSource, path, err)
			}
			var texts []string
			switch set {
			case "turns":
				for _, t := range turns {
					texts = append(texts, t.Text)
					alias(t.Text, engine.StripPleasantries(t.Text))
				}
			case "speaker_turns":
				for _, t := range turns {
					texts = append(texts, t.Speaker+": "+t.Text)
					alias(t.Speaker+": "+t.Text, t.Speaker+": "+engine.StripPleasantries(t.Text))
				}
			case "questions":
				for _, q := range c.QA {
					texts = append(texts, q.Question)
				}
			}
			if err := r.add(nil, texts, vecs, path, opts.Tolerance); err != nil {
				return nil, err
			}
		}
	}
	r, err := r.finish(d, opts.ReplayOptions)
	if err != nil {
		return nil, err
	}
	for a, orig := range aliases {
		if _, ok := r.vecs[a]; !ok {
			if v, ok := r.vecs[orig]; ok {
				r.vecs[a] = v
			}
		}
	}
	return r, nil
}

// SpeakerTurnText is the text a "speaker_turns" vector is keyed by.
func SpeakerTurnText(speaker, text string) string { return speaker + ": " + text }

// Name returns "replay-<label>-<digest>-d<dim>", where digest is the first
// 8 bytes (hex) of a SHA-256 over the source (the files read, or the
// pairs), followed by "+<fallback name>" when a Fallback is set.
func (r *Replay) Name() string { return r.name }

// Dim returns the stored vectors' dimension.
func (r *Replay) Dim() int { return r.dim }

// Len returns the number of distinct texts with a stored vector.
func (r *Replay) Len() int { return len(r.vecs) }

// Lookup returns the stored vector of text. The slice is shared: do not
// modify it.
func (r *Replay) Lookup(text string) ([]float32, bool) {
	v, ok := r.vecs[text]
	return v, ok
}

// Embed returns copies of the stored vectors. Texts without one go to the
// Fallback in one batched call; with no Fallback the call fails with
// ErrUnknownText naming the first such text (truncated) and their count.
func (r *Replay) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	backing := make([]float32, len(texts)*r.dim)
	var missing []int
	for i, t := range texts {
		v, ok := r.vecs[t]
		if !ok {
			missing = append(missing, i)
			continue
		}
		dst := backing[i*r.dim : (i+1)*r.dim : (i+1)*r.dim]
		copy(dst, v)
		out[i] = dst
	}
	if len(missing) == 0 {
		return out, nil
	}
	if r.fallback == nil {
		return nil, fmt.Errorf("%w: no vector for %s (%d of %d texts unknown) in %s",
			ErrUnknownText, quoteText(texts[missing[0]]), len(missing), len(texts), r.name)
	}
	miss := make([]string, len(missing))
	for k, i := range missing {
		miss[k] = texts[i]
	}
	vs, err := r.fallback.Embed(ctx, miss)
	if err != nil {
		return nil, fmt.Errorf("lazymem: eval: replay fallback %s: %w", r.fallback.Name(), err)
	}
	if len(vs) != len(miss) {
		return nil, fmt.Errorf("%w: replay fallback %s returned %d vectors for %d texts", embed.ErrResponse, r.fallback.Name(), len(vs), len(miss))
	}
	for k, i := range missing {
		if len(vs[k]) != r.dim {
			return nil, fmt.Errorf("%w: replay fallback %s: expected %d, got %d", embed.ErrDim, r.fallback.Name(), r.dim, len(vs[k]))
		}
		out[i] = vs[k]
	}
	return out, nil
}

// quoteText quotes a text for an error message, cut to 60 runes.
func quoteText(s string) string {
	const limit = 60
	if utf8.RuneCountInString(s) <= limit {
		return strconv.Quote(s)
	}
	n := 0
	for i := range s {
		if n == limit {
			return strconv.Quote(s[:i]) + "..."
		}
		n++
	}
	return strconv.Quote(s)
}
