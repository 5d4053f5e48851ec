package embed

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/lazymem/lazymem/index/analysis/porter2"
	"golang.org/x/text/unicode/norm"
)

// HashOptions configures the hash embedder. The zero value is valid.
type HashOptions struct {
	// Dim is the number of hash buckets, the vector length.
	// Default 384. Must be in [8, 65536].
	Dim int
	// CharGram is the length in runes of the character n-grams taken from
	// each word (with a start and an end marker around the word).
	// Default 3. Negative disables character n-grams. Else 2..8.
	CharGram int
	// Workers is the most goroutines one Embed call uses; a batch gets one
	// per 8 texts up to this bound. It does not change vectors, so it is
	// not part of Name. Default runtime.GOMAXPROCS(0); 1 means sequential.
	Workers int
}

// Default hash embedder settings.
const (
	DefaultHashDim      = 384
	DefaultHashCharGram = 3
)

// Feature weights of hash-v3 (unchanged from v1). They are part of the
// definition: changing one changes every vector, so it takes a new version
// in Name.
const (
	hashWeightWord   = 1.0
	hashWeightBigram = 0.7
	hashWeightChar   = 0.6
	// Stopwords carry little meaning but dominate short chat turns and
	// questions ("what did you ..."); without IDF, a fixed low weight.
	hashWeightStopWord   = 0.1
	hashWeightStopBigram = 0.2
)

// Feature kinds, stored in the low three bits of a feature hash.
const (
	featWord       = 0 // a word that is not a stopword
	featBigram     = 1 // two consecutive words, neither a stopword
	featChar       = 2 // a character n-gram of a non-stopword
	featStopWord   = 3 // a stopword
	featStopBigram = 4 // two consecutive words, one or both stopwords
	featKindMask   = 7
	featSignBit    = 8
)

// hashV1Weights are the feature weights of hash-v1 to v3, by kind.
var hashV1Weights = [8]float64{
	featWord:       hashWeightWord,
	featBigram:     hashWeightBigram,
	featChar:       hashWeightChar,
	featStopWord:   hashWeightStopWord,
	featStopBigram: hashWeightStopBigram,
}

// EnsureDefaults fills zero fields with their defaults.
func (o *HashOptions) EnsureDefaults() {
	if o.Dim == 0 {
		o.Dim = DefaultHashDim
	}
	if o.CharGram == 0 {
		o.CharGram = DefaultHashCharGram
	}
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
}

// Validate reports the first invalid field.
func (o *HashOptions) Validate() error {
	if o.Dim < 8 || o.Dim > 1<<16 {
		return fmt.Errorf("%w: HashOptions.Dim = %d, want 8..65536", ErrOptions, o.Dim)
	}
	if o.Workers < 1 {
		return fmt.Errorf("%w: HashOptions.Workers = %d, want >= 1", ErrOptions, o.Workers)
	}
	if o.CharGram == 1 || o.CharGram > 8 {
		return fmt.Errorf("%w: HashOptions.CharGram = %d, want 2..8 (negative disables)", ErrOptions, o.CharGram)
	}
	return nil
}

// Hash is the zero-dependency default embedder: signed feature hashing of
// word unigrams, word bigrams and character n-grams, English stopwords
// down-weighted, CJK ideographs and kana taken one character per word. See
// the package documentation.
type Hash struct {
	dim     int
	gram    int
	name    string
	pool    sync.Pool // *hashScratch
	udim    uint64
	weights [8]float64 // by feature kind
	workers int
}

var _ Embedder = (*Hash)(nil)

type hashScratch struct {
	it     norm.Iter
	runes  []rune
	words  []int32 // end offsets into runes, one per word
	feats  []uint64
	slots  []int32 // open-addressing table: index into feats, or -1
	counts []int32
	word   []byte            // the current word, for stem lookups
	stems  map[string]uint64 // word -> hash of its stem (the stemmer allocates)
}

// maxStemCache bounds a scratch's stem memo; it is cleared when full
// (chat vocabulary is Zipf-shaped: the head comes straight back).
const maxStemCache = 1 << 14

