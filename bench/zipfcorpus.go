package bench

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/lazymem/lazymem/bench/zipf"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/index"
)

// LoadZipf materialises a bench/zipf corpus (ids ordinal+1, the channel as
// the one metadata key) and perCell queries of every (class, filter) cell,
// drawn with qseed. Each query's Class is "class/filter".
func LoadZipf(cfg zipf.Config, perCell int, qseed int64) (*Corpus, error) {
	recs, err := zipf.Generate(cfg)
	if err != nil {
		return nil, fmt.Errorf("lazymem: bench: zipf corpus: %w", err)
	}
	qs, err := zipf.Queries(cfg, recs, perCell, qseed)
	if err != nil {
		return nil, fmt.Errorf("lazymem: bench: zipf queries: %w", err)
	}
	c := &Corpus{Docs: make([]Doc, len(recs)), Queries: make([]Query, len(qs))}
	channels := make(map[string][]string, len(zipf.Channels))
	for _, ch := range zipf.Channels {
		channels[ch] = []string{ch}
	}
	for i := range recs {
		r := &recs[i]
		c.Docs[i] = Doc{
			ID: uint64(i + 1), Time: r.Time.UnixNano(), Agent: r.Agent, Session: r.Session, Role: r.Role, Text: r.Text,
			Meta: []Field{{Key: "channel", Values: channels[r.Channel]}},
		}
	}
	for i := range qs {
		q := &qs[i]
		c.Queries[i] = Query{Text: q.Text, Agent: q.Agent, Session: q.Session,
			Since: nanos(q.Since), Until: nanos(q.Until), Class: string(q.Class) + "/" + string(q.Filter)}
	}
	return c, nil
}

// ZipfOptions configures a side-by-side run on a Zipf corpus, as
// `lazymem bench --corpus zipf` and TestZipfReport run it.
type ZipfOptions struct {
	// Corpus is the corpus; its Seed is used as given.
	Corpus zipf.Config
	// PerClass is the number of queries per class/filter cell. Default 100.
	PerClass int
	// QuerySeed draws the queries. Used as given.
	QuerySeed int64
	// Dir is the scratch directory of both indexes. Required.
	Dir string
	// Cache, when true, keeps the built indexes in a subdirectory of Dir
	// named after the corpus and reuses them on the next run with the same
	// corpus, queries and options (building Bleve at 1M records takes
	// minutes). The key does not cover the code: empty the directory after
	// a change to either engine's indexing.
	Cache bool
	// SessionContext indexes each record with its session's previous turn,
	// as the engine does by default; it applies to both lazymem loads (the
	// whole engine and the index alone).
	SessionContext bool
	// FilterCacheBytes is lazymem's index.Options.FilterCacheBytes (0: the
	// index's default, negative: off); it does not change the built stores.
	FilterCacheBytes int64
}

// ZipfSideBySide generates the corpus and builds, or reuses, both engines.
func ZipfSideBySide(o ZipfOptions) (*SideBySide, error) {
	if o.PerClass <= 0 {
		o.PerClass = 100
	}
	if o.Dir == "" {
		return nil, fmt.Errorf("%w: ZipfOptions.Dir is required", ErrOptions)
	}
	cfg := o.Corpus
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%w: ZipfOptions.Corpus: %w", ErrOptions, err)
	}
	c, err := LoadZipf(cfg, o.PerClass, o.QuerySeed)
	if err != nil {
		return nil, err
	}
	// The whole engine's ingest is the headline; the index alone second.
	so := SideBySideOptions{Dir: o.Dir, Corpus: c, Index: index.Options{SessionContext: o.SessionContext, FilterCacheBytes: o.FilterCacheBytes},
		Engine: &engine.Options{DisableSessionContext: !o.SessionContext}}
	if o.Cache {
		// Every field that changes the corpus, the queries or the indexes.
		so.CacheKey = fmt.Sprintf("zipf %+v per=%d qseed=%d context=%v", cfg, o.PerClass, o.QuerySeed, o.SessionContext)
		so.Dir = filepath.Join(o.Dir, fmt.Sprintf("zipf-seed%d-n%d-context%v", cfg.Seed, cfg.Records, o.SessionContext))
		if err := os.MkdirAll(so.Dir, 0o755); err != nil {
			return nil, err
		}
	}
	return BuildSideBySide(so)
}
