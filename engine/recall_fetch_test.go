package engine

import (
	"slices"
	"testing"
)

// TestSplitRuns: the runs cover the ids in order, none is empty, each
// holds about as many segments as the others (not as many ids), and no
// segment is split between two runs.
func TestSplitRuns(t *testing.T) {
	// seg gives the starts of n ids in the segment starting at first.
	seg := func(first uint64, n int) []uint64 {
		return slices.Repeat([]uint64{first}, n)
	}
	for _, tc := range []struct {
		name   string
		starts []uint64
		w      int
		want   []int
	}{
		{"two segments, 9 and 11 ids", slices.Concat(seg(100, 9), seg(300, 11)), 2, []int{0, 9, 20}},
		{"one segment: one run", seg(1, 16), 2, []int{0, 16}},
		{"unsealed ids: one a segment", []uint64{5, 6, 7, 8, 9, 10, 11, 12}, 2, []int{0, 4, 8}},
		{"two segments of 2 and 18 ids", slices.Concat(seg(100, 2), seg(300, 18)), 2, []int{0, 2, 20}},
		{"three segments, four runs", slices.Concat(seg(100, 10), seg(300, 10), seg(500, 12)), 4, []int{0, 10, 20, 32}},
		// The 1M Zipf agent cold recall's case: many ids in a few
		// segments on one side, one id a segment on the other.
		{"segments, not ids", slices.Concat(seg(10, 6), seg(20, 6), []uint64{30, 40, 50, 60}), 2, []int{0, 13, 16}},
		{"five segments, two runs", slices.Concat(seg(10, 1), seg(20, 1), seg(30, 1), seg(40, 1), seg(50, 4)), 2, []int{0, 2, 8}},
	} {
		got := splitRuns(tc.starts, tc.w)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: cuts %v, want %v", tc.name, got, tc.want)
		}
		for j := 1; j < len(got); j++ {
			if got[j] <= got[j-1] {
				t.Errorf("%s: run %d empty: %v", tc.name, j-1, got)
			}
			if j < len(got)-1 && tc.starts[got[j]] == tc.starts[got[j]-1] {
				t.Errorf("%s: segment %d split at %d", tc.name, tc.starts[got[j]], got[j])
			}
		}
	}
}