// stemHash is the word-feature hash of w's Porter2 stem, for a word of
// ASCII letters (the rest, and words the stemmer leaves alone, hash as
// they are): the hash of "painting", "paints" and "painted" is the hash of
// "paint", as in the BM25 index (index/analysis).
func (s *hashScratch) stemHash(w []rune, uh uint64) uint64 {
	if len(w) < 3 {
		return uh
	}
	s.word = s.word[:0]
	for _, r := range w {
		if r < 'a' || r > 'z' {
			return uh
		}
		s.word = append(s.word, byte(r))
	}
	if h, ok := s.stems[string(s.word)]; ok {
		return h
	}
	word := string(s.word)
	h := uh
	if st := porter2.Stem(word, false); st != word {
		h = wordHash([]rune(st))
	}
	if s.stems == nil || len(s.stems) >= maxStemCache {
		s.stems = make(map[string]uint64, 256)
	}
	s.stems[word] = h
	return h
}

// NewHash returns a hash embedder. Zero option fields take their defaults.
func NewHash(opts HashOptions) (*Hash, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	name := "hash-v3-d" + strconv.Itoa(opts.Dim)
	if opts.CharGram != DefaultHashCharGram {
		if opts.CharGram < 0 {
			name += "-c0"
		} else {
			name += "-c" + strconv.Itoa(opts.CharGram)
		}
	}
	h := &Hash{dim: opts.Dim, gram: opts.CharGram, name: name, udim: uint64(opts.Dim), workers: opts.Workers, weights: hashV1Weights}
	h.pool.New = func() any { return new(hashScratch) }
	return h, nil
}

// Name returns "hash-v3-d<Dim>", with "-c<CharGram>" appended when the
// character n-gram length is not the default 3 ("-c0": disabled).
func (h *Hash) Name() string { return h.name }

// Dim returns the vector length.
func (h *Hash) Dim() int { return h.dim }

// RecommendedFusion is dense weight 0.2 and 50 candidates: the hash
// embedder is lexical, its cosine mostly repeats BM25's evidence. Measured
// on LoCoMo (lazy R@10): dense weight 0.15/0.2/0.25/0.3 give
// .746/.745/.744/.743, and more dense weight costs the Chinese set R@5
// (0.5: .731 -> .717; docs/benchmarks/zh-embedders.md); 50 to 200
// candidates give the same R@10.
func (h *Hash) RecommendedFusion() Fusion {
	return Fusion{DenseWeight: 0.2, Candidates: 50, Lexical: true}
}

