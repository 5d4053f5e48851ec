package bench

import (
	"fmt"

	"github.com/lazymem/lazymem/bench/zipf"
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
