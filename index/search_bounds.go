package index

// Block-max bounds: a term's bound over a block and over the blocks a
// widened range crosses (reach), and the non-essential terms' scoring
// of a candidate under those bounds (nonEssential), shared by the
// MaxScore and the filter-driven loops.

// blockUBOf is term i's bound over a block of corners c (raised by
// ubSlack, as every block bound the pruning compares).
func (s *searcher) blockUBOf(sc *scorer, i int, c corners) float64 {
	return c.bound(sc, s.segT[i].w) * ubSlack
}

// blockBound returns iterator i's block-max bound around doc and the last
// doc of that block; ok is false when the iterator has no block left.
// Bounds are cached per block, so a score is computed once per block.
func (s *searcher) blockBound(sc *scorer, i int, doc uint32) (float64, uint32, bool) {
	it := &s.iters[i]
	bi := it.shallowBlock(doc)
	if bi < 0 {
		return 0, 0, false
	}
	if bi != s.cBlk[i] {
		c, last := it.corners(bi)
		s.cBlk[i] = bi
		s.cUB[i] = s.blockUBOf(sc, i, c)
		s.cLast[i] = last
		s.cCorners[i] = c
	}
	return s.cUB[i], s.cLast[i], true
}

// denseNE reports whether non-essential term i holds at least 1 in
// denseNEShare of the segment's ids: its blocks of blockSize postings are
// then short, and cutting maxScore's ranges at their ends would make them
// short too. Profile lesson (Zipf 200k, common/none, a df-170k term among
// 2-4 terms): ranges of ~150 ids, whose setup (block bounds, windowPays,
// the span's loops, hot) was a quarter of the query. Such a term no
// longer cuts the range while its next blocks' bounds stay within
// wideSlack of its current one's (reach); readNE reads it past its
// block. Sparser terms still cut it (index diagnostic, Zipf 200k): at 1
// in 10 the common queries gained less, with every term mid queries were
// 5-9% slower.
func (s *searcher) denseNE(seg *segment, i int) bool {
	return uint64(s.segT[i].ti.df)*denseNEShare >= uint64(seg.hi-seg.lo+1)
}

// denseNEShare: see denseNE.
const denseNEShare = 5

// reach returns the last doc of the last block of non-essential iterator
// i, from its current one (s.cBlk[i]) on, up to the one holding end,
// before the first whose bound exceeds lim, and the most of their bounds.
func (s *searcher) reach(sc *scorer, i int, end uint32, lim float64) (uint32, float64) {
	it := &s.iters[i]
	last, ub := s.cLast[i], s.cUB[i]
	for bi := s.cBlk[i] + 1; bi < it.nBlocks && last < end; bi++ {
		c, l := it.corners(bi)
		b := s.blockUBOf(sc, i, c)
		if b > lim {
			break
		}
		last, ub = l, max(ub, b)
	}
	return last, ub
}

// wideSlack: a dense list's bound over a range past its current block is
// at most this much above that block's (reach). 1.1 and no limit were
// alike on Zipf 1M and 200k; the limit keeps a range from taking a block
// whose bound would loosen every candidate's.
const wideSlack = 1.1

// boundsPruned reports whether the fe non-essential terms cannot lift doc's
// partial sum above theta: first by their max scores (s.prefix), then by
// their block maxima at doc. Both the exhaustive-order MaxScore loop and the
// filter-driven one use it, so they prune by the same rule.
func (s *searcher) boundsPruned(sc *scorer, fe int, doc uint32, sum, theta float64) bool {
	if sum+s.prefix[fe-1] <= theta {
		return true
	}
	bsum := sum
	for i := 0; i < fe; i++ {
		if ub, _, ok := s.blockBound(sc, i, doc); ok {
			bsum += ub
		}
	}
	return bsum <= theta
}

// nonEssential adds doc's scores for the fe non-essential terms (into
// s.tmp and sum), from the highest bound down, unless their bounds cannot
// lift the sum above theta; it reports that as pruned. Bounds only prune
// once the heap is full. Both the MaxScore and the filter-driven loops use
// it, so they score and prune alike.
//
// neBlock, when not negative, is the sum of the non-essential terms' block
// bounds at doc, which maxScore already holds (and s.rubPre their running
// sums); otherwise they are looked up.
func (s *searcher) nonEssential(sc *scorer, fe int, doc uint32, norm, sum, theta float64, full bool, neBlock float64) (float64, bool) {
	if fe > 0 && full {
		if neBlock >= 0 {
			if sum+s.prefix[fe-1] <= theta || sum+neBlock <= theta {
				return sum, true
			}
		} else if s.boundsPruned(sc, fe, doc, sum, theta) {
			return sum, true
		}
	}
	for i := fe - 1; i >= 0; i-- {
		if full && sum+s.prefix[i] <= theta {
			return sum, true
		}
		// The block bounds of the terms not yet sought, tighter than
		// their max scores. Profile lesson (Zipf 200k, mid/none): the
		// seeks here were 29% of MaxScore, most for candidates these
		// bounds prune.
		if full && neBlock >= 0 && sum+s.rubPre[i] <= theta {
			return sum, true
		}
		if s.neMask>>uint(i)&1 != 0 {
			continue // its score is in sum (window's readNE)
		}
		it := &s.iters[i]
		if it.Seek(doc) && it.At() == doc {
			q := s.segT[i].q
			v := scoreNorm(s.segT[i].w, it.ProbeTF(), norm)
			s.tmp[q] = v
			sum += v
		}
	}
	return sum, false
}

func (s *searcher) resetBounds(m int) {
	if cap(s.cBlk) < m {
		s.cBlk, s.cUB, s.cLast, s.cCorners = make([]int, m), make([]float64, m), make([]uint32, m), make([]corners, m)
	}
	s.cBlk, s.cUB, s.cLast, s.cCorners = s.cBlk[:m], s.cUB[:m], s.cLast[:m], s.cCorners[:m]
	for i := range s.cBlk {
		s.cBlk[i] = -1
	}
	if cap(s.bsBlk) < m {
		s.bScore, s.bsBlk, s.bsFrom = make([][blockSize]float64, m), make([]int, m), make([]int, m)
	}
	s.bScore, s.bsBlk, s.bsFrom = s.bScore[:m], s.bsBlk[:m], s.bsFrom[:m]
	for i := range s.bsBlk {
		s.bsBlk[i] = -1
	}
}
