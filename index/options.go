package index

import (
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Options configures an Index. The zero value is valid: EnsureDefaults fills
// every unset field.
type Options struct {
	// K1 is the BM25 term-frequency saturation. Default 1.2.
	K1 float64
	// B is the BM25 length normalisation. Default 0.75.
	B float64
	// Analyzer turns text into terms; documents and queries go through the
	// same one. Default: the project analyzer (index/analysis) when it is
	// available, otherwise SimpleAnalyzer.
	Analyzer Analyzer
	// FS is the filesystem seam. Default vfs.Default.
	FS vfs.FS
	// FlushDocs seals the mutable segment automatically once it holds this
	// many documents: Add freezes it and a background goroutine encodes and
	// persists it (synchronously inside Add when background work is
	// disabled or two frozen segments are already waiting). Default 131072.
	// Negative disables automatic flushes.
	FlushDocs int
	// MergeFactor is the tiered merge fan-in: that many consecutive segments
	// of the same size tier are merged into one. Default 4. Must be >= 2.
	// A search pays a fixed cost per segment (term lookups, first blocks):
	// a Zipf store of 1M records in 8 segments (factor 8) against 2
	// (factor 4), same code, rare terms p50 55-64 -> 40-42 us CPU, at the
	// cost of rewriting each record once per tier it climbs (log4 instead
	// of log8 of the store over FlushDocs; a merge of 1M records is ~1.5 s
	// of CPU).
	MergeFactor int
	// MergeMinDocs is the size of the smallest tier: segments below it all
	// count as tier 0. Default 4096.
	MergeMinDocs int
	// DisableBackgroundMerge turns off the background goroutines (merging,
	// settling and automatic flushing); Merge, Settle and Flush can still
	// be called explicitly. Default false (background work on).
	DisableBackgroundMerge bool
	// SettleAfter: once no document has been added or deleted for this
	// long, the background merger settles the index: it merges the newest
	// sealed segments into one (see Settle and SettleMaxDocs), so that an
	// index at rest is searched as few segments. Default 10 s; negative:
	// never in the background.
	SettleAfter time.Duration
	// SettleMaxDocs bounds a settle: it merges the longest run of the
	// newest sealed segments whose live documents add up to at most this
	// many (about 95 bytes of index a document to rewrite, ~1.9 s of CPU
	// a million here). Default 2,097,152.
	SettleMaxDocs int
	// FilterDrivenRatio chooses the evaluation strategy of a filtered search
	// per segment: when the filter holds fewer documents of the segment than
	// (sum of the query terms' document frequencies) / FilterDrivenRatio,
	// the filter's documents are scored directly; otherwise the postings
	// drive a MaxScore traversal that checks the filter. Default 2.
	FilterDrivenRatio float64
	// FilterCacheBytes bounds the memory the index keeps of filters it has
	// searched under: per sealed segment, one metadata value's documents
	// (an agent's) as a sorted list and as a bitset over the segment, built
	// by the first search that needs them (see filtercache.go). Searches
	// with the same agent filter then skip walking the agent's bitmap.
	// Default 32 MiB (all 100 agents of a 1M-record store, five segments,
	// take ~16 MiB). Negative turns the cache off.
	FilterCacheBytes int64
	// SessionContext indexes each document with the terms of the previous
	// live document of its agent and session as well as its own (BM25
	// only; see context.go). Documents without a session, or without an
	// agent, have no predecessor. Changing it on an existing index rebuilds
	// the index from the Source at Open. Default false.
	SessionContext bool
	// ContextWeight is the weight of an inherited (session-context) term
	// against a document's own, in (0, 1], BM25F-style (see context.go);
	// it is applied in eighths. Changing it on an existing index rebuilds
	// the index from the Source at Open. Default 1: inherited terms count
	// as much as own ones. Measured on LoCoMo (hash embedder, lazy R@10):
	// 1 0.714, 7/8 0.712, 3/4 0.708, 1/2 0.696; on a Chinese chat set lazy
	// R@1 0.300, 0.307, 0.314, 0.328: a weaker inheritance ranks a
	// statement above the replies that inherit its words, and costs
	// conversational recall, where answers are found by their question's
	// words.
	ContextWeight float64
	// ContextSample, with SessionContext, makes a document inherit a
	// proportional sample of its predecessor no longer than its own text
	// (see context.go; without SessionContext it does nothing): each
	// inherited frequency is scaled by min(own, predecessor)/predecessor
	// length, and the length grows by min(own, predecessor) instead of the
	// predecessor's whole length. ContextWeight still applies (in
	// sixteenths). Changing it on an existing index rebuilds the index
	// from the Source at Open. Default false. Measured (hash embedder):
	// bench/workload 100k R@10 all 0.863 against 0.812 without, LoCoMo
	// lazy R@10 0.741 against 0.744 (docs/benchmarks/context-field.md).
	ContextSample bool
	// OnBackgroundError, when set, is called with every error of a
	// background flush or merge, on the background goroutine, after
	// Metrics.FlushErrors or Metrics.MergeErrors has counted it; the error
	// wraps ErrBackground and the cause. A failed flush leaves its segment
	// searchable in memory and is retried by the next flush; a failed merge
	// leaves its inputs in place and is retried at the next flush. The
	// function must not block for long (it holds up background work) and
	// must not call Close. Work stopped by Close is not an error. Default
	// nil: failures are only counted.
	OnBackgroundError func(error)
}

// EnsureDefaults fills unset fields with their documented defaults and
// returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.K1 == 0 {
		o.K1 = 1.2
	}
	if o.B == 0 {
		o.B = 0.75
	}
	if o.Analyzer == nil {
		o.Analyzer = defaultAnalyzer()
	}
	if o.FS == nil {
		o.FS = vfs.Default
	}
	if o.FlushDocs == 0 {
		o.FlushDocs = 131072
	}
	if o.MergeFactor == 0 {
		o.MergeFactor = 4
	}
	if o.MergeMinDocs == 0 {
		o.MergeMinDocs = 4096
	}
	if o.SettleAfter == 0 {
		o.SettleAfter = 10 * time.Second
	}
	if o.SettleMaxDocs == 0 {
		o.SettleMaxDocs = 1 << 21
	}
	if o.FilterDrivenRatio == 0 {
		o.FilterDrivenRatio = 2
	}
	if o.FilterCacheBytes == 0 {
		o.FilterCacheBytes = 32 << 20
	}
	if o.ContextWeight == 0 {
		o.ContextWeight = 1
	}
	return o
}

// Validate reports the first invalid field, wrapping ErrOptions.
func (o *Options) Validate() error {
	switch {
	case o.K1 < 0:
		return fmt.Errorf("%w: K1 %v < 0", ErrOptions, o.K1)
	case o.B < 0 || o.B > 1:
		return fmt.Errorf("%w: B %v outside [0, 1]", ErrOptions, o.B)
	case o.MergeFactor < 2:
		return fmt.Errorf("%w: MergeFactor %d < 2", ErrOptions, o.MergeFactor)
	case o.MergeMinDocs < 1:
		return fmt.Errorf("%w: MergeMinDocs %d < 1", ErrOptions, o.MergeMinDocs)
	case o.SettleMaxDocs < 2:
		return fmt.Errorf("%w: SettleMaxDocs %d < 2", ErrOptions, o.SettleMaxDocs)
	case o.FilterDrivenRatio < 0:
		return fmt.Errorf("%w: FilterDrivenRatio %v < 0", ErrOptions, o.FilterDrivenRatio)
	case !(o.ContextWeight > 0 && o.ContextWeight <= 1):
		return fmt.Errorf("%w: ContextWeight %v outside (0, 1]", ErrOptions, o.ContextWeight)
	}
	return nil
}
