package engine

import (
	"slices"
	"testing"
)

// TestSplitRuns: the runs cover the ids in order, none is empty, and a cut
// lands on the widest gap near the middle (two segments' ids) rather than
// inside a segment's.
func TestSplitRuns(t *testing.T) {
	seg := func(first uint64, n int) []uint64 {
		var ids []uint64
		for i := range n {
			ids = append(ids, first+uint64(i))
		}
		return ids
	}
	for _, tc := range []struct {
		name string
		ids  []uint64
		w    int
		want []int
	}{
		{"two segments, 9 and 11 ids", append(seg(100, 9), seg(300, 11)...), 2, []int{0, 9, 20}},
		{"no gap: the middle", seg(1, 16), 2, []int{0, 8, 16}},
		{"gap too far from the middle", append(seg(100, 2), seg(300, 18)...), 2, []int{0, 10, 20}},
		{"three segments, four runs", append(append(seg(100, 10), seg(300, 10)...), seg(500, 12)...), 4, []int{0, 10, 16, 24, 32}},
	} {
		got := splitRuns(tc.ids, tc.w)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: cuts %v, want %v", tc.name, got, tc.want)
		}
		for j := 1; j < len(got); j++ {
			if got[j] <= got[j-1] {
				t.Errorf("%s: run %d empty: %v", tc.name, j-1, got)
			}
		}
	}
}
