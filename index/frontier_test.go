package index

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestParetoFrontier: the frontier built pair by pair equals the one
// read off the pairs sorted by tf descending, then length ascending (the
// pairs kept are those shorter than every pair before them), ties and
// extreme values included.
func TestParetoFrontier(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 300 {
		size := r.IntN(40) + 1
		if n%10 == 0 {
			size = 2000 // a frequent term's blocks
		}
		pairs := make([]tfdl, size)
		for i := range pairs {
			if n%3 == 0 {
				pairs[i] = tfdl{tf: r.Uint32(), dl: r.Uint32()}
			} else { // small ranges: ties in tf and length
				pairs[i] = tfdl{tf: r.Uint32N(5), dl: r.Uint32N(6)}
			}
		}
		var got []tfdl
		for _, p := range pairs {
			got = addFrontier(got, p)
		}
		if want := sortedFrontier(pairs); !slices.Equal(got, want) {
			t.Fatalf("case %d: frontier %v, want %v", n, got, want)
		}
	}
}

// sortedFrontier is the frontier as it was computed before addFrontier:
// the pairs sorted by tf descending, then length ascending, each kept if
// shorter than every pair before it. It sorts pairs.
func sortedFrontier(pairs []tfdl) []tfdl {
	slices.SortFunc(pairs, func(a, b tfdl) int {
		if a.tf != b.tf {
			return int(b.tf) - int(a.tf)
		}
		return int(a.dl) - int(b.dl)
	})
	var out []tfdl
	for _, p := range pairs {
		if len(out) == 0 || p.dl < out[len(out)-1].dl {
			out = append(out, p)
		}
	}
	return out
}

// BenchmarkFrontier: the frontier of a frequent term's block corners in
// one sealed segment (2 x 800 blocks: tf 1-12, lengths 4-200), built
// pair by pair against sorted, side by side.
func BenchmarkFrontier(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	pairs := make([]tfdl, 1600)
	for i := range pairs {
		pairs[i] = tfdl{tf: 1 + r.Uint32N(12), dl: 4 + r.Uint32N(197)}
	}
	b.Run("impl=sorted", func(b *testing.B) {
		b.ReportAllocs()
		scratch := make([]tfdl, len(pairs))
		for b.Loop() {
			copy(scratch, pairs)
			sortedFrontier(scratch)
		}
	})
	b.Run("impl=incremental", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var f []tfdl
			for _, p := range pairs {
				f = addFrontier(f, p)
			}
		}
	})
}
