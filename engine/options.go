package engine

import (
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/lazymem/lazymem/engine/embed"
	"github.com/lazymem/lazymem/index"
	"github.com/lazymem/lazymem/segment"
)

// Defaults of Options and Query.
const (
	DefaultMaxTextBytes  = 64 << 10
	DefaultMaxFieldBytes = 256
	DefaultMaxMetaKeys   = 32
	DefaultMaxMetaValues = 64
	DefaultCacheBytes    = 64 << 20
	// DefaultDiskCacheBlockBytes is the default Options.DiskCacheBlockBytes.
	DefaultDiskCacheBlockBytes = 32 << 20
	// DefaultEmbedTimeout is the default Options.EmbedTimeout: long enough
	// for a remote embedder's batch with its retries, short enough that a
	// hung endpoint does not hold cache misses forever.
	DefaultEmbedTimeout = 30 * time.Second

	DefaultK = 10
	// DefaultCandidates is the least number of BM25 candidates of a recall;
	// the default is max(DefaultCandidates, CandidatesPerK*K). Measured: at
	// 1M records, 50 candidates for K=10 keep the planted-fact recall of 200
	// while embedding a quarter as much (docs/BENCHMARKS.md); on LoCoMo 50-200
	// give the same R@10.
	DefaultCandidates = 50
	CandidatesPerK    = 5
	// DefaultDenseWeight is Options.DenseWeight's default for an embedder
	// that recommends none (embed.FusionAdvisor). The embedders the project
	// ships recommend their own (the lexical hash embedder and USE-lite
	// 0.2); one that does not is the caller's, most likely a semantic
	// model, and a semantic embedder needs a larger share for its vectors
	// to count. Measured with test doubles of known quality (the scenario
	// sets' oracle embedder and the oracle with noise, TestScenarioOracle,
	// 36 sets, 1,516 questions; docs/benchmarks/scenarios.md): at 0.5
	// instead of 0.2 the paraphrase and crosslingual classes' hit@5 rise
	// at every quality (perfect .752 / .834 -> .867 / .924; the noise
	// sigma 1 .630 / .786 -> .806 / .903; sigma 2, dense-only paraphrase
	// hit@5 .545, .582 / .745 -> .648 / .772) and no class falls below 0.8
	// (the weakest double costs recency .942 -> .911); it was 0.2, the
	// hash embedder's, before the hash embedder advised its own.
	DefaultDenseWeight  = 0.5
	DefaultSessionTurns = 8
	// MaxK and MaxCandidates bound a query's sizes: a recall is a hot-path
	// call, not an export.
	MaxK            = 1000
	MaxCandidates   = 10000
	MaxSessionTurns = 1000
	// DefaultRRFK is the k of reciprocal-rank fusion, 1/(k+rank): the value
	// of Cormack et al. (2009), robust across collections.
	DefaultRRFK = 60
	// DefaultRetentionInterval is Options.Retention.Interval's default.
	DefaultRetentionInterval = time.Minute
	// DefaultCompactInterval is Options.CompactInterval's default.
	DefaultCompactInterval = time.Hour
)

