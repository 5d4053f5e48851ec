package index

import (
	"math"
	"slices"
)

// hitHeap is a bounded min-heap of the best hits so far; the root is the
// worst (lowest score, then highest id).
type hitHeap struct {
	h []Hit
	k int
}

func (h *hitHeap) reset(k int) {
	h.k = k
	if cap(h.h) < min(k, 4096) {
		h.h = make([]Hit, 0, min(k, 4096))
	}
	h.h = h.h[:0]
}

func (h *hitHeap) full() bool { return len(h.h) >= h.k }

// threshold is the score a new document must beat (-Inf until full).
func (h *hitHeap) threshold() float64 {
	if !h.full() {
		return math.Inf(-1)
	}
	return h.h[0].Score
}

func worse(a, b Hit) bool { return a.Score < b.Score || (a.Score == b.Score && a.ID > b.ID) }

// push offers a hit; it reports whether the threshold may have changed.
func (h *hitHeap) push(id uint64, score float64) bool {
	n := Hit{ID: id, Score: score}
	if !h.full() {
		h.h = append(h.h, n)
		i := len(h.h) - 1
		for i > 0 {
			p := (i - 1) / 2
			if !worse(h.h[i], h.h[p]) {
				break
			}
			h.h[i], h.h[p] = h.h[p], h.h[i]
			i = p
		}
		return h.full()
	}
	if !worse(h.h[0], n) {
		return false
	}
	h.h[0] = n
	i := 0
	for {
		l := 2*i + 1
		if l >= len(h.h) {
			break
		}
		c := l
		if r := l + 1; r < len(h.h) && worse(h.h[r], h.h[l]) {
			c = r
		}
		if !worse(h.h[c], h.h[i]) {
			break
		}
		h.h[i], h.h[c] = h.h[c], h.h[i]
		i = c
	}
	return true
}

// appendSorted appends the hits best first and empties the heap.
func (h *hitHeap) appendSorted(dst []Hit) []Hit {
	start := len(dst)
	dst = append(dst, h.h...)
	out := dst[start:]
	slices.SortFunc(out, func(a, b Hit) int {
		if worse(a, b) {
			return 1
		}
		if worse(b, a) {
			return -1
		}
		return 0
	})
	h.h = h.h[:0]
	return dst
}
