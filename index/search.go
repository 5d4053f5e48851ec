package index

import (
	"math"

	"github.com/RoaringBitmap/roaring/v2"
)

// Hit is one search result.
type Hit struct {
	ID    uint64
	Score float64
}

// ubSlack inflates every upper bound so float rounding in a bound never
// prunes a document whose exact score reaches the threshold.
const ubSlack = 1 + 1e-9

type qterm struct {
	text string
	qtf  float64
	w    float64 // idf * qtf * (k1 + 1)
	sec  bool    // secondary: a CJK character a query bigram covers (coverCJK)
}

// scorer holds the BM25 constants of one query.
type scorer struct {
	k1, b, avgdl float64
}

// score is the BM25 contribution of one term: w * tf / (tf + k1*(1-b+b*dl/avgdl)).
// Both the pruned and the exhaustive search call it, so equal inputs give
// bit-identical scores.
func (c *scorer) score(w float64, tf, dl uint32) float64 {
	return scoreNorm(w, tf, c.norm(dl))
}

// norm is the length part of BM25's denominator, k1*(1-b+b*dl/avgdl): the
// scoring loops compute it once per document, not once per matched term
// (it holds a division). score is scoreNorm of it, so the split changes no
// result's bits.
func (c *scorer) norm(dl uint32) float64 {
	return c.k1 * (1 - c.b + c.b*float64(dl)/c.avgdl)
}

// scoreNorm is the BM25 contribution of one term given the document's norm.
func scoreNorm(w float64, tf uint32, norm float64) float64 {
	t := float64(tf)
	return w * t / (t + norm)
}

// idf is the BM25 inverse document frequency in its non-negative form.
func idf(n, df uint64) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// IDF is the inverse document frequency the index's BM25 gives a term held
// by df of n documents (DocFreq's figures), for callers that weigh terms
// as the index does.
func IDF(n, df uint64) float64 { return idf(n, df) }

type segTerm struct {
	q   int // index in searcher.terms (canonical order)
	ub  float64
	w   float64   // the term's weight, s.terms[q].w
	ti  *termInfo // the term in the segment, in s.tis
	sec bool      // s.terms[q].sec
}

// searcher is the reusable per-query state.
type searcher struct {
	scratch []string
	terms   []qterm
	iters   []postingsIter
	rd      []postingsIter // window's readers of non-essential terms (reader)
	rdSet   []bool         // rd[i] is set on segT[i]'s term
	segT    []segTerm
	prefix  []float64
	rub     []float64
	rubPre  []float64
	wideUB  []float64 // per non-essential term: its bound over a range reach widened
	tmp     []float64
	dense   denseFilter
	fcur    filterCursor // the filter of a MaxScore traversal
	useCur  bool         // check candidates with fcur, not Contains
	fit     filterCursor // the filter-driven loop's iterator
	heap    hitHeap
	ti      termInfo
	tis     []termInfo // [term*len(segs)+seg], filled by prepare; df 0 = absent
	idx     []int      // scratch of lookupAll
	hs      []uint64   // scratch of lookupAll
	texts   []string   // the terms' texts, for lookupAll
	front   []tfdl     // the mutable segment's frontier of a term (scratch)
	sink    byte       // what lookupAll read ahead (kept so the loads stay)
	skipped int        // block ranges skipped (for tests)
	segs    []*segment // snapshot of x.segs + x.mut, taken by prepare

	// from and upto bound the ids maxScore visits in the segment being
	// searched: the first and last of the filter's ids there (the
	// segment's range when unfiltered).
	from, upto uint32

	// forced is the number of secondary terms (sorted first) held
	// non-essential whatever the threshold: set while Search ranks the
	// records holding a primary term (search_secondary.go).
	forced int
	// fellBack: the query has secondary terms and fewer than k records
	// hold a primary one, so every matching record was ranked (tests).
	fellBack bool
	hasSec   bool // the query (its terms some record holds) has primary and secondary terms

	// per iterator: the block whose bound is cached, the bound, its last doc
	cBlk     []int
	cUB      []float64
	cLast    []uint32
	cCorners []corners // the cached block's corners (a candidate's bound by its tf)

	// per iterator, unfiltered MaxScore: the exact scores of the postings
	// of its loaded block from position bsFrom on (blockScores)
	bScore [][blockSize]float64
	bsBlk  []int
	bsFrom []int

	// per query term: its score at tf 1 for each length below tf1Lens,
	// -1 until computed (blockScores)
	tf1    [][tf1Lens]float64
	tf1Gen []uint64 // per query term: the query (gen) its tf1 table is of
	gen    uint64   // the query's number in this searcher

	// the block-at-a-time window (search_block.go): the accumulator, per
	// iterator the end of its postings in the span, the kept docs
	acc  []float32
	wEnd []int
	surv []uint32
	// per non-essential term read over the span (readNE, bit k of
	// neMask): the essential docs of the span it holds, with its exact
	// scores; nePos a kept doc's place in them
	neHits [][]neHit
	nePos  []int
	neMask uint64
	hitIdx [blockSize]int32
	// spans taken block at a time, those cut at windowSpan, the
	// non-essential blocks read in them (tests)
	spans, cut, neRead int
	wide, rdBlocks     int // ranges not cut by a dense non-essential list; blocks readNE read past the first

	fkey *roaring.Bitmap // the field bitmap the filter is a subset of (filtercache.go), or nil
}