// Options configures a DB. The zero value is valid: EnsureDefaults fills
// every unset field.
type Options struct {
	// Embedder computes the vectors of the selective stage. Default: the
	// hash embedder (embed.NewHash with its defaults): deterministic,
	// dependency-free, lexical.
	Embedder embed.Embedder
	// DisableEmbedder leaves Embedder nil: only Mode sparse recalls work.
	// Default false.
	DisableEmbedder bool

	// DenseWeight is the share of the dense evidence in weighted fusion
	// for a recall whose Query.DenseWeight is zero, in (0, 1]. Default:
	// the embedder's recommendation (embed.FusionAdvisor: the hash
	// embedder and USE-lite 0.2, an OpenAI-compatible endpoint 0.5),
	// else DefaultDenseWeight (0.5). A lexical embedder repeats BM25's
	// evidence and wants a small weight; a semantic one needs a larger one
	// for its vectors to count (docs/benchmarks/zh-embedders.md).
	DenseWeight float64
	// Candidates is the least number of BM25 candidates of a recall whose
	// Query.Candidates is zero: it takes max(Candidates, CandidatesPerK*K),
	// at most MaxCandidates. Default: the embedder's recommendation (the
	// hash embedder and USE-lite 50, an OpenAI-compatible endpoint 200),
	// else DefaultCandidates.
	Candidates int

	// Construct builds the text that is embedded for a record: the
	// "constructed memory". Default: "Role: Text" ("Caroline: I went to
	// ..."), or Text alone when Role is empty. It must be deterministic: its
	// output is the cache key.
	Construct func(r *Record) string

	// MaxTextBytes bounds Record.Text. Default 64 KiB.
	MaxTextBytes int
	// MaxFieldBytes bounds Agent, Session, Role and every metadata key and
	// value. Default 256.
	MaxFieldBytes int
	// MaxMetaKeys bounds the keys of Record.Meta. Default 32.
	MaxMetaKeys int
	// MaxMetaValues bounds the values of one metadata key. Default 64.
	MaxMetaValues int

	// CacheBytes is the capacity of the in-memory embedding cache
	// (ristretto; the cost of an entry is its vector's bytes plus its key).
	// Default 64 MiB. Negative disables the memory tier.
	CacheBytes int64
	// DiskCacheBlockBytes is the block cache of the on-disk embedding
	// cache (Pebble). Default 32 MiB.
	DiskCacheBlockBytes int64
	// DisableDiskCache keeps embeddings in memory only: a restart
	// re-embeds. Default false (persisted under dir/cache).
	DisableDiskCache bool

	// EmbedTimeout bounds one call to the embedder made by the cache.
	// Recalls missing the same text share one call, which therefore runs
	// detached from the recall that started it: a recall whose context
	// ends stops waiting (its error is its context's) but the call goes on
	// for the others, until it returns, EmbedTimeout passes or the DB
	// closes. Default DefaultEmbedTimeout (30 s).
	EmbedTimeout time.Duration

	// OnBackgroundError, when not nil, receives every error of work the
	// DB runs in the background, which has no caller to return it to (see
	// Metrics.BackgroundErrors, which counts them either way). It is
	// called from background goroutines, possibly concurrently; it must
	// return promptly and must not call Close. Default nil.
	OnBackgroundError func(error)

	// Clock is the time source for records without a Time and for
	// queries without Now. Default time.Now.
	Clock func() time.Time

	// DisableIndexRepair makes Open fail on a corrupt index instead of
	// moving it aside (to dir/index.corrupt-<nanos>) and rebuilding it from
	// the log. Default false: the index is derived data.
	DisableIndexRepair bool

	// DisableSessionContext turns off session context in the index: by
	// default every record is indexed (for BM25 only; the stored and the
	// embedded texts are unchanged) with the words of the previous turn of
	// its agent and session, because in a conversation an answer often
	// shares no word with the question that the turn before it asked. On
	// LoCoMo it lifts R@10 by about 0.06 (docs/benchmarks/locomo.md).
	// When it is false, EnsureDefaults turns Index.SessionContext on;
	// setting both is an error. Changing it on an existing store re-indexes
	// the log at Open.
	DisableSessionContext bool

	// Retention removes records older than a window in the background,
	// except pinned ones (DB.Pin). Default: keep everything.
	Retention RetentionOptions
	// CompactInterval is how often the background compaction runs; it
	// runs only when records were forgotten or expired since the last one
	// (see DB.Compact: it purges their bytes from every file, and its
	// index rebuild makes appends wait). Default 1 hour; negative: never
	// in the background.
	CompactInterval time.Duration

	// MustExist makes Open fail with ErrNoStore when dir holds no store
	// (neither a FORMAT marker nor a log) instead of creating one: tools
	// that only read or maintain a store use it so a mistyped path is an
	// error, not a new empty store. Default false.
	MustExist bool

	// KeepOpenGarbage skips the garbage collection Open runs before it
	// returns (see Open). Default false: Open collects.
	KeepOpenGarbage bool

	// FS is the filesystem the store lives on: the log, the index, the
	// embedding cache and every file the engine itself creates, renames or
	// removes go through it. Default vfs.Default (the OS). Tests pass
	// vfs.NewCrashableMem() to simulate crashes, or an errorfs wrapper to
	// inject I/O errors. Log.FS and Index.FS default to it.
	FS vfs.FS

	// Log configures the append-only log under dir/log. Zero: its defaults
	// (Log.FS: FS).
	Log segment.Options
	// Index configures the index under dir/index. Zero: its defaults
	// (Index.FS: FS).
	Index index.Options

	// Core configures value signals, consolidation and the core memory
	// under dir/core. Zero: its defaults.
	Core CoreOptions

	// WorkingMemory configures the background embedding of a live
	// conversation's latest turns (workmem.go). Zero: its defaults, on
	// when there is an embedder.
	WorkingMemory WorkingMemoryOptions
}

