package engine

import (
	"context"
	"fmt"
	"strings"
)

// A source proposes candidates for the selective stage: it reads the plan
// (the filter bitmap, the texts, the candidates proposed before it) and
// adds to p.cands through p.propose. Sources run in the order of
// broadSources; a later one may depend on what the earlier ones found.
type source interface {
	candidates(ctx context.Context, p *plan) error
}

// broadSources are the candidate sources of ModeLazy and ModeSparse.
var broadSources = []source{bm25Source{}, latestSource{}, sessionSource{}}

// sourceSet is the set of sources that proposed a candidate.
type sourceSet uint8

const (
	fromBM25 sourceSet = 1 << iota
	fromLatest
	fromSession
)

// propose adds id to the candidates, or marks it as also proposed by from
// when it is one already; it returns the candidate and whether it is new.
func (p *plan) propose(id uint64, from sourceSet) (*cand, bool) {
	if j, ok := p.pos[id]; ok {
		c := &p.cands[j]
		c.from |= from
		return c, false
	}
	p.pos[id] = len(p.cands)
	p.cands = append(p.cands, cand{id: id, from: from})
	return &p.cands[len(p.cands)-1], true
}

// bm25Source: the top Query.Candidates BM25 hits of the text within the
// filter.
type bm25Source struct{}

func (bm25Source) candidates(_ context.Context, p *plan) error {
	st := &p.res.Stats
	if st.Filtered == 0 || strings.TrimSpace(p.text) == "" {
		return nil
	}
	hits, err := p.db.idx.Search(p.text, p.bm, p.q.Candidates, nil)
	if err != nil {
		return fmt.Errorf("lazymem: engine: search: %w", err)
	}
	for i, h := range hits {
		c, _ := p.propose(h.ID, fromBM25)
		c.sparse, c.sparseRank = h.Score, i+1
	}
	st.Hits = len(hits)
	return nil
}

// latestSource: when the query has no text, or a time expression and no
// other word that matched ("what happened yesterday?"), the latest records
// of the filter, which the dense stage then ranks. Without a time
// expression a query matching nothing returns nothing.
type latestSource struct{}

func (latestSource) candidates(_ context.Context, p *plan) error {
	st := &p.res.Stats
	if st.Filtered == 0 || st.Hits > 0 || (strings.TrimSpace(p.text) != "" && st.TimeExpr == "") {
		return nil
	}
	it := p.bm.ReverseIterator()
	for it.HasNext() && len(p.cands) < p.q.Candidates {
		p.propose(uint64(it.Next()), fromLatest)
	}
	return nil
}

// sessionSource: the latest Query.SessionTurns turns of
// Query.CurrentSession that pass the filter: the thread the agent is in.
type sessionSource struct{}

func (sessionSource) candidates(_ context.Context, p *plan) error {
	q, st := p.q, &p.res.Stats
	if st.Filtered == 0 || q.CurrentSession == "" || q.SessionTurns <= 0 {
		return nil
	}
	sf := p.filter
	sf.Sessions = []string{q.CurrentSession}
	sb, err := p.db.idx.Filter(&sf)
	if err != nil {
		return fmt.Errorf("lazymem: engine: session filter: %w", err)
	}
	sb.And(p.bm)
	it := sb.ReverseIterator()
	for n := 0; it.HasNext() && n < q.SessionTurns; n++ {
		c, added := p.propose(uint64(it.Next()), fromSession)
		c.session = true
		if added {
			st.SessionTurns++
		}
	}
	return nil
}
