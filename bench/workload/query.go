package workload

import (
	"math/rand/v2"
	"time"
)

// Query is a question over a generated corpus.
type Query struct {
	Text  string
	Agent string
	// Since and Until bound the records' time, [Since, Until); zero means
	// unbounded.
	Since, Until time.Time
	// Relevant holds the ordinals (0-based, generation order) of the records
	// that answer the query, known by construction. Empty for keyword
	// queries, which are for latency, not recall.
	Relevant []int
	// Kind is "planted", "paraphrase", "temporal" or "keyword".
	Kind string
	// Answer is the planted value (e.g. "7731"); empty for keyword queries.
	Answer string
	// Fact names the family of the planted fact (e.g. "badge", "pool").
	Fact string
}

// KeywordQueries returns n BM25-style queries of 2 to 4 terms drawn from the
// generator's vocabulary, each scoped to one agent and a 7-day [Since, Until)
// window inside [cfg.Start, cfg.Start+cfg.Span). The first term is a
// frequent word (Zipf rank draw), the second a rarer one (uniform over the
// ranks past the 50 most frequent), and the optional third and fourth a
// technology name or a long-tail identifier, so posting lists of very
// different lengths are intersected. The result depends only on cfg's
// defaults-filled Agents, Start, Span and ZipfS, on n and on seed (not on
// cfg.Seed or Records), so the same queries can be run against corpora of
// every size. An invalid cfg yields nil.
func KeywordQueries(cfg Config, n int, seed int64) []Query {
	cfg.EnsureDefaults()
	if cfg.Validate() != nil || n <= 0 {
		return nil
	}
	v := vocab()
	r := rand.New(rand.NewPCG(uint64(seed), 0x6b6579776f7264))
	zNoun := newZipf(r, cfg.ZipfS, len(v.nouns))
	zTail := newZipf(r, cfg.ZipfS, len(v.tail))
	zTech := newZipf(r, cfg.ZipfS, len(v.tech))
	week := 7 * 24 * time.Hour
	out := make([]Query, 0, n)
	var b []byte
	for range n {
		b = b[:0]
		b = append(b, v.nouns[zNoun.next()]...)
		b = append(b, ' ')
		switch r.IntN(3) {
		case 0:
			b = append(b, v.nouns[50+r.IntN(len(v.nouns)-50)]...)
		case 1:
			b = append(b, v.verbs[50+r.IntN(len(v.verbs)-50)]...)
		default:
			b = append(b, v.adjs[50+r.IntN(len(v.adjs)-50)]...)
		}
		for k := r.IntN(3); k > 0; k-- {
			b = append(b, ' ')
			if r.IntN(2) == 0 {
				b = append(b, v.tech[zTech.next()]...)
			} else {
				b = append(b, v.tail[zTail.next()]...)
			}
		}
		q := Query{Text: string(b), Agent: AgentID(r.IntN(cfg.Agents), cfg.Agents), Kind: "keyword"}
		if cfg.Span > week {
			q.Since = cfg.Start.Add(time.Duration(r.Int64N(int64(cfg.Span - week))))
			q.Until = q.Since.Add(week)
		} else {
			q.Since, q.Until = cfg.Start, cfg.Start.Add(cfg.Span)
		}
		out = append(out, q)
	}
	return out
}
