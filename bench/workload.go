package bench

import (
	"fmt"
	"slices"
	"time"

	"github.com/lazymem/lazymem/bench/workload"
)

// Load generates cfg.Records records of the synthetic workload (ids
// ordinal+1, the log's numbering) and nq keyword queries (2-4 terms, one
// agent, a 7-day window) drawn with qseed.
func Load(cfg workload.Config, nq int, qseed int64) (*Corpus, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("lazymem: bench: workload: %w", err)
	}
	c := &Corpus{Docs: make([]Doc, 0, cfg.Records)}
	g := workload.New(cfg)
	var r workload.Record
	for g.Next(&r) {
		meta := sortMeta(r.Meta)
		for i := range meta {
			// the generator may reuse r between calls: own the slices
			meta[i].Values = slices.Clone(meta[i].Values)
		}
		c.Docs = append(c.Docs, Doc{
			ID:      uint64(len(c.Docs) + 1),
			Time:    r.Time.UnixNano(),
			Agent:   r.Agent,
			Session: r.Session,
			Role:    r.Role,
			Text:    r.Text,
			Meta:    meta,
		})
	}
	for _, q := range workload.KeywordQueries(cfg, nq, qseed) {
		c.Queries = append(c.Queries, Query{Text: q.Text, Agent: q.Agent, Since: nanos(q.Since), Until: nanos(q.Until)})
	}
	return c, nil
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