// Search returns the top k documents for query by BM25 (score descending,
// ties by id ascending), appended to dst[:0]. filter, when not nil,
// restricts the result to its ids (typically the output of Filter);
// deleted documents never appear. The CJK characters of a query that its
// bigrams cover count in every score, but a record holding nothing else
// of the query is ranked only when fewer than k records hold the rest
// (search_secondary.go). Per segment it scores the filter's documents
// directly when the filter is much smaller than the query's postings,
// and otherwise runs block-max MaxScore over the postings, checking the
// filter per candidate.
func (x *Index) Search(query string, filter *roaring.Bitmap, k int, dst []Hit) ([]Hit, error) {
	return x.SearchKeyed(query, filter, FilterKey{}, k, dst)
}

// SearchKeyed is Search with the key FilterKeyed returned with filter:
// the same results, with the index's kept forms of the key's metadata
// value read instead of filter's bitmap where they hold the same
// documents (a key of another bitmap or another index is ignored).
func (x *Index) SearchKeyed(query string, filter *roaring.Bitmap, key FilterKey, k int, dst []Hit) ([]Hit, error) {
	return x.SearchTerms(query, nil, filter, key, k, dst)
}

// SearchTerms is SearchKeyed with terms added to the query's as they are,
// not analysed: each occurrence counts once in its query frequency, as a
// word of the query does. A caller adds the character bigrams of a CJK
// word this way when the word's single characters would match too much
// (the engine's glossary translations, whose characters are shared by
// unrelated words). A term the analyser would never emit matches nothing.
func (x *Index) SearchTerms(query string, terms []string, filter *roaring.Bitmap, key FilterKey, k int, dst []Hit) ([]Hit, error) {
	dst = dst[:0]
	if k <= 0 || (filter != nil && filter.IsEmpty()) {
		return dst, nil
	}
	s := x.getSearcher()
	defer x.pool.Put(s)
	x.analyzeQuery(s, query, terms...)
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return dst, ErrClosed
	}
	if filter != nil && key.of == filter && key.x == x {
		s.fkey = key.field
		defer func() { s.fkey = nil }()
	}
	return x.searchLocked(s, filter, k, dst)
}

