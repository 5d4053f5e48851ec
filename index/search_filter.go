package index

import (
	"github.com/RoaringBitmap/roaring/v2"
)

// filterDriven scores the filter's documents in the segment directly,
// with MaxScore's partition of the terms: once the lowest-bound terms
// ("non-essential") cannot lift a document over the threshold by
// themselves, a filter document is first probed in the essential terms
// only, and the non-essential ones (typically the frequent, low-idf terms,
// whose postings span the most blocks) are sought only for a document
// that matched an essential term and whose bound still beats the
// threshold; a filter document that matched no essential term sends the
// filter iterator straight to the next essential posting. Profile lesson
// (agent-only recall at 1M records, 10k filter documents): seeking every
// term for every filter document decoded a posting block per document for
// the frequent terms, 80% of the search.
//
// kept, when not nil, holds the filter's documents of the segment as a
// slice (filtercache.go): the loop walks and gallops in it instead of the
// bitmap's containers.
func (x *Index) filterDriven(s *searcher, sc *scorer, seg *segment, filter *roaring.Bitmap, kept *fcEntry, tomb *roaring.Bitmap) {
	m := len(s.segT)
	order := s.segT
	prefix := s.boundPrefix()
	h := &s.heap
	tmp := s.tmp
	theta := h.threshold()
	fe := s.forced // terms [0, fe) are non-essential
	for fe < m && prefix[fe] <= theta {
		fe++
	}
	it := &s.fit.it
	var ids []uint32
	pos := 0
	if kept != nil {
		ids = kept.ids
	} else {
		s.fit.reset(filter, seg.lo)
	}
	for fe < m {
		var doc uint32
		if kept != nil {
			if pos == len(ids) {
				break
			}
			doc = ids[pos]
			pos++
		} else {
			if !it.HasNext() {
				break
			}
			doc = it.Next()
		}
		if doc > seg.hi {
			break
		}
		if tomb != nil && tomb.Contains(doc) {
			continue
		}
		// Essential terms.
		matched := false
		var norm float64
		sum := 0.0
		next := uint32(endDoc) // the first essential posting >= doc
		for i := fe; i < m; i++ {
			p := &s.iters[i]
			if p.Seek(doc) && p.At() == doc {
				if !matched {
					norm = sc.norm(seg.docLen(doc))
					matched = true
				}
				v := scoreNorm(order[i].w, p.ProbeTF(), norm)
				tmp[order[i].q] = v
				sum += v
			}
			next = min(next, p.At())
		}
		if !matched {
			// At most prefix[fe-1] <= theta from the other terms. No filter
			// document before the next essential posting can do better:
			// leap to it (rare essential terms skip most of the filter).
			if next == endDoc || next > seg.hi {
				break
			}
			if kept != nil {
				pos = gallop(ids, pos, next)
			} else {
				it.AdvanceIfNeeded(next)
			}
			continue
		}
		// Non-essential terms, unless their bounds cannot lift the sum.
		_, pruned := s.nonEssential(sc, fe, doc, norm, sum, theta, true, -1)
		score := canonical(tmp)
		if pruned {
			continue
		}
		if h.push(uint64(doc), score) {
			theta = h.threshold()
			for fe < m && prefix[fe] <= theta {
				fe++
			}
		}
	}
}

// boundPrefix sorts the segment's terms by upper bound, ascending, resets
// their block bounds and returns the bounds' prefix sums: prefix[i] is the
// sum of the bounds of terms [0, i], so the terms [0, fe) whose prefix is
// at most the threshold are the non-essential ones (MaxScore's split).
func (s *searcher) boundPrefix() []float64 {
	m := len(s.segT)
	s.sortTerms()
	s.resetBounds(m)
	if cap(s.prefix) < m {
		s.prefix = make([]float64, m)
	}
	prefix := s.prefix[:m]
	acc := 0.0
	for i := range s.segT {
		acc += s.segT[i].ub
		prefix[i] = acc
	}
	return prefix
}
