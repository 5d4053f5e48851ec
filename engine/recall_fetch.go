package engine

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/segment"
)

// fetchParallelMin is the fewest records fetch splits between goroutines.
// A record the log has not cached costs a segment read: its head and the
// 4 KiB text frame holding the record decompressed (segment version 3,
// ~30 µs: docs/benchmarks/cold.md; a whole 32 KiB segment, ~80 µs, for
// older segments), and a cold recall's 50 candidates lie in about 30-50
// segments: split over the cores, the reads take a fraction of the wall
// time. Below this, starting goroutines costs more than it saves on
// cached records. 8 rather than 16: the neighbour source's first read is
// the top 10 hits, which a cold recall read on one core.
const fetchParallelMin = 8

// fetch reads the records of cands (all, or those at the indices sel) from
// the log: the ids in ascending order, split into contiguous runs of about
// as many log segments each (splitRuns) read concurrently (one per core,
// at most 4) when there are at least fetchParallelMin of them.
func (db *DB) fetch(cands []cand, sel []int) error {
	idx := map[uint64]int{}
	var ids []uint64
	add := func(i int) {
		idx[cands[i].id] = i
		ids = append(ids, cands[i].id)
	}
	if sel == nil {
		for i := range cands {
			add(i)
		}
	} else {
		for _, i := range sel {
			add(i)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	// Each run writes only its own candidates; idx is only read.
	getRun := func(run []uint64) error {
		var c codec.Record
		return db.log.GetMany(run, func(id uint64, payload []byte) error {
			if _, err := codec.DecodeRecord(payload, &c); err != nil {
				return fmt.Errorf("%w: id %d: %w", ErrCorrupt, id, err)
			}
			k := &cands[idx[id]]
			k.rec = fromCodec(id, &c)
			k.fetched = true
			return nil
		})
	}
	var err error
	w := min(runtime.GOMAXPROCS(0), 4, len(ids)/(fetchParallelMin/2))
	var cuts []int
	if w > 1 && len(ids) >= fetchParallelMin {
		cuts = splitRuns(db.log.SegmentStarts(ids, nil), w)
		w = len(cuts) - 1
	}
	if w > 1 {
		errs := make([]error, w)
		var wg sync.WaitGroup
		for j := range w {
			run := ids[cuts[j]:cuts[j+1]]
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[j] = getRun(run)
			}()
		}
		wg.Wait()
		err = errors.Join(errs...)
		for _, e := range errs {
			if e != nil && !segment.IsCorruption(e) {
				err = e // a failure other than damage fails the fetch
				break
			}
		}
	} else {
		err = getRun(ids)
	}
	if err != nil && segment.IsCorruption(err) {
		// A damaged block: read the rest one by one. A record that cannot
		// be read is left out of this recall like a deleted one (it stays
		// unfetched), so one bad block does not fail every recall that
		// touches it; Get of that id reports the damage.
		err = nil
		var c codec.Record
		for _, id := range ids {
			k := &cands[idx[id]]
			if k.fetched {
				continue
			}
			b, gerr := db.log.Get(id, nil)
			switch {
			case gerr == nil:
			case segment.IsCorruption(gerr):
				k.damaged = true
				continue
			case errors.Is(gerr, segment.ErrNotFound), errors.Is(gerr, segment.ErrDeleted):
				continue
			default:
				return fmt.Errorf("lazymem: engine: fetch: %w", gerr)
			}
			if _, derr := codec.DecodeRecord(b, &c); derr != nil {
				k.damaged = true
				continue
			}
			k.rec = fromCodec(id, &c)
			k.fetched = true
		}
	}
	if err != nil {
		return fmt.Errorf("lazymem: engine: fetch: %w", err)
	}
	return nil
}

// splitRuns cuts ascending ids into at most w runs holding about as
// many log segments each, cutting only between segments (starts[i] is the
// first id of ids[i]'s segment: Log.SegmentStarts). A cold read costs a
// segment read (its head and a text frame decompressed) for the first of
// its records in a segment and little for the others, so runs of equal
// segment counts take about equal time, where runs of equal record counts
// left one goroutine up to half as many segments again as the other (the
// 1M Zipf agent cold recall's first read: 14 and 20, 13 and 14; a fetch
// waits for its slowest run); and a segment split between two runs would
// be decompressed by both. It returns the runs' bounds, len(runs)+1 of
// them: fewer runs than w when the ids lie in fewer than w segments.
func splitRuns(starts []uint64, w int) []int {
	var segs []int // the index of each segment's first id
	for i := range starts {
		if i == 0 || starts[i] != starts[i-1] {
			segs = append(segs, i)
		}
	}
	w = max(1, min(w, len(segs)))
	cuts := make([]int, w+1)
	for j := 1; j < w; j++ {
		cuts[j] = segs[j*len(segs)/w]
	}
	cuts[w] = len(starts)
	return cuts
}
