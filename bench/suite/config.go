package suite

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/lazymem/lazymem/bench/eager"
)

// Defaults of Config.
const (
	DefaultRecords        = 10_000
	DefaultQueries        = 300
	DefaultKeywordQueries = 100
	DefaultK              = 10
	DefaultBatch          = 960
	// DefaultLatencyPerCall is the modelled latency of one request to a
	// remote embedding API (up to 96 texts), used with Embedder
	// "hash+latency": the order of a hosted embedding endpoint's round trip.
	DefaultLatencyPerCall = 150 * time.Millisecond
	// DefaultChromemQueries and ChromemLimitAbove: see Config.QueryLimit.
	DefaultChromemQueries = 100
	ChromemLimitAbove     = 200_000
)

// Embedder names.
const (
	EmbedderHash        = "hash"
	EmbedderHashLatency = "hash+latency"
)

// SystemLazymem is lazymem's name in reports.
const SystemLazymem = "lazymem"

// Systems are the systems Run compares by default, lazymem first.
var Systems = append([]string{SystemLazymem}, eager.Systems...)

// Config is one comparison run.
type Config struct {
	// Records is the corpus size. Default 10,000 (the suite reports 10k,
	// 100k and 1M).
	Records int `json:"records"`
	// Queries is the number of labelled questions (planted, paraphrase,
	// temporal, rotating) asked of every system. Default 300. Fewer are
	// asked when the corpus has too few planted facts.
	Queries int `json:"queries"`
	// KeywordQueries is the number of 2-4 term queries (agent + 7-day window,
	// no labels) added for latency. Default 100; negative: none.
	KeywordQueries int `json:"keyword_queries"`
	// Seed seeds the workload (records, questions, keyword queries) and
	// HNSW. Used as given.
	Seed int64 `json:"seed"`
	// Embedder is "hash" (default: the near-free hash embedder, timed as
	// it is) or "hash+latency" (the same vectors; the report adds the
	// remote-API latency model, LatencyPerCall per request).
	Embedder string `json:"embedder"`
	// LatencyPerCall is the modelled latency of one API request. Default 0
	// for "hash", DefaultLatencyPerCall (150 ms) for "hash+latency".
	// When positive the report gives modelled figures beside the measured
	// ones.
	LatencyPerCall time.Duration `json:"latency_per_call"`
	// APIBatch is the most texts per modelled request. Default 96.
	APIBatch int `json:"api_batch"`
	// K is the number of results per query. Default 10.
	K int `json:"k"`
	// Candidates is lazymem's Query.Candidates: the BM25 hits its
	// selective stage embeds (through the cache). Default 0: the engine's
	// default (max(engine.DefaultCandidates, engine.CandidatesPerK*K): 50
	// for K=10).
	Candidates int `json:"candidates,omitempty"`
	// DisableSessionContext opens lazymem's store without session context
	// (engine.Options.DisableSessionContext), for ablations. Default false:
	// the engine's default.
	DisableSessionContext bool `json:"disable_session_context,omitempty"`
	// Live makes lazymem's clock follow the stream while it ingests (each
	// batch's last record is "now"), so that its working memory treats
	// the history as a live conversation and embeds its latest turns in
	// the background, within its bounds (engine.WorkingMemoryOptions);
	// queries run on the real clock. Default false: the records are
	// history (the workload's times are in the past), and the working
	// memory embeds none of them.
	Live bool `json:"live,omitempty"`
	// ContextSample and ContextWeight set lazymem's rule for inherited
	// words (index.Options.ContextSample, ContextWeight), for ablations.
	// Zero: the index's defaults.
	ContextSample bool    `json:"context_sample,omitempty"`
	ContextWeight float64 `json:"context_weight,omitempty"`
	// Batch is the number of records per write call. Default 960: ten
	// modelled API requests of 96 texts per eager write, none partly empty.
	Batch int `json:"batch"`
	// Systems are the systems compared, by name: "lazymem", "chromem",
	// "hnsw", "flat". Default all of them.
	Systems []string `json:"systems"`
	// QueryLimit caps, per system name, the queries that system is asked:
	// it then answers every (total/limit)-th query (so the kinds stay mixed),
	// its recall is over those, and its end-to-end time extrapolates its
	// mean query time to all the queries (marked in the table). For systems
	// too slow to answer every query at 1M records within the run's budget
	// (chromem-go scans every document per query: 2-3 s a query at 1M on 2
	// cores, so 1k queries would take about an hour). Default (nil): chromem
	// answers DefaultChromemQueries queries when Records exceeds
	// ChromemLimitAbove, so a 1M run stays well under 30 minutes; every
	// other system answers every query. A non-nil empty map: no limit.
	QueryLimit map[string]int `json:"query_limit,omitempty"`
	// Dir is where lazymem's temporary store is created (and removed).
	// Default os.TempDir().
	Dir string `json:"-"`
	// Progress, when not nil, receives one line per phase and per tenth
	// of the records written.
	Progress io.Writer `json:"-"`
}

// EnsureDefaults fills unset fields and returns c.
func (c *Config) EnsureDefaults() *Config {
	if c.Records == 0 {
		c.Records = DefaultRecords
	}
	if c.Queries == 0 {
		c.Queries = DefaultQueries
	}
	if c.KeywordQueries == 0 {
		c.KeywordQueries = DefaultKeywordQueries
	}
	if c.KeywordQueries < 0 {
		c.KeywordQueries = -1
	}
	if c.Embedder == "" {
		c.Embedder = EmbedderHash
	}
	if c.LatencyPerCall == 0 && c.Embedder == EmbedderHashLatency {
		c.LatencyPerCall = DefaultLatencyPerCall
	}
	if c.APIBatch <= 0 {
		c.APIBatch = eager.DefaultAPIBatch
	}
	if c.K <= 0 {
		c.K = DefaultK
	}
	if c.Batch <= 0 {
		c.Batch = DefaultBatch
	}
	if c.QueryLimit == nil && c.Records > ChromemLimitAbove {
		c.QueryLimit = map[string]int{"chromem": DefaultChromemQueries}
	}
	if len(c.Systems) == 0 {
		c.Systems = slices.Clone(Systems)
	}
	return c
}

// Validate reports the first invalid field. Call it after EnsureDefaults.
func (c *Config) Validate() error {
	switch {
	case c.Records < 1:
		return fmt.Errorf("%w: records = %d, want >= 1", ErrConfig, c.Records)
	case c.Queries < 1:
		return fmt.Errorf("%w: queries = %d, want >= 1", ErrConfig, c.Queries)
	case c.Embedder != EmbedderHash && c.Embedder != EmbedderHashLatency:
		return fmt.Errorf("%w: embedder %q, want %q or %q", ErrConfig, c.Embedder, EmbedderHash, EmbedderHashLatency)
	case c.LatencyPerCall < 0:
		return fmt.Errorf("%w: latency per call %v < 0", ErrConfig, c.LatencyPerCall)
	case c.Candidates < 0 || c.Candidates > 10000:
		return fmt.Errorf("%w: candidates = %d, want [0, 10000]", ErrConfig, c.Candidates)
	case c.K > 1000:
		return fmt.Errorf("%w: k = %d, want <= 1000", ErrConfig, c.K)
	}
	for _, s := range c.Systems {
		if !slices.Contains(Systems, s) {
			return fmt.Errorf("%w: unknown system %q (want one of %v)", ErrConfig, s, Systems)
		}
	}
	return nil
}