// Embed returns one L2-normalized vector per text. A text with no word
// characters (empty, only spaces or punctuation) gets the zero vector: its
// cosine with anything is 0, never NaN. The vectors share one backing array
// and each has capacity Dim, so appending to one cannot overwrite another.
func (h *Hash) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	if len(texts) == 0 {
		return out, nil
	}
	backing := make([]float32, len(texts)*h.dim)
	workers := min(h.workers, len(texts)/hashParallelMin)
	if workers <= 1 {
		if err := h.embedRange(ctx, texts, out, backing, nil); err != nil {
			return nil, err
		}
		return out, nil
	}
	// A batch of at least 2*hashParallelMin texts is shared between
	// goroutines (the caller's one of them), each taking the next text
	// until none is left: texts differ in length, so fixed ranges would
	// leave one core idle at the end. Every vector is computed exactly as
	// in the sequential path, so results do not depend on it.
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = h.embedRange(ctx, texts, out, backing, &next)
		}()
	}
	errs[0] = h.embedRange(ctx, texts, out, backing, &next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// hashParallelMin is the fewest texts per goroutine worth starting one
// for: a chat-sized text takes 10-20 µs (Porter2 stemming a third of it in
// a new process, whose stem memos are empty), a goroutine a few
// microseconds to start, and a cold recall's batch is its candidates and
// the query, about 50 texts under an agent filter (0.5-1 ms on one core)
// and about 23 under a session filter (docs/benchmarks/cold.md). It was
// 128 ("about 1 ms of work"), which left every recall's batch on one core.
const hashParallelMin = 8

// embedRange embeds texts into out and backing: all of them in order when
// next is nil, else the texts whose indices it hands out (next.Add),
// shared with other goroutines.
func (h *Hash) embedRange(ctx context.Context, texts []string, out [][]float32, backing []float32, next *atomic.Int64) error {
	s := h.pool.Get().(*hashScratch)
	defer h.pool.Put(s)
	for n := 0; ; n++ {
		i := n
		if next != nil {
			i = int(next.Add(1) - 1)
		}
		if i >= len(texts) {
			break
		}
		if n&63 == 63 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		v := backing[i*h.dim : (i+1)*h.dim : (i+1)*h.dim]
		h.embedOne(s, texts[i], v)
		out[i] = v
	}
	return ctx.Err()
}

// AppendVector appends the embedding of text to dst and returns the
// extended slice. It allocates only when dst lacks capacity.
func (h *Hash) AppendVector(dst []float32, text string) []float32 {
	n := len(dst)
	dst = slices.Grow(dst, h.dim)[:n+h.dim]
	clear(dst[n:])
	s := h.pool.Get().(*hashScratch)
	h.embedOne(s, text, dst[n:])
	h.pool.Put(s)
	return dst
}

// 64-bit FNV-1a over runes (one rune per step) finished with the murmur3
// finalizer, so that the low and high bits are both well mixed.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// wordHash is the feature hash of a word (kind bits not yet set).
func wordHash(w []rune) uint64 {
	h := uint64(fnvOffset) ^ featWord
	for _, r := range w {
		h ^= uint64(r)
		h *= fnvPrime
	}
	return fmix64(h)
}

// isCJK and isWordRune are deliberately not the tokenizer's predicates
// (analysis.IsCJK, analysis.IsWordRune), which the engine uses elsewhere:
// the embedder's features are a versioned format. A vector is cached under
// the embedder's name ("hash-v3-..."), so changing what a word is (the
// tokenizer also counts Hangul and U+30FC as CJK, Me marks and non-decimal
// numbers as word runes) would change the vectors of Korean and other text
// under an unchanged name, and silently mix old and new vectors in every
// existing cache. Align them only together with a new name (hash-v4).
func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r)
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)
}

// tokenize splits text into words: runs of letters, digits and marks, each
// CJK ideograph or kana its own word. Text is NFKC-normalized (only when it
// holds non-ASCII bytes: ASCII is NFKC-stable) and lowercased per rune.
func (s *hashScratch) tokenize(text string) {
	s.runes = s.runes[:0]
	s.words = s.words[:0]
	inWord := false
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			if norm.NFKC.QuickSpanString(text) == len(text) {
				break // already NFKC, the common case: no copy
			}
			// norm.Iter lives in the pooled scratch: AppendString would
			// allocate its reorder buffer on every call.
			s.it.InitString(norm.NFKC, text)
			for !s.it.Done() {
				for b := s.it.Next(); len(b) > 0; {
					r, n := utf8.DecodeRune(b)
					b = b[n:]
					inWord = s.add(r, inWord)
				}
			}
			s.finish(inWord)
			return
		}
	}
	for _, r := range text {
		inWord = s.add(r, inWord)
	}
	s.finish(inWord)
}

func (s *hashScratch) add(r rune, inWord bool) bool {
	switch {
	case r < utf8.RuneSelf:
		if !isWordRune(r) {
			break
		}
		if r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		}
		s.runes = append(s.runes, r)
		return true
	case isCJK(r):
		s.finish(inWord)
		s.runes = append(s.runes, r)
		s.words = append(s.words, int32(len(s.runes)))
		return false
	case isWordRune(r):
		s.runes = append(s.runes, unicode.ToLower(r))
		return true
	}
	s.finish(inWord)
	return false
}

// finish closes the current word, if any.
func (s *hashScratch) finish(inWord bool) {
	if inWord {
		s.words = append(s.words, int32(len(s.runes)))
	}
}

