package index

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestParetoFrontier: the frontier of integer keys equals the one sorted
// with a comparison function (tf descending, then length ascending), ties
// and extreme values included.
func TestParetoFrontier(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 300 {
		pairs := make([]tfdl, r.IntN(40)+1)
		for i := range pairs {
			if n%3 == 0 {
				pairs[i] = tfdl{tf: r.Uint32(), dl: r.Uint32()}
			} else { // small ranges: ties in tf and length
				pairs[i] = tfdl{tf: r.Uint32N(5), dl: r.Uint32N(6)}
			}
		}
		keys := make([]uint64, len(pairs))
		for i, p := range pairs {
			keys[i] = frontierKey(p)
		}
		got := paretoFrontier(keys)
		slices.SortFunc(pairs, func(a, b tfdl) int {
			if a.tf != b.tf {
				if a.tf > b.tf {
					return -1
				}
				return 1
			}
			if a.dl < b.dl {
				return -1
			}
			if a.dl > b.dl {
				return 1
			}
			return 0
		})
		var want []tfdl
		for _, p := range pairs {
			if len(want) == 0 || p.dl < want[len(want)-1].dl {
				want = append(want, p)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("case %d: frontier %v, want %v", n, got, want)
		}
	}
}
