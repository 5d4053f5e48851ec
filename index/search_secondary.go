package index

import (
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/lazymem/lazymem/index/analysis"
)

// Secondary terms. A CJK query is analysed into its character bigrams
// and its single characters (analysis.Options.CJKUnigrams), and the
// characters are shared by many words: their postings are long and,
// CJK records being a minority of a mixed corpus, their idf is not
// small, so MaxScore keeps them essential and scores nearly every record
// holding one of the query's characters. Profile lesson (Zipf 200k,
// cjk/none, 884 µs a query): the characters' postings were most of the
// candidates. Dropping the characters a bigram covers took the cell to
// 36 µs but lost recall on the Chinese set (bench/zhmem, sparse R@10
// 0.828 -> 0.772): a record sharing only characters with a question is
// often its answer. Ranking the characters' records exactly in a second
// pass, after the records holding a bigram, saved nothing: on the Zipf
// corpora a quarter of the top 10 holds no query bigram, so the pass
// ran for every query.
//
// So the query's characters that one of its bigrams covers are
// secondary, and the query means: rank the records holding a primary
// term (a bigram, a Latin word, a character no bigram covers) by the
// BM25 of all the query's terms; when fewer than k records hold one,
// rank every matching record, as without the rule. A record that shares
// only characters with the query still answers it when the query's
// words find too little. On the Chinese set recall is unchanged at the
// engine's 50 candidates and within a question at 10 (sparse R@1/5/10
// .421/.686/.710 -> .428/.679/.710).
//
// With the rule the secondary terms are non-essential from the start
// (s.forced): candidates come from the primary terms' postings, and the
// characters are only probed for them.

// before orders segment terms for sortTerms: the forced non-essential
// (secondary) terms first, then by upper bound.
func (t *segTerm) before(u *segTerm, forced bool) bool {
	if forced && t.sec != u.sec {
		return t.sec
	}
	return t.ub < u.ub
}

// coverCJK marks the query terms that are one CJK character held by a
// CJK bigram of the query as secondary.
func coverCJK(terms []qterm) {
	for i := range terms {
		if cjkChars(terms[i].text) != 1 {
			continue
		}
		for j := range terms {
			u := terms[j].text
			if cjkChars(u) != 2 {
				continue
			}
			_, n := utf8.DecodeRuneInString(u)
			if u[:n] == terms[i].text || u[n:] == terms[i].text {
				terms[i].sec = true
				break
			}
		}
	}
}

// cjkChars returns the number of characters of t, a CJK term of one or
// two characters, or 0 for any other term.
func cjkChars(t string) int {
	if len(t) == 0 || t[0] < utf8.RuneSelf {
		return 0
	}
	n := 0
	for _, r := range t {
		if !analysis.IsCJK(r) || n == 2 {
			return 0
		}
		n++
	}
	return n
}

// hasPrimaryAndSecondary reports whether terms hold both kinds: only
// then does the rule restrict the ranked records.
func hasPrimaryAndSecondary(terms []qterm) bool {
	var sec, prim bool
	for i := range terms {
		if terms[i].sec {
			sec = true
		} else {
			prim = true
		}
	}
	return sec && prim
}

// searchSegment scores one segment's terms (s.segT); with primary set,
// only the records holding a primary term.
func (x *Index) searchSegment(s *searcher, sc *scorer, seg *segment, filter, tomb *roaring.Bitmap, fc uint64, primary bool) error {
	s.forced = 0
	if primary {
		for i := range s.segT {
			if s.segT[i].sec {
				s.forced++
			}
		}
		if s.forced == len(s.segT) {
			s.forced = 0
			return nil // no record here holds a primary term
		}
	}
	sumDF := 0.0
	for i := range s.segT {
		sumDF += float64(s.segT[i].ti.df)
	}
	driven := filter != nil && float64(fc)*x.opts.FilterDrivenRatio < sumDF
	var kept *fcEntry // the filter's documents here as the index keeps them
	if filter != nil && s.fkey != nil {
		kept = x.fcache.get(seg, s.fkey, fc, !driven)
	}
	switch {
	case driven:
		x.filterDriven(s, sc, seg, filter, kept, tomb)
	case kept != nil:
		x.maxScore(s, sc, seg, nil, &kept.dense, tomb)
	case filter != nil && float64(fc) <= denseFilterRatio*sumDF:
		s.fillDense(filter, seg)
		x.maxScore(s, sc, seg, nil, &s.dense, tomb)
	default:
		// The cursor gallops in sparse (array) containers; a dense
		// filter's bitmap and run containers answer Contains directly.
		s.useCur = fc*sparseFilter < uint64(seg.hi-seg.lo)+1
		x.maxScore(s, sc, seg, filter, nil, tomb)
	}
	s.forced = 0
	for i := range s.segT {
		if e := s.iters[i].Err(); e != nil {
			return &CorruptionError{File: segName(seg.num), Err: e}
		}
		if i < len(s.rdSet) && s.rdSet[i] {
			if e := s.rd[i].Err(); e != nil { // window's reader (readNE)
				return &CorruptionError{File: segName(seg.num), Err: e}
			}
		}
	}
	return nil
}
