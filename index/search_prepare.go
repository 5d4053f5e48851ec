package index

import "slices"

// A query's setup, before any segment is searched: its analysis, each
// term's lookup in every segment and the global statistics. Every query
// pays it whatever it matches; see lookupAll for what the lookups cost.

// analyzeQuery fills s.terms with the distinct query terms, sorted (the
// canonical summation order) with their query frequencies: query's
// analysed terms and the terms given as they are.
func (x *Index) analyzeQuery(s *searcher, query string, terms ...string) {
	s.scratch = x.opts.Analyzer.Terms(s.scratch[:0], query)
	for _, t := range terms {
		if t != "" {
			s.scratch = append(s.scratch, t)
		}
	}
	slices.Sort(s.scratch)
	s.terms = s.terms[:0]
	for i, t := range s.scratch {
		if i > 0 && t == s.scratch[i-1] {
			s.terms[len(s.terms)-1].qtf++
			continue
		}
		s.terms = append(s.terms, qterm{text: t, qtf: 1})
	}
	coverCJK(s.terms)
}

// prepare computes the global statistics of the query terms; it drops
// terms no live document holds. Callers hold x.mu.
func (x *Index) prepare(s *searcher) (scorer, bool) {
	// Own terms of session-context documents count ownWeight times in tf
	// and length: k1 scales with them, so a document's score depends on
	// the weighting only through what it inherits.
	sc := scorer{k1: x.opts.K1 * float64(x.ownWeight()), b: x.opts.B}
	if x.nLive == 0 {
		return sc, false
	}
	sc.avgdl = float64(x.sumLive) / float64(x.nLive)
	if sc.avgdl == 0 {
		sc.avgdl = 1
	}
	if len(s.iters) < 1 {
		s.iters = make([]postingsIter, 1)
	}
	s.segs = append(append(s.segs[:0], x.segs...), x.mut)
	if x.amend != nil {
		s.segs = append(s.segs, x.amend)
	}
	segs := s.segs
	// Each term is looked up once per segment per query, all pairs in one
	// staged pass (lookupAll): the statistics here and the scoring loops
	// read s.tis.
	nseg, nt := len(segs), len(s.terms)
	if cap(s.tis) < nt*nseg {
		s.tis = make([]termInfo, nt*nseg)
	}
	s.tis = s.tis[:nt*nseg]
	if cap(s.idx) < nt*nseg {
		s.idx = make([]int, nt*nseg)
	}
	if cap(s.hs) < nt {
		s.hs = make([]uint64, nt)
	}
	s.texts = s.texts[:0]
	for i := range s.terms {
		s.texts = append(s.texts, s.terms[i].text)
	}
	s.sink += lookupAll(segs, s.texts, s.tis, s.hs[:nt], s.idx[:nt*nseg])
	kept := s.terms[:0]
	for q, t := range s.terms {
		row := s.tis[q*nseg : (q+1)*nseg]
		var df uint64
		for si, seg := range segs {
			if ti := &row[si]; ti.df > 0 {
				df += uint64(ti.df)
				if seg.nDeleted > 0 {
					df -= uint64(seg.deletedDF(t.text, ti, x.tombOf(seg), &s.iters[0]))
				}
			}
		}
		if df == 0 {
			continue
		}
		if len(kept) < q {
			// Rows follow the kept terms (s.tis[q*nseg+si] is term q's).
			copy(s.tis[len(kept)*nseg:(len(kept)+1)*nseg], row)
		}
		t.w = idf(x.nLive, df) * t.qtf * (x.opts.K1 + 1)
		kept = append(kept, t)
	}
	s.terms = kept
	s.hasSec = hasPrimaryAndSecondary(s.terms)
	if len(s.iters) < len(s.terms) {
		s.iters = make([]postingsIter, len(s.terms))
	}
	if cap(s.tmp) < len(s.terms) {
		s.tmp = make([]float64, len(s.terms))
	}
	s.tmp = s.tmp[:len(s.terms)]
	s.resetTF1(len(s.terms))
	return sc, len(s.terms) > 0
}

func (x *Index) getSearcher() *searcher {
	if s, ok := x.pool.Get().(*searcher); ok {
		return s
	}
	return &searcher{}
}