// EnsureDefaults fills unset fields with their defaults and returns o. It
// never changes a field the caller set. Open calls it once, on the DB's own
// copy of the options (with Log.EnsureDefaults and Index.EnsureDefaults):
// later changes to the caller's Options do not reach an open DB.
func (o *Options) EnsureDefaults() *Options {
	if o.Embedder == nil && !o.DisableEmbedder {
		// The hash embedder's defaults are valid, so this cannot fail; if it
		// ever did, Validate reports the missing embedder.
		if h, err := embed.NewHash(embed.HashOptions{}); err == nil {
			o.Embedder = h
		}
	}
	var rec embed.Fusion
	if a, ok := o.Embedder.(embed.FusionAdvisor); ok {
		rec = a.RecommendedFusion()
	}
	if o.DenseWeight == 0 {
		o.DenseWeight = DefaultDenseWeight
		if rec.DenseWeight > 0 && rec.DenseWeight <= 1 {
			o.DenseWeight = rec.DenseWeight
		}
	}
	if o.Candidates == 0 {
		o.Candidates = DefaultCandidates
		if rec.Candidates > 0 && rec.Candidates <= MaxCandidates {
			o.Candidates = rec.Candidates
		}
	}
	if o.Construct == nil {
		o.Construct = DefaultConstruct
	}
	if o.MaxTextBytes == 0 {
		o.MaxTextBytes = DefaultMaxTextBytes
	}
	if o.MaxFieldBytes == 0 {
		o.MaxFieldBytes = DefaultMaxFieldBytes
	}
	if o.MaxMetaKeys == 0 {
		o.MaxMetaKeys = DefaultMaxMetaKeys
	}
	if o.MaxMetaValues == 0 {
		o.MaxMetaValues = DefaultMaxMetaValues
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = DefaultCacheBytes
	}
	if o.DiskCacheBlockBytes == 0 {
		o.DiskCacheBlockBytes = DefaultDiskCacheBlockBytes
	}
	if o.EmbedTimeout == 0 {
		o.EmbedTimeout = DefaultEmbedTimeout
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Retention.Interval == 0 {
		o.Retention.Interval = DefaultRetentionInterval
	}
	if o.CompactInterval == 0 {
		o.CompactInterval = DefaultCompactInterval
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.Log.FS == nil {
		o.Log.FS = o.FS
	}
	if o.Index.FS == nil {
		o.Index.FS = o.FS
	}
	// Session context is on unless DisableSessionContext: a false
	// Index.SessionContext is the zero value, not a choice, so it is
	// turned on; a true one is kept (Validate rejects it together with
	// DisableSessionContext).
	if !o.DisableSessionContext {
		o.Index.SessionContext = true
	}
	o.Core.ensureDefaults()
	o.WorkingMemory.ensureDefaults()
	return o
}

// resolve is Open's one pass over the options: defaults of o and of its
// Log and Index, then Validate.
func (o *Options) resolve() error {
	o.EnsureDefaults()
	o.Log.EnsureDefaults()
	o.Index.EnsureDefaults()
	return o.Validate()
}

// Validate reports the first invalid field, by name. Call it after
// EnsureDefaults.
func (o *Options) Validate() error {
	switch {
	case o.MaxTextBytes < 1:
		return fmt.Errorf("%w: MaxTextBytes = %d, want >= 1", ErrOptions, o.MaxTextBytes)
	case o.MaxFieldBytes < 1:
		return fmt.Errorf("%w: MaxFieldBytes = %d, want >= 1", ErrOptions, o.MaxFieldBytes)
	case o.MaxMetaKeys < 1:
		return fmt.Errorf("%w: MaxMetaKeys = %d, want >= 1", ErrOptions, o.MaxMetaKeys)
	case o.MaxMetaValues < 1:
		return fmt.Errorf("%w: MaxMetaValues = %d, want >= 1", ErrOptions, o.MaxMetaValues)
	case o.DenseWeight < 0 || o.DenseWeight > 1 || o.DenseWeight != o.DenseWeight:
		return fmt.Errorf("%w: DenseWeight = %g, want (0, 1]", ErrOptions, o.DenseWeight)
	case o.Candidates < 0 || o.Candidates > MaxCandidates:
		return fmt.Errorf("%w: Candidates = %d, want 1..%d", ErrOptions, o.Candidates, MaxCandidates)
	case o.EmbedTimeout < 0:
		return fmt.Errorf("%w: EmbedTimeout = %v, want > 0", ErrOptions, o.EmbedTimeout)
	case o.Retention.Window < 0:
		return fmt.Errorf("%w: Retention.Window = %v, want >= 0 (0: forever)", ErrOptions, o.Retention.Window)
	case o.DiskCacheBlockBytes < 0:
		return fmt.Errorf("%w: DiskCacheBlockBytes = %d, want >= 0", ErrOptions, o.DiskCacheBlockBytes)
	case o.Embedder == nil && !o.DisableEmbedder:
		return fmt.Errorf("%w: Embedder is nil (set DisableEmbedder for sparse-only use)", ErrOptions)
	case o.DisableEmbedder && o.Embedder != nil:
		return fmt.Errorf("%w: DisableEmbedder is set but Embedder is not nil", ErrOptions)
	case o.Embedder != nil && o.Embedder.Dim() < 1:
		return fmt.Errorf("%w: Embedder %q has Dim %d", ErrOptions, o.Embedder.Name(), o.Embedder.Dim())
	case o.DisableSessionContext && o.Index.SessionContext:
		return fmt.Errorf("%w: Index.SessionContext is set but DisableSessionContext is too", ErrOptions)
	}
	if err := o.WorkingMemory.validate(); err != nil {
		return err
	}
	lo := o.Log
	if err := lo.EnsureDefaults().Validate(); err != nil {
		return fmt.Errorf("%w: Log: %w", ErrOptions, err)
	}
	if lo.MaxRecordBytes < o.MaxTextBytes+4*o.MaxFieldBytes {
		return fmt.Errorf("%w: Log.MaxRecordBytes = %d is below MaxTextBytes + 4*MaxFieldBytes", ErrOptions, lo.MaxRecordBytes)
	}
	xo := o.Index
	if err := xo.EnsureDefaults().Validate(); err != nil {
		return fmt.Errorf("%w: Index: %w", ErrOptions, err)
	}
	return o.Core.validate()
}

// DefaultConstruct is the default Options.Construct: "Role: Text".
func DefaultConstruct(r *Record) string {
	if r.Role == "" {
		return r.Text
	}
	return r.Role + ": " + r.Text
}