// searchLocked is Search once the query is analysed; callers hold x.mu.
func (x *Index) searchLocked(s *searcher, filter *roaring.Bitmap, k int, dst []Hit) ([]Hit, error) {
	sc, ok := x.prepare(s)
	if !ok {
		return dst, nil
	}
	s.heap.reset(k)
	s.fellBack = false
	err := x.searchSegments(s, &sc, filter, s.hasSec)
	if s.hasSec && !s.heap.full() {
		// Fewer than k records hold a primary term: rank every record
		// that matches (see search_secondary.go).
		s.fellBack = true
		s.heap.reset(k)
		if e := x.searchSegments(s, &sc, filter, false); err == nil {
			err = e
		}
	}
	if x.searched != nil {
		x.searched(s)
	}
	return s.heap.appendSorted(dst), err
}

// searchSegments runs the search over every segment into s.heap; with
// primary set, only the records holding a primary term are ranked.
func (x *Index) searchSegments(s *searcher, sc *scorer, filter *roaring.Bitmap, primary bool) error {
	var err error
	nseg := len(s.segs)
	for si, seg := range s.segs {
		if seg.empty() {
			continue
		}
		fc := uint64(0)
		if filter != nil {
			fc = filter.Rank(seg.hi)
			if seg.lo > 0 {
				fc -= filter.Rank(seg.lo - 1)
			}
			if fc == 0 {
				continue
			}
		}
		// Terms present in this segment, with their segment upper bounds.
		s.segT = s.segT[:0]
		for q := range s.terms {
			ti := &s.tis[q*nseg+si]
			if ti.df == 0 {
				continue
			}
			var ub float64
			if ti.df <= blockSize {
				// One block: its corners are the term's frontier.
				ub = ti.corners0().bound(sc, s.terms[q].w)
			} else {
				f := seg.frontier(s.terms[q].text, ti, &s.iters[len(s.segT)], s.front)
				if seg.mut != nil {
					s.front = f // scratch; a sealed segment's is its cache
				}
				for _, pr := range f {
					ub = max(ub, sc.score(s.terms[q].w, pr.tf, pr.dl))
				}
			}
			s.segT = append(s.segT, segTerm{q: q, ub: ub * ubSlack, w: s.terms[q].w, ti: ti, sec: s.terms[q].sec})
		}
		if len(s.segT) == 0 {
			continue
		}
		var tomb *roaring.Bitmap
		if seg.nDeleted > 0 {
			tomb = x.tombOf(seg)
		}
		// The search visits only the ids from the filter's first in the
		// segment to its last, and a filter holding every id of that run
		// (the whole segment, or a time window over records appended in
		// time order) restricts nothing more: the run is searched
		// unfiltered, block at a time. Profile lessons (1M Zipf): filling
		// the dense filter of each segment from the filter's bitmap, id by
		// id, was 22% of a recall over all 100 agents; a window inside a
		// segment searched through the filter took twice the time it took
		// when the window was a segment of its own.
		segFilter := filter
		s.from, s.upto = seg.lo, seg.hi
		if filter != nil {
			s.from, s.upto = filterRun(filter, seg, fc)
			if fc == uint64(s.upto-s.from)+1 {
				segFilter = nil
			}
		}
		if e := x.searchSegment(s, sc, seg, segFilter, tomb, fc, primary); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// filterRun returns the first and the last of filter's ids in seg's range,
// which holds fc of them (fc > 0).
func filterRun(filter *roaring.Bitmap, seg *segment, fc uint64) (from, upto uint32) {
	var before uint64
	if seg.lo > 0 {
		before = filter.Rank(seg.lo - 1)
	}
	from, err1 := filter.Select(uint32(before))
	upto, err2 := filter.Select(uint32(before + fc - 1))
	if err1 != nil || err2 != nil || from < seg.lo || upto > seg.hi || from > upto {
		return seg.lo, seg.hi // cannot happen: fc counts filter ids in the range
	}
	return from, upto
}

// spanEnd is the end of the block-at-a-time span that starts at doc:
// windowSpan ids at most, within the block-max range ending at upto and
// within the ids the search visits.
func (s *searcher) spanEnd(doc, upto uint32) uint32 {
	return uint32(min(uint64(upto), uint64(doc)+uint64(windowSpan)-1, uint64(s.upto)))
}

// sortTerms orders s.segT by upper bound, ascending (secondary terms
// first when the pass forces them non-essential), and points
// s.iters[i] at term s.segT[i]. Sorting the small entries and resetting the
// iterators afterwards avoids moving iterators (each holds its decode
// buffers, ~1 KB).
func (s *searcher) sortTerms() {
	order := s.segT
	for i := 1; i < len(order); i++ { // insertion sort: a handful of terms
		for j := i; j > 0 && order[j].before(&order[j-1], s.forced > 0); j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	for i := range order {
		s.iters[i].reset(order[i].ti)
	}
	clear(s.rdSet) // window's readers (reader)
}

// canonical sums the per-term scores in query-term order and clears them.
func canonical(tmp []float64) float64 {
	var sum float64
	for i, v := range tmp {
		sum += v
		tmp[i] = 0
	}
	return sum
}

// maxScore is block-max MaxScore over one segment. Terms are ordered by
// upper bound; the lowest-bound terms whose bounds sum to at most the
// current threshold are "non-essential": a document matching only them
// cannot enter the top k, so candidates come from the essential terms and
// non-essential terms are only probed (Seek), after a block-max bound check.
func (x *Index) maxScore(s *searcher, sc *scorer, seg *segment, filter *roaring.Bitmap, dense *denseFilter, tomb *roaring.Bitmap) {
	m := len(s.segT)
	order := s.segT
	prefix := s.boundPrefix()
	h := &s.heap
	theta := h.threshold()
	fe := s.forced
	for fe < m && prefix[fe] <= theta {
		fe++
	}
	for i := fe; i < m; i++ {
		if s.from > seg.lo {
			s.iters[i].Seek(s.from)
		} else {
			s.iters[i].Next()
		}
	}
	if filter != nil && s.useCur {
		s.fcur.reset(filter, seg.lo)
	}
	// Unfiltered, every posting of an essential block is a candidate:
	// score the block's postings in one pass (blockScores).
	batch := filter == nil && dense == nil
	tmp := s.tmp
	// The last block-max sum and the range it holds for: every document in
	// [bubFrom, bubUpto] sees the same block of every term (the first block
	// whose last doc is >= it), so the sum is the same and is not
	// recomputed for the next candidate of the range. Profile lesson (long
	// queries, 8-12 terms, 200k records): recomputing it over all terms for
	// every candidate was 41% of the search.
	bubFrom, bubUpto, bub := uint32(1), uint32(0), 0.0
	useWin := false // take [bubFrom, bubUpto] block at a time (search_block.go)
	if cap(s.rub) < m {
		s.rub = make([]float64, m)
	}
	rub := s.rub[:m] // per term: its block bound over [bubFrom, bubUpto], 0 if none
	if cap(s.rubPre) < m {
		s.rubPre = make([]float64, m)
	}
	s.rubPre = s.rubPre[:m] // running sums of rub
	if cap(s.wideUB) < m {
		s.wideUB = make([]float64, m)
	}
	s.wideUB = s.wideUB[:m]
	for fe < m {
		doc := uint32(endDoc)
		for i := fe; i < m; i++ {
			if dense != nil {
				skipToDense(&s.iters[i], dense)
			}
			doc = min(doc, s.iters[i].At())
		}
		if doc == endDoc || doc > s.upto {
			break
		}
		neBlock := -1.0 // not known until the heap is full
		if h.full() {
			// Block-max skip: each term has at most one block overlapping
			// [doc, upto]; if their bounds cannot beat theta, no document of
			// the range can, and the essential lists jump past it.
			if doc < bubFrom || doc > bubUpto {
				upto, uptoE := uint32(endDoc-1), uint32(endDoc-1)
				bub = 0.0
				for i := 0; i < m; i++ {
					ub, last, ok := s.blockBound(sc, i, doc)
					if !ok {
						ub = 0
					} else {
						upto = min(upto, last)
						if i >= fe || !s.denseNE(seg, i) {
							uptoE = min(uptoE, last)
						}
					}
					rub[i] = ub
					bub += ub
				}
				// Block at a time when the range's first span holds
				// enough essential postings (decided once a range:
				// counting them per candidate cost rare/none 15%).
				useWin = false
				if batch && m-fe <= windowMaxLists {
					end := s.spanEnd(doc, uptoE)
					if end > upto {
						// A dense non-essential list does not cut the
						// range at its block ends (window reads it past
						// them, readNE) while its next blocks' bounds
						// stay close to its current one's.
						for i := 0; i < fe; i++ {
							if rub[i] > 0 && s.cLast[i] < end {
								var last uint32
								last, s.wideUB[i] = s.reach(sc, i, end, rub[i]*wideSlack)
								end = min(end, last)
							}
						}
					}
					if end > upto && s.windowPays(fe, end) {
						bub = 0
						for i := 0; i < m; i++ {
							if i < fe && rub[i] > 0 && s.cLast[i] < end {
								rub[i] = s.wideUB[i]
							}
							bub += rub[i]
						}
						upto, useWin = end, true
						s.wide++
					} else {
						useWin = s.windowPays(fe, s.spanEnd(doc, upto))
					}
				}
				bubFrom, bubUpto = doc, upto
			}
			upto := bubUpto
			if bub <= theta {
				s.skipped++
				for i := fe; i < m; i++ {
					if s.iters[i].At() <= upto {
						s.iters[i].Seek(upto + 1)
					}
				}
				continue
			}
			// The candidate's own bound: the block maxima of the terms it
			// can still hold (every non-essential term, the essential ones
			// positioned on it). Most candidates of a mid-frequency query
			// hold one term, and this prunes them before their length is
			// read: that read (a cache miss per candidate) and the
			// norm were a fifth of the search (mid/none, 200k records).
			neBlock = 0
			for i := 0; i < fe; i++ {
				neBlock += rub[i]
				s.rubPre[i] = neBlock
			}
			if useWin {
				end := s.spanEnd(doc, upto)
				theta = x.window(s, sc, seg, tomb, fe, doc, end, theta, neBlock)
				for fe < m && prefix[fe] <= theta {
					fe++
				}
				continue
			}
			// An essential term's part is bounded by its real tf (the corners
			// give the least length a posting of that tf can have).
			cb := neBlock
			for i := fe; i < m; i++ {
				if it := &s.iters[i]; it.At() == doc {
					if batch {
						cb += s.exact(sc, seg, i, order[i].w) * ubSlack
					} else {
						cb += s.cCorners[i].boundTF(sc, order[i].w, it.ProbeTF()) * ubSlack
					}
				}
			}
			if cb <= theta {
				for i := fe; i < m; i++ {
					if s.iters[i].At() == doc {
						s.iters[i].Next()
					}
				}
				continue
			}
		}
		if (dense != nil && !dense.contains(doc)) || (filter != nil && !s.filterHas(filter, doc)) {
			for i := fe; i < m; i++ {
				if s.iters[i].At() == doc {
					s.iters[i].Next()
				}
			}
			continue
		}
		norm := 0.0 // for the non-essential terms
		if batch && fe > 0 {
			norm = sc.norm(s.lenAt(seg, fe, doc)) // the blocks' lengths are decoded
		} else if !batch {
			norm = sc.norm(seg.docLen(doc))
		}
		sum := 0.0
		for i := fe; i < m; i++ {
			it := &s.iters[i]
			if it.At() == doc {
				var v float64
				if batch {
					v = s.exact(sc, seg, i, order[i].w)
				} else {
					v = scoreNorm(order[i].w, it.ProbeTF(), norm)
				}
				tmp[order[i].q] = v
				sum += v
				it.Next()
			}
		}
		_, pruned := s.nonEssential(sc, fe, doc, norm, sum, theta, h.full(), neBlock)
		score := canonical(tmp)
		if pruned || (tomb != nil && tomb.Contains(doc)) {
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
