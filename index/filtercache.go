package index

import (
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
)

// filterCache keeps one metadata value's documents (an agent's, a
// session's) in one sealed segment's id range in the two forms a filtered
// search reads: a sorted slice, which the filter-driven loop walks and
// leaps in, and a bitset over the range, which MaxScore tests a posting
// against with one bit test. Each form is built the first time a search
// needs it, from the index's own bitmap of the value, and kept while the
// cache stays under its byte budget (Options.FilterCacheBytes; a clock
// evicts). An agent's recalls use the same filter query after query, as a
// search engine's filter cache assumes.
//
// Profile lesson (Zipf 1M, 5 sealed segments, agent filter of ~2,000
// records a segment): roaring's iterators (Next, AdvanceIfNeeded's gallop
// through an array container) and the per-query bitset fill were 28% of a
// mid-frequency query and 47% of a rare-term one.
//
// Soundness: an entry is the value's bitmap B restricted to the segment's
// range R, with its count n. The field bitmaps only ever gain ids, and only
// in the mutable segment's range, so B ∩ R of a sealed segment does not
// change; a search's filter F is a subset of B (FilterKey), so when
// |F ∩ R| = n, F ∩ R = B ∩ R and the entry answers for F. Any other count
// (a deleted record dropped from F, a time window) leaves the search on
// F's own bitmap. Entries are immutable once published: a search holds one
// without the cache's lock.
type filterCache struct {
	mu     sync.Mutex
	m      map[fcKey]*fcEntry
	ring   []fcKey // clock order
	hand   int
	bytes  int64
	limit  int64
	served int64 // searches of a segment answered from an entry (tests)
}

// fcKey names a sealed segment (its file number: a merge's output is a new
// one) and a field bitmap the index owns.
type fcKey struct {
	num uint64
	bm  *roaring.Bitmap
}

type fcEntry struct {
	n     uint64      // |B ∩ R| when built
	ids   []uint32    // B ∩ R ascending; nil until a search needs it
	dense denseFilter // B ∩ R as a bitset; words nil until needed
	used  bool        // the clock's reference bit (under the cache's lock)
}

func (e *fcEntry) size() int64 { return int64(4*len(e.ids) + 8*len(e.dense.words) + 64) }

// minCachedFilter: a filter with fewer documents in a segment is walked in
// its own bitmap (a handful of containers' worth: nothing to gain, and a
// session's filter would only churn the cache).
const minCachedFilter = 256

func newFilterCache(limit int64) *filterCache {
	if limit <= 0 {
		return nil
	}
	return &filterCache{m: make(map[fcKey]*fcEntry), limit: limit}
}

// get returns the entry of (seg, bm) holding n documents with the form
// asked for (dense or ids) built, building it from bm if needed; nil when
// the cache is off, the filter too small, or the entry would not fit.
// Callers hold the index's read lock (bm is not written under it).
func (c *filterCache) get(seg *segment, bm *roaring.Bitmap, n uint64, dense bool) *fcEntry {
	if c == nil || n < minCachedFilter || seg.mut != nil {
		return nil
	}
	k := fcKey{seg.num, bm}
	c.mu.Lock()
	e := c.m[k]
	if e != nil && e.n == n && (dense && e.dense.words != nil || !dense && e.ids != nil) {
		e.used = true
		c.served++
		c.mu.Unlock()
		return e
	}
	c.mu.Unlock()
	if e != nil && e.n != n {
		return nil // F is a strict subset of B in this segment
	}
	ne := &fcEntry{}
	if e != nil {
		*ne = fcEntry{n: e.n, ids: e.ids, dense: e.dense}
	}
	if ne.ids == nil {
		ne.ids = rangeIDs(bm, seg.lo, seg.hi, n)
		ne.n = uint64(len(ne.ids))
		if ne.n != n {
			// The search's filter is a strict subset of B here: its count
			// differs from B's, so B's documents do not answer for it.
			c.put(k, ne)
			return nil
		}
	}
	if dense && ne.dense.words == nil {
		ne.dense = denseOf(ne.ids, seg.lo, seg.hi)
	}
	if !c.put(k, ne) {
		return nil
	}
	return ne
}

// put publishes e under k, evicting by clock until it fits; false when e
// alone exceeds the budget (not kept).
func (c *filterCache) put(k fcKey, e *fcEntry) bool {
	sz := e.size()
	if sz > c.limit {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.m[k]; ok {
		c.bytes -= old.size()
	} else {
		c.ring = append(c.ring, k)
	}
	c.m[k] = e
	c.bytes += sz
	for c.bytes > c.limit && len(c.ring) > 1 {
		if c.hand >= len(c.ring) {
			c.hand = 0
		}
		rk := c.ring[c.hand]
		re := c.m[rk]
		if rk == k || re.used {
			if re != nil {
				re.used = false
			}
			c.hand++
			continue
		}
		c.removeAt(c.hand)
	}
	return true
}

// removeAt drops the ring's entry at i (under c.mu).
func (c *filterCache) removeAt(i int) {
	k := c.ring[i]
	if e := c.m[k]; e != nil {
		c.bytes -= e.size()
	}
	delete(c.m, k)
	last := len(c.ring) - 1
	c.ring[i] = c.ring[last]
	c.ring = c.ring[:last]
}

// drop removes every entry of the segments in (merged away).
func (c *filterCache) drop(in []*segment) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := 0; i < len(c.ring); {
		gone := false
		for _, s := range in {
			if c.ring[i].num == s.num {
				gone = true
				break
			}
		}
		if gone {
			c.removeAt(i)
			continue
		}
		i++
	}
}

// size returns the cache's bytes and entries.
func (c *filterCache) size() (int64, int) {
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes, len(c.m)
}

// rangeIDs returns bm's ids in [lo, hi], ascending (n is the expected
// count, a capacity hint).
func rangeIDs(bm *roaring.Bitmap, lo, hi uint32, n uint64) []uint32 {
	ids := make([]uint32, 0, n)
	it := bm.Iterator()
	it.AdvanceIfNeeded(lo)
	for it.HasNext() {
		id := it.Next()
		if id > hi {
			break
		}
		ids = append(ids, id)
	}
	return ids
}

// denseOf is ids (within [lo, hi]) as a bitset over the range.
func denseOf(ids []uint32, lo, hi uint32) denseFilter {
	d := denseFilter{lo: lo, words: make([]uint64, (hi-lo)/64+1)}
	for _, id := range ids {
		o := id - lo
		d.words[o/64] |= 1 << (o % 64)
	}
	return d
}

// gallop returns the first index i >= from with ids[i] >= v (len(ids) if
// none): doubling steps from from, then a binary search in the last step.
func gallop(ids []uint32, from int, v uint32) int {
	n := len(ids)
	if from >= n || ids[from] >= v {
		return from
	}
	lo, step := from, 1 // ids[lo] < v
	hi := lo + step
	for hi < n && ids[hi] < v {
		lo = hi
		step *= 2
		hi = lo + step
	}
	if hi > n {
		hi = n
	}
	for lo+1 < hi { // ids[lo] < v, ids[hi] >= v (or hi == n)
		mid := int(uint(lo+hi) >> 1)
		if ids[mid] < v {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}
