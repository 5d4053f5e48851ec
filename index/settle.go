package index

import (
	"time"
)

// Settling: the tiered policy leaves an index of n documents in about
// (MergeFactor-1) * log_MergeFactor(n/FlushDocs) sealed segments, and a
// search pays a fixed cost per segment (the terms' lookups, their first
// blocks, the bounds). Once nothing has been added or deleted for
// Options.SettleAfter, the background merger merges the newest sealed
// segments into one, up to Options.SettleMaxDocs live documents, so that
// an index at rest is searched as one segment. Measured on a 1M Zipf
// store (the five segments a load leaves, against the same merged into
// one; thread-CPU p50 of the report's queries, docs/benchmarks/zipf.md):
// rare/none 37 -> 29 us, rare/agent 27 -> 16, mid/agent 71 -> 55,
// cjk/agent 190 -> 155; a merge of the 1M store took 1.9 s of CPU.

// clockStart anchors lastWrite's monotonic nanoseconds.
var clockStart = time.Now()

func monoNow() int64 { return int64(time.Since(clockStart)) }

// wrote records that a document was added or deleted now.
func (x *Index) wrote() { x.lastWrite.Store(monoNow()) }

// settleWait is how long the index must stay unwritten before it settles
// (0 or less: it may settle now).
func (x *Index) settleWait() time.Duration {
	return time.Duration(x.lastWrite.Load() + int64(x.opts.SettleAfter) - monoNow())
}

// Settle merges the newest sealed segments into one now, as the
// background merger does once the index has been left alone for
// Options.SettleAfter: the longest run of them whose live documents add
// up to at most Options.SettleMaxDocs, when it holds two segments or more
// and those but its largest hold at least an eighth of its documents.
// It does nothing otherwise. Benchmarks call it to search an index as it
// is at rest.
func (x *Index) Settle() error {
	_, err := x.mergeWith(x.pickSettle, false)
	return err
}

// pickSettle returns the segments a settle merges (none: nil). Callers
// hold x.mu.
func (x *Index) pickSettle() []*segment {
	sealed := x.sealed()
	live := make([]uint64, len(sealed))
	for i, s := range sealed {
		live[i] = uint64(s.nDocs - s.nDeleted)
	}
	if i, ok := settlePick(live, uint64(x.opts.SettleMaxDocs)); ok {
		return sealed[i:]
	}
	return nil
}

// settlePick returns where the run a settle merges starts, given the live
// documents of the sealed segments in id order: the longest run of the
// newest whose documents add up to at most max, if it holds two segments
// or more and those but its largest hold at least an eighth of it (so a
// settle rewrites at most eight times what was added since the last one).
func settlePick(live []uint64, max uint64) (int, bool) {
	i, sum, big := len(live), uint64(0), uint64(0)
	for i > 0 && sum+live[i-1] <= max {
		i--
		sum += live[i]
		big = maxU64(big, live[i])
	}
	if len(live)-i < 2 || (sum-big)*8 < sum {
		return 0, false
	}
	return i, true
}

func maxU64(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}
