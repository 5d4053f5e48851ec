package vecmath

// TopK returns the indices of the k highest scores, best first. Equal scores
// rank by lower index; NaN ranks below every number (-Inf included), so a
// NaN score is returned only when fewer than k other scores exist. k <= 0
// returns nil; k > len(scores) returns every index.
//
// It keeps a k-element heap of the best indices seen so far and visits each
// score once: O(n + m log k), where m, the number of heap replacements, is
// about k*ln(n/k) for scores in random order. For k << n this is a single
// comparison per score against the current k-th best.
func TopK(scores []float32, k int) []int {
	if k <= 0 {
		return nil
	}
	return TopKInto(make([]int, 0, min(k, len(scores))), scores, k)
}

// TopKInto is TopK writing into dst[:0]: when cap(dst) >= min(k,
// len(scores)) it does not allocate, so a caller reusing dst across queries
// runs allocation-free. It returns the filled slice.
func TopKInto(dst []int, scores []float32, k int) []int {
	dst = dst[:0]
	if k <= 0 {
		return dst
	}
	k = min(k, len(scores))
	if cap(dst) < k {
		dst = make([]int, 0, k)
	}
	h := dst[:k]
	for i := range h {
		h[i] = i
	}
	// h is a heap with the worst kept index at the root.
	for i := k/2 - 1; i >= 0; i-- {
		siftDown(h, scores, i)
	}
	if k == 0 {
		return h
	}
	// Indices arrive in increasing order, so a newcomer that ties the root
	// loses (the root has the lower index): only a strictly greater score, or
	// any number when the root is NaN, enters. That is one float comparison
	// per score in the common case.
	thr := scores[h[0]]
	thrNaN := thr != thr
	for i := k; i < len(scores); i++ {
		s := scores[i]
		if s > thr || (thrNaN && s == s) {
			h[0] = i
			siftDown(h, scores, 0)
			thr = scores[h[0]]
			thrNaN = thr != thr
		}
	}
	// Heap sort: moving the root (worst) to the end each time leaves h
	// ordered best first.
	for end := k - 1; end > 0; end-- {
		h[0], h[end] = h[end], h[0]
		siftDown(h[:end], scores, 0)
	}
	return h
}

// worse reports whether index i ranks below index j.
func worse(scores []float32, i, j int) bool {
	a, b := scores[i], scores[j]
	if a < b {
		return true
	}
	if a > b {
		return false
	}
	aNaN, bNaN := a != a, b != b
	if aNaN != bNaN {
		return aNaN
	}
	return i > j
}

// siftDown restores the heap property (root = worst) below h[i].
func siftDown(h []int, scores []float32, i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		w := l
		if r := l + 1; r < n && worse(scores, h[r], h[l]) {
			w = r
		}
		if !worse(scores, h[w], h[i]) {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}
