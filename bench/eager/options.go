package eager

import (
	"fmt"
	"runtime"

	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/engine/embed"
)

// Defaults of Options.
const (
	DefaultEmbedBatch   = 960
	DefaultOversample   = 4
	DefaultHNSWM        = 16
	DefaultHNSWEfSearch = 200
	DefaultHNSWMl       = 0.25
)

// Options configures a baseline. The zero value is invalid only for
// Embedder, which is required.
type Options struct {
	// Embedder embeds records at write time and queries at read time.
	// Required. New wraps it in a Meter (Baseline.Usage reads it).
	Embedder embed.Embedder
	// APIBatch is the texts per request of the modelled remote API the
	// Meter counts requests for. Default DefaultAPIBatch (96).
	APIBatch int
	// EmbedBatch is the most texts passed to one Embed call at ingest.
	// Default 960: ten requests of 96 texts, so the modelled request count
	// is the minimum, ceil(texts/96), and the hash embedder uses every core.
	EmbedBatch int
	// Construct builds the text embedded for a record. Default: lazymem's
	// engine.DefaultConstruct, "Role: Text".
	Construct func(r *workload.Record) string
	// Oversample is the factor by which chromem and hnsw over-ask when a
	// query has a time window they must post-filter. Default 4.
	Oversample int
	// HNSWM is the HNSW graph's maximum neighbours per node. Default 16.
	HNSWM int
	// HNSWEfSearch is the HNSW candidate list size (construction and
	// search). Default 200: on the hash embedder's vectors of 3,000
	// workload records the graph's top 10 holds 100% of the exact top 10
	// at 200, 93% at 20 (TestHNSWGraphRecall).
	HNSWEfSearch int
	// HNSWMl is the probability that an HNSW node also lives on the next
	// layer up (its level is geometric). Default 0.25.
	HNSWMl float64
	// Seed seeds HNSW's level generator (one stream per agent graph, derived
	// from Seed and the agent's name). Used as given; 0 is a valid seed.
	Seed int64
	// Concurrency is chromem's AddConcurrently concurrency. Default
	// runtime.GOMAXPROCS(0).
	Concurrency int
}

// EnsureDefaults fills unset fields and returns o.
func (o *Options) EnsureDefaults() *Options {
	if o.APIBatch <= 0 {
		o.APIBatch = DefaultAPIBatch
	}
	if o.EmbedBatch <= 0 {
		o.EmbedBatch = DefaultEmbedBatch
	}
	if o.Construct == nil {
		o.Construct = DefaultConstruct
	}
	if o.Oversample <= 0 {
		o.Oversample = DefaultOversample
	}
	if o.HNSWM <= 0 {
		o.HNSWM = DefaultHNSWM
	}
	if o.HNSWEfSearch <= 0 {
		o.HNSWEfSearch = DefaultHNSWEfSearch
	}
	if o.HNSWMl <= 0 {
		o.HNSWMl = DefaultHNSWMl
	}
	if o.Concurrency <= 0 {
		o.Concurrency = runtime.GOMAXPROCS(0)
	}
	return o
}

// Validate reports the first invalid field. Call it after EnsureDefaults.
func (o *Options) Validate() error {
	switch {
	case o.Embedder == nil:
		return fmt.Errorf("%w: Embedder is required", ErrOptions)
	case o.Embedder.Dim() <= 0:
		return fmt.Errorf("%w: Embedder.Dim() = %d", ErrOptions, o.Embedder.Dim())
	case o.HNSWMl >= 1:
		return fmt.Errorf("%w: HNSWMl = %g, want (0, 1)", ErrOptions, o.HNSWMl)
	}
	return nil
}

// DefaultConstruct is lazymem's default constructed text for a workload
// record: engine.DefaultConstruct of the same role and text.
func DefaultConstruct(r *workload.Record) string {
	return engine.DefaultConstruct(&engine.Record{Role: r.Role, Text: r.Text})
}
