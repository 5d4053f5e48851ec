package index

import (
	"math"
	"sort"

	"github.com/RoaringBitmap/roaring/v2"
)

// timeIndex turns [since, until) into an id bitmap without touching records.
//
// Ids are assigned in arrival order, so times are mostly non-decreasing in
// id. The index keeps, per id, the running maximum of the times seen so far
// (rmax: non-decreasing, so binary-searchable). A document whose time is
// below the running maximum when it arrives is "late"; its exact time is kept
// in a small side list. Then
//
//	{id : since <= time(id) < until}
//	  = ([lb(rmax, since), lb(rmax, until)) \ late) ∪ {late id : since <= time < until}
//
// because for a non-late id time == rmax. Cost: two binary searches, one
// range insertion, one AndNot with the late bitmap and a scan of the late
// list (linear in the number of late documents, which the ingest order keeps
// small; Metrics.LateDocs reports it). Ids absent from the index (gaps)
// get the previous running max and are removed by the caller's AND with the
// live set.
type timeIndex struct {
	base      uint32
	started   bool
	rmax      []int64 // per id - base
	cur       int64   // running max
	lateIDs   []uint32
	lateTimes []int64
	late      *roaring.Bitmap
}

func (t *timeIndex) init() {
	t.late = roaring.New()
	t.cur = math.MinInt64
}

func (t *timeIndex) add(id uint32, ts int64) {
	if !t.started {
		t.base, t.started = id, true
	}
	for uint32(len(t.rmax)) < id-t.base {
		t.rmax = append(t.rmax, t.cur)
	}
	if ts < t.cur {
		t.lateIDs = append(t.lateIDs, id)
		t.lateTimes = append(t.lateTimes, ts)
		t.late.Add(id)
	} else {
		t.cur = ts
	}
	t.rmax = append(t.rmax, t.cur)
}

// rangeBitmap returns the ids with since <= time < until (0 = unbounded).
func (t *timeIndex) rangeBitmap(since, until int64) *roaring.Bitmap {
	bm := roaring.New()
	if !t.started {
		return bm
	}
	n := len(t.rmax)
	lo, hi := 0, n
	if since != 0 {
		lo = sort.Search(n, func(i int) bool { return t.rmax[i] >= since })
	}
	if until != 0 {
		hi = sort.Search(n, func(i int) bool { return t.rmax[i] >= until })
	}
	if lo < hi {
		bm.AddRange(uint64(t.base)+uint64(lo), uint64(t.base)+uint64(hi))
		bm.AndNot(t.late)
	}
	for i, ts := range t.lateTimes {
		if (since == 0 || ts >= since) && (until == 0 || ts < until) {
			bm.Add(t.lateIDs[i])
		}
	}
	return bm
}
