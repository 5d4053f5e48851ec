package index

import (
	"math"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// Block-at-a-time candidates. Once the heap is full, maxScore holds a
// window [doc, upto] in which every term sees one block, whose block-max
// sum beats the threshold. Doc at a time, every essential posting of the
// window was a candidate: the smallest current doc over the essential
// iterators, the candidate's bound from its exact essential scores and
// the non-essential block bounds, the iterators advanced one by one.
// Profile lesson (Zipf 200k, mid/none, 2-4 terms, most of them
// essential): ~1,240 candidates a query, about half of them pruned by
// that bound; the loop around them (its own lines and the per-posting
// exact score lookups) was 39% of maxScore.
//
// Here the window is taken in spans of at most windowSpan ids: the
// essential postings' exact scores (blockScores) are added into an
// accumulator indexed by id, then each posting's doc is kept when its
// accumulated bound plus the non-essential block bounds beats the
// threshold, branch-free, and only the kept docs are scored one by one
// in id order, exactly as maxScore scores a candidate (the same exact
// scores, nonEssential, canonical), so scores are bit-identical.

// windowSpan is the widest id span of one accumulator pass (64 KB of
// float32 bounds, in L2). Profile lesson (Zipf 1M, mid/none, one segment, 2-4
// terms with ~11k postings in all): at 2,048 ids a span held too few
// essential postings to pay (windowMin) in most of the id space, and half
// of maxScore's time went to the candidate-at-a-time loop; at 16,384 the
// warm p50 went from ~100 to ~65 µs and a search after the caches were
// evicted from ~180 to ~150 µs; 200k and the filtered cells unchanged.
// A variable only so that tests can cut spans in small corpora.
var windowSpan uint32 = 16384

// neReadRatio: window reads a non-essential term's block over a span
// when its expected postings there are at most neReadRatio per doc
// that its bound could otherwise keep (a kept doc costs a seek and its
// scoring, ~40 ns; a posting read ~3 ns).
const neReadRatio = 12

// windowMin is the number of essential postings a span must hold for
// window to take it: below it the span's loops cost more than the
// candidates they replace (rare/none: a rare term's one block spans the
// segment, ~1-2 postings a span; spans of any size were +10-15%).
const windowMin = 8

// windowMaxLists is the most essential lists a span is taken with:
// with more (long queries, 8-12 terms) a span holds a few postings of
// each, its loops over the lists cost more than the candidates
// (long/none at 1M +9%).
const windowMaxLists = 4

// windowPays reports whether the essential lists hold at least
// windowMin postings in [.., end].
func (s *searcher) windowPays(fe int, end uint32) bool {
	n := 0
	for i := fe; i < len(s.segT) && n < windowMin; i++ {
		it := &s.iters[i]
		if it.At() > end {
			continue
		}
		docs := it.docs
		for j := it.i; j < len(docs) && n < windowMin && docs[j] <= end; j++ {
			n++
		}
	}
	return n >= windowMin
}

// window runs the block-at-a-time pass over the span [start, end] for
// the unfiltered maxScore: start is the least essential doc, end at most
// start+windowSpan-1 and within the blocks whose bounds maxScore holds
// (rub), fe terms are non-essential, neBlock the sum of their block
// bounds (s.rubPre its running sums), theta the threshold. It leaves
// every essential iterator past end and returns the threshold after its
// pushes.
func (x *Index) window(s *searcher, sc *scorer, seg *segment, tomb *roaring.Bitmap, fe int, start, end uint32, theta, neBlock float64) float64 {
	m := len(s.segT)
	order := s.segT
	h := &s.heap
	tmp := s.tmp
	if len(s.acc) < int(windowSpan) {
		s.acc = make([]float32, windowSpan)
	}
	acc := s.acc[:windowSpan]
	if cap(s.wEnd) < m {
		s.wEnd = make([]int, m)
	}
	wEnd := s.wEnd[:m]
	if cap(s.surv) < blockSize*m {
		s.surv = make([]uint32, blockSize*m)
	}
	surv := s.surv[:blockSize*m]
	s.spans++
	if end-start == windowSpan-1 {
		s.cut++
	}
	for i := fe; i < m; i++ {
		it := &s.iters[i]
		if it.At() <= end && (s.bsBlk[i] != it.decoded || it.i < s.bsFrom[i]) {
			s.blockScores(sc, seg, i, order[i].w)
		}
	}
	{
		// Accumulate the essential scores of [start, end].
		for i := fe; i < m; i++ {
			it := &s.iters[i]
			j := it.i
			if it.At() <= end {
				docs, bs := it.docs, &s.bScore[i]
				for ; j < len(docs) && docs[j] <= end; j++ {
					acc[docs[j]-start] += float32(bs[j] * accSlack)
				}
			}
			wEnd[i] = j
		}
		// A non-essential term read over the span (readNE) adds its
		// exact score to the docs it holds, which need no seek in it
		// later. Profile lesson (mid/none, 200k): with the sum of the
		// non-essential block bounds, half the essential postings were
		// kept and sought in the non-essential terms, and one in twelve
		// of them entered the heap; (common/none, 200k) with the read
		// terms' block bounds, 1,115 docs a query were kept and 1,212
		// seeks made in them, 11% of the query. A block is read only
		// when the docs that beat theta with all the bounds (hot) are
		// many for its expected postings in the span: long queries'
		// frequent terms read there doubled long/none. The terms not
		// read count with their whole block bound (rest).
		rest := 0.0
		for len(s.neHits) < fe {
			s.neHits, s.nePos = append(s.neHits, nil), append(s.nePos, 0)
		}
		if fe > 0 {
			hot := s.hot(fe, start, wEnd, min(neBlock, s.prefix[fe-1]), theta)
			span := float64(end-start+1) / float64(seg.hi-seg.lo+1)
			for k := fe - 1; k >= 0; k-- {
				r := s.rub[k]
				if r == 0 {
					continue
				}
				if hot == 0 || k >= 64 || float64(order[k].ti.df)*span > neReadRatio*float64(hot) {
					rest += r
					continue
				}
				s.neRead++
				s.readNE(sc, seg, k, start, end, acc)
				// The terms not yet read count whole. After the last
				// read no decision is left for hot to make (the keep
				// pass below tests the same bound), so it is not
				// counted again: it was a tenth of common/none (Zipf
				// 200k) in all.
				if k > 0 {
					hot = s.hot(fe, start, wEnd, rest+s.rubPre[k-1], theta)
				}
			}
			if s.neMask != 0 {
				// The read terms' scores are in the sums now: the
				// running bounds nonEssential prunes with hold the
				// others' only (maxScore sets them again at its next
				// candidate).
				b := 0.0
				for i := 0; i < fe; i++ {
					if s.neMask>>uint(i)&1 == 0 {
						b += s.rub[i]
					}
					s.rubPre[i] = b
				}
				neBlock = rest
			}
		}
		// Keep the docs whose bound beats theta. A slot read is set to
		// zero, which clears the accumulator for the next span (the
		// non-essential reads touched only these slots); a doc of several
		// essential lists reads zero at its later postings, below theta as
		// rest is at most the non-essential terms' bounds (with secondary
		// terms forced non-essential it may not be: kept is deduplicated).
		// Profile lesson (Zipf 200k, common/none): a clearing pass over
		// every list's postings of the span was 7% of the query.
		n := 0
		for i := fe; i < m; i++ {
			it := &s.iters[i]
			docs := it.docs
			for j := it.i; j < wEnd[i]; j++ {
				d := docs[j]
				o := d - start
				a := float64(acc[o])
				acc[o] = 0
				surv[n] = d
				if a+rest > theta {
					n++
				}
			}
		}
		kept := surv[:n]
		if fe < m-1 {
			slices.Sort(kept) // several essential lists: id order
			kept = slices.Compact(kept)
		}
		for _, d := range kept {
			sum := 0.0
			for i := fe; i < m; i++ {
				it := &s.iters[i]
				// in the loaded block (d <= end <= its last), ahead
				for it.cur < d {
					it.i++
					it.cur = it.docs[it.i]
				}
				if it.At() == d {
					v := s.bScore[i][it.i]
					tmp[order[i].q] = v
					sum += v
				}
			}
			for k := 0; k < fe && s.neMask>>uint(k) != 0; k++ {
				if s.neMask>>uint(k)&1 == 0 {
					continue
				}
				hs, p := s.neHits[k], s.nePos[k]
				for p < len(hs) && hs[p].d < d {
					p++
				}
				if p < len(hs) && hs[p].d == d {
					tmp[order[k].q] = hs[p].v
					sum += hs[p].v
				}
				s.nePos[k] = p
			}
			norm := 0.0
			if fe > 0 {
				norm = sc.norm(s.lenAt(seg, fe, d))
			}
			_, pruned := s.nonEssential(sc, fe, d, norm, sum, theta, true, neBlock)
			score := canonical(tmp)
			if pruned || (tomb != nil && tomb.Contains(d)) {
				continue
			}
			if h.push(uint64(d), score) {
				theta = h.threshold()
			}
		}
		s.neMask = 0 // readNE resets a term's hits and place when it reads it again
		for i := fe; i < m; i++ {
			it := &s.iters[i]
			if it.At() > end {
				continue
			}
			if j := wEnd[i]; j < len(it.docs) {
				it.i, it.cur = j, it.docs[j]
			} else {
				it.Seek(end + 1)
			}
		}
	}
	return theta
}

// readNE adds non-essential term k's exact scores into the accumulator
// slots of the essential docs of [start, end] that it holds, and keeps
// them (s.neHits[k], bit k of s.neMask) for the kept docs' scores, which
// then need no seek in it. The term's iterator reads the block holding
// start; when the span runs past that block (maxScore cuts its range at
// the essential lists' blocks only) the term's reader reads the rest.
// The scores are those nonEssential computes (scoreNorm of the tf and
// the document's length, the tf-1 table as blockScores), so the sums and
// scores are bit-identical.
func (s *searcher) readNE(sc *scorer, seg *segment, k int, start, end uint32, acc []float32) {
	it := &s.iters[k]
	if !it.Seek(start) || it.At() > end {
		return
	}
	s.neMask |= 1 << uint(k)
	w := s.segT[k].w
	t1 := s.tf1Table(s.segT[k].q)
	hits := s.neHits[k][:0]
	s.nePos[k] = 0
	idx := &s.hitIdx
	add := func(p *postingsIter, j int) int {
		docs := p.docs
		n := 0
		for ; j < len(docs) && docs[j] <= end; j++ {
			// Only an essential doc's slot (not zero: its scores are
			// positive) is a hit, branch-free.
			b := math.Float32bits(acc[docs[j]-start])
			idx[n] = int32(j)
			n += int((b | -b) >> 31)
		}
		if n == 0 {
			return j
		}
		if !p.tfDone {
			p.decodeTFs()
		}
		for _, h := range idx[:n] {
			d, tf := docs[h], p.tfs[h]
			dl := seg.docLen(d)
			var v float64
			if tf == 1 && dl < tf1Lens {
				if v = t1[dl]; v < 0 {
					v = scoreNorm(w, 1, sc.norm(dl))
					t1[dl] = v
				}
			} else {
				v = scoreNorm(w, tf, sc.norm(dl))
			}
			acc[d-start] += float32(v * accSlack)
			hits = append(hits, neHit{d, v})
		}
		return j
	}
	defer func() { s.neHits[k] = hits }()
	// A span within the block (it ends at or before the block's last
	// doc) needs no other: most spans, when this list cuts the range.
	if add(it, it.i) < len(it.docs) || it.docs[len(it.docs)-1] >= end || it.bi+1 >= it.nBlocks {
		return
	}
	rd := s.reader(k)
	if rd.bi <= it.bi {
		rd.bi, rd.i = it.bi+1, -1
	}
	for ok := rd.Seek(start); ok && rd.cur <= end; ok = rd.nextBlock() {
		s.rdBlocks++
		if j := add(rd, rd.i); j < len(rd.docs) {
			rd.i, rd.cur = j, rd.docs[j]
			return
		}
		if rd.docs[len(rd.docs)-1] >= end {
			return
		}
	}
}

// neHit is a non-essential term's exact score for an essential doc of
// a span (readNE).
type neHit struct {
	d uint32
	v float64
}

// reader returns the reader of non-essential term k (readNE), set on the
// term at its first use in the segment.
func (s *searcher) reader(k int) *postingsIter {
	if cap(s.rd) < len(s.segT) {
		s.rd, s.rdSet = make([]postingsIter, len(s.segT)), make([]bool, len(s.segT))
	}
	s.rd, s.rdSet = s.rd[:len(s.segT)], s.rdSet[:len(s.segT)]
	rd := &s.rd[k]
	if !s.rdSet[k] {
		s.rdSet[k] = true
		rd.reset(s.segT[k].ti)
	}
	return rd
}

// nextBlock moves p to the first posting of its next block.
func (p *postingsIter) nextBlock() bool {
	p.i = len(p.docs) - 1
	return p.Next()
}

// hot estimates the essential postings of the span [start, ...] (up to
// wEnd) whose accumulated bound plus extra beats theta, from one in
// hotStride of them: it only chooses which non-essential blocks window
// reads (the keep pass tests every posting). Profile lesson (Zipf 200k,
// common/none): counting every posting, once before the reads and again
// after each, was 9% of the query; one in four took the index
// diagnostic's p50 from 248-257 to 210-218 µs and 1M mid/none from 58-60
// to 52-55 µs (one in eight: alike to one in four).
func (s *searcher) hot(fe int, start uint32, wEnd []int, extra, theta float64) int {
	acc := s.acc
	n := 0
	for i := fe; i < len(s.segT); i++ {
		it := &s.iters[i]
		docs := it.docs
		for j := it.i; j < wEnd[i]; j += hotStride {
			if float64(acc[docs[j]-start])+extra > theta {
				n++
			}
		}
	}
	return n * hotStride
}

// hotStride: see hot.
const hotStride = 4

// exact returns the score of essential iterator i's current posting,
// from the scores of its block's postings computed in one pass
// (blockScores): bit-identical to scoreNorm of its tf and the document's
// norm, as the per-candidate path computes it.
func (s *searcher) exact(sc *scorer, seg *segment, i int, w float64) float64 {
	it := &s.iters[i]
	if s.bsBlk[i] != it.decoded || it.i < s.bsFrom[i] {
		s.blockScores(sc, seg, i, w)
	}
	return s.bScore[i][it.i]
}

// blockScores scores the postings of iterator i's loaded block from its
// position on. The lengths' loads do not depend on each other, so their
// cache misses overlap (what a pass reading a sparse block's lengths
// ahead did before: 1M records, mid/none 0.70-0.81 -> 0.35-0.41 ms), and
// the divisions pipeline. Profile lesson (Zipf 200k, no filter): a
// candidate's bound from its tf and the block's corners (two divisions)
// let most candidates through to the length read, norm and score (1,054
// of the 1,254 postings a mid/none query met); bounded by its exact
// score, 659 are scored (rare/none 121 -> 51), at the cost of the bound.
func (s *searcher) blockScores(sc *scorer, seg *segment, i int, w float64) {
	it := &s.iters[i]
	if !it.tfDone {
		it.decodeTFs()
	}
	s.bsBlk[i], s.bsFrom[i] = it.decoded, it.i
	out := &s.bScore[i]
	tfs := it.tfs
	if lens := it.blockLens(); lens != nil {
		scoreLens(out, tfs, lens[:len(tfs)], it.i, s.tf1Table(s.segT[i].q), sc, w)
		return
	}
	if seg.mut != nil {
		for j := it.i; j < len(it.docs); j++ {
			out[j] = scoreNorm(w, tfs[j], sc.norm(seg.docLen(it.docs[j])))
		}
		return
	}
	// The lengths from the one-byte column (version 5 blocks hold none),
	// read in a pass of their own so their misses overlap, then the tf-1
	// table as above.
	docs := it.docs[:len(tfs)]
	var dls [blockSize]uint32
	l8, lo := seg.lens8, seg.lo
	for j := it.i; j < len(docs); j++ {
		dls[j] = uint32(l8[docs[j]-lo])
	}
	for j := it.i; j < len(docs); j++ {
		if dls[j] == lens8Escape {
			dls[j] = seg.docLen(docs[j])
		}
	}
	scoreLens(out, tfs, dls[:len(tfs)], it.i, s.tf1Table(s.segT[i].q), sc, w)
}

// scoreLens scores a block's postings from j = from on, given their tfs
// and lengths; a tf-1 posting's score comes from (and fills) the query
// term's table t1 by length, the most common case in chat text.
func scoreLens(out *[blockSize]float64, tfs, lens []uint32, from int, t1 *[tf1Lens]float64, sc *scorer, w float64) {
	for j := from; j < len(tfs); j++ {
		tf, dl := tfs[j], lens[j]
		if tf == 1 && dl < tf1Lens {
			v := t1[dl]
			if v < 0 {
				v = scoreNorm(w, 1, sc.norm(dl))
				t1[dl] = v
			}
			out[j] = v
			continue
		}
		out[j] = scoreNorm(w, tf, sc.norm(dl))
	}
}

// skipToDense advances essential iterator it to its first posting at or
// after its current one that the dense filter holds, a block at a time:
// a bit test per posting in a tight loop. Profile lesson (Zipf 200k,
// mid/agent, ~1,000 filter docs a segment): every essential posting went
// through maxScore's candidate loop (the least doc over the iterators,
// the bound by tf, the filter check), and 99 in 100 then failed the
// filter.
func skipToDense(it *postingsIter, d *denseFilter) {
	words := d.words
	for it.cur != endDoc {
		docs := it.docs
		for j := it.i; j < len(docs); j++ {
			o := docs[j] - d.lo
			if words[o/64]&(1<<(o%64)) != 0 {
				it.i, it.cur = j, docs[j]
				return
			}
		}
		it.i = len(docs) - 1
		it.Next()
	}
}

// tf1Lens is the number of lengths whose tf-1 score blockScores keeps
// per query term: the score of a posting of tf 1 (86% of the Zipf
// corpus's postings) and a length below it is looked up, computed once a
// query (the same scoreNorm, so the same bits) instead of two divisions
// a posting. Profile lesson (Zipf 200k, mid/none, version 4): with the
// lengths read from the blocks, the divisions were most of blockScores.
const tf1Lens = 256

// resetTF1 marks the tf-1 scores of nt query terms not computed: a
// term's table is cleared when blockScores first reads it in the query
// (s.tf1Gen). Profile lesson (Zipf 200k, long/agent, version 4): clearing
// every term's 2 KB at every query cost the filtered and long cells,
// which never read them, up to 10%.
func (s *searcher) resetTF1(nt int) {
	if cap(s.tf1) < nt {
		s.tf1, s.tf1Gen = make([][tf1Lens]float64, nt), make([]uint64, nt)
	}
	s.tf1, s.tf1Gen = s.tf1[:nt], s.tf1Gen[:nt]
	s.gen++
}

// tf1Table returns query term q's tf-1 scores, cleared at its first use
// in the query.
func (s *searcher) tf1Table(q int) *[tf1Lens]float64 {
	t := &s.tf1[q]
	if s.tf1Gen[q] != s.gen {
		s.tf1Gen[q] = s.gen
		for j := range t {
			t[j] = -1
		}
	}
	return t
}

// lenAt returns the length of doc d, which an essential iterator in
// [fe, m) is positioned on: from its version 4 block when it holds the
// lengths, else from the length column (a cache miss at random).
func (s *searcher) lenAt(seg *segment, fe int, d uint32) uint32 {
	for i := fe; i < len(s.segT); i++ {
		if it := &s.iters[i]; it.cur == d {
			if l := it.blockLens(); l != nil {
				return l[it.i]
			}
			break
		}
	}
	return seg.docLen(d)
}

// accSlack inflates what window adds into its float32 accumulator so that
// a slot is never below the float64 sum it bounds: each term is raised by
// 1e-5 of itself, far above the rounding of a few float32 additions
// (2^-24 of the sum each).
const accSlack = 1 + 1e-5
