package analysis

import "fmt"

// Defaults.
const (
	// DefaultMaxTokenLen is the default Options.MaxTokenLen, in bytes. It keeps
	// hex digests (sha256 is 64 characters) and drops base64 blobs.
	DefaultMaxTokenLen = 64
	// DefaultCacheSize is the default Options.CacheSize, in entries.
	DefaultCacheSize = 1 << 16
	// maxCacheSize bounds Options.CacheSize (the largest table takes 96
	// bytes per entry once the cache has grown to it).
	maxCacheSize = 1 << 24
	// maxMaxTokenLen bounds Options.MaxTokenLen so that scratch buffers stay
	// small and a term always fits comfortably in an index key.
	maxMaxTokenLen = 1024
)

// Options configures an Analyzer.
//
// The zero Options is special: New treats it exactly as DefaultOptions(), so
// a caller that forgets to configure the analyzer still gets the analysis the
// index was built with. Any other value is taken as given after
// EnsureDefaults, which only fills numeric fields; in particular
// Options{MaxTokenLen: 32} has stemming and stopwords off.
type Options struct {
	// Stem applies the English Porter2 (Snowball) stemmer to words made only
	// of ASCII letters and apostrophes. Default (DefaultOptions): true.
	Stem bool
	// Stopwords drops the English stopwords of StopWords(). The dropped word
	// still takes its position, so phrase distances are kept.
	// Default (DefaultOptions): true.
	Stopwords bool
	// CJKUnigrams also emits each CJK character as a unigram, at the
	// position of the bigram it starts, so that a one-character query
	// finds longer runs and a Chinese paraphrase that shares characters
	// but no two-character word still matches. It roughly doubles the
	// postings of CJK text; BM25 still ranks the bigram matches first.
	// Default (DefaultOptions): true. Measured on the Chinese retrieval
	// set of bench/zhmem (145 questions, hash embedder): sparse R@1/5/10
	// .300/.600/.700 -> .345/.652/.754, R@50 .777 -> .928 (the lazy
	// mode's candidate pool); lazy .352/.631/.728 -> .390/.679/.775.
	CJKUnigrams bool
	// MaxTokenLen is the longest term kept, in bytes after folding. Longer
	// terms are dropped (an identifier's parts are still emitted when the
	// whole is too long). Default DefaultMaxTokenLen (64); at most 1024.
	MaxTokenLen int
	// CacheSize sizes the term cache (surface form -> term): its largest
	// table has 2*CacheSize slots of 48 bytes and is replaced once three
	// quarters are filled. The cache makes steady-state analysis
	// allocation-free for repeated words and hides the stemmer's cost. Its
	// table starts small and doubles as it fills, up to the largest (6 MiB
	// by default; while it is replaced, the previous table is kept too),
	// plus each cached term. Default
	// DefaultCacheSize (65536); at most 1<<24; a negative value disables the
	// cache.
	CacheSize int
}

// DefaultOptions returns the options the index uses: stemming, stopwords
// and CJK unigrams on, DefaultMaxTokenLen, DefaultCacheSize.
func DefaultOptions() Options {
	return Options{Stem: true, Stopwords: true, CJKUnigrams: true, MaxTokenLen: DefaultMaxTokenLen, CacheSize: DefaultCacheSize}
}

// EnsureDefaults fills zero numeric fields with their defaults and returns
// the receiver. A zero Options becomes DefaultOptions().
func (o *Options) EnsureDefaults() *Options {
	if *o == (Options{}) {
		*o = DefaultOptions()
		return o
	}
	if o.MaxTokenLen == 0 {
		o.MaxTokenLen = DefaultMaxTokenLen
	}
	if o.CacheSize == 0 {
		o.CacheSize = DefaultCacheSize
	}
	return o
}

// Validate reports options that cannot work. Call it after EnsureDefaults.
func (o *Options) Validate() error {
	if o.MaxTokenLen < 1 || o.MaxTokenLen > maxMaxTokenLen {
		return fmt.Errorf("%w: MaxTokenLen %d not in [1, %d]", ErrInvalidOptions, o.MaxTokenLen, maxMaxTokenLen)
	}
	if o.CacheSize > maxCacheSize {
		return fmt.Errorf("%w: CacheSize %d above %d", ErrInvalidOptions, o.CacheSize, maxCacheSize)
	}
	return nil
}
