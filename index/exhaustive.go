package index

import (
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// SearchExhaustive is the reference: it scores every posting of every
// query term with no pruning and sorts. For tests and benchmarks. Like
// Search, when the query has secondary terms (search_secondary.go) and
// at least k records hold a primary term, only those are ranked.
func (x *Index) SearchExhaustive(query string, filter *roaring.Bitmap, k int) ([]Hit, error) {
	if k <= 0 {
		return nil, nil
	}
	s := &searcher{}
	x.analyzeQuery(s, query)
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return nil, ErrClosed
	}
	sc, ok := x.prepare(s)
	if !ok {
		return nil, nil
	}
	per := map[uint32][]float64{}
	prim := map[uint32]bool{} // the records holding a primary term
	var p postingsIter
	for _, seg := range x.searchSegs() {
		tomb := x.tombOf(seg)
		for q, t := range s.terms {
			if !seg.term(t.text, &s.ti) {
				continue
			}
			p.reset(&s.ti)
			for p.Next() {
				d := p.At()
				if tomb.Contains(d) || (filter != nil && !filter.Contains(d)) {
					continue
				}
				v := per[d]
				if v == nil {
					v = make([]float64, len(s.terms))
					per[d] = v
				}
				v[q] = sc.score(t.w, p.TF(), seg.docLen(d))
				if !t.sec {
					prim[d] = true
				}
			}
			if p.Err() != nil {
				return nil, p.Err()
			}
		}
	}
	hits := make([]Hit, 0, len(per))
	onlyPrim := s.hasSec && len(prim) >= k
	for d, v := range per {
		if onlyPrim && !prim[d] {
			continue
		}
		hits = append(hits, Hit{ID: uint64(d), Score: canonical(v)})
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits, nil
}