func (h *Hash) embedOne(s *hashScratch, text string, v []float32) {
	s.tokenize(text)
	s.feats = s.feats[:0]
	start := int32(0)
	var prev uint64
	prevStop := false
	for wi, end := range s.words {
		w := s.runes[start:end]
		start = end
		uh := wordHash(w)
		_, stop := hashStopSet[uh]
		if !stop {
			uh = s.stemHash(w, uh)
		}
		kind := uint64(featWord)
		if stop {
			kind = featStopWord
		}
		s.feats = append(s.feats, uh&^featKindMask|kind)
		if wi > 0 {
			bh := fmix64((prev*fnvPrime ^ uh) + 0x9e3779b97f4a7c15)
			kind := uint64(featBigram)
			if stop || prevStop {
				kind = featStopBigram
			}
			s.feats = append(s.feats, bh&^featKindMask|kind)
		}
		prev, prevStop = uh, stop
		if h.gram > 0 && !stop && !(len(w) == 1 && isCJK(w[0])) {
			s.feats = appendCharGrams(s.feats, w, h.gram)
		}
	}
	if len(s.feats) == 0 {
		clear(v)
		return
	}
	// Count equal features with a small open-addressing table (cheaper than
	// sorting), then add each distinct feature once with weight
	// kind * (1 + ln tf). The walk follows insertion order, so the float
	// sums are bit-identical for equal texts.
	size := 64
	for size < 2*len(s.feats) {
		size <<= 1
	}
	if cap(s.slots) < size {
		s.slots = make([]int32, size)
		s.counts = make([]int32, 0, size)
	}
	slots := s.slots[:size]
	for i := range slots {
		slots[i] = -1
	}
	mask := uint64(size - 1)
	uniq := s.feats[:0] // compacted in place: write index never passes read index
	counts := s.counts[:0]
	for _, f := range s.feats {
		p := (f >> 7) & mask
		for {
			k := slots[p]
			if k < 0 {
				slots[p] = int32(len(uniq))
				uniq = append(uniq, f)
				counts = append(counts, 1)
				break
			}
			if uniq[k] == f {
				counts[k]++
				break
			}
			p = (p + 1) & mask
		}
	}
	s.counts = counts
	clear(v)
	for i, f := range uniq {
		tf := 1.0
		if c := counts[i]; c > 1 {
			tf = 1 + math.Log(float64(c))
		}
		w := h.weights[f&featKindMask]
		// Lemire's multiply-shift maps the high 32 bits onto [0, dim);
		// the bit above the kind bits is the sign.
		b := (f >> 32) * h.udim >> 32
		x := float32(w * tf)
		if f&featSignBit != 0 {
			x = -x
		}
		v[b] += x
	}
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		return // every feature cancelled out: leave the zero vector
	}
	inv := float32(1 / math.Sqrt(ss))
	for i := range v {
		v[i] *= inv
	}
}

// Boundary markers of character n-grams (control characters, which never
// occur inside a word).
const (
	gramStart = 0x02
	gramEnd   = 0x03
)

// appendCharGrams appends the n-grams of the word padded with a start and an
// end marker: "cat" with n=3 gives "^ca", "cat", "at$". A word of at most
// n-2 runes gives the single padded gram ("^a$").
func appendCharGrams(feats []uint64, w []rune, n int) []uint64 {
	padded := len(w) + 2
	at := func(i int) rune {
		switch {
		case i == 0:
			return gramStart
		case i == padded-1:
			return gramEnd
		default:
			return w[i-1]
		}
	}
	if padded <= n {
		gh := uint64(fnvOffset) ^ featChar
		for i := 0; i < padded; i++ {
			gh ^= uint64(at(i))
			gh *= fnvPrime
		}
		return append(feats, fmix64(gh)&^featKindMask|featChar)
	}
	for i := 0; i+n <= padded; i++ {
		gh := uint64(fnvOffset) ^ featChar
		for k := i; k < i+n; k++ {
			gh ^= uint64(at(k))
			gh *= fnvPrime
		}
		feats = append(feats, fmix64(gh)&^featKindMask|featChar)
	}
	return feats
}
