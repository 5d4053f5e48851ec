package index

import (
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// TestFilterCursor checks the cursor against Contains over bitmaps of
// every container kind (array, bitmap, run) spanning several containers,
// asked ascending ids with repeats and gaps that skip whole containers.
func TestFilterCursor(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for round := 0; round < 40; round++ {
		bm := roaring.New()
		for c := 0; c < 6; c++ {
			base := uint32(rng.IntN(8)) << 16
			switch rng.IntN(4) {
			case 0: // array
				for j := 0; j < 1+rng.IntN(300); j++ {
					bm.Add(base + uint32(rng.IntN(1<<16)))
				}
			case 1: // bitmap
				for j := 0; j < 5000+rng.IntN(20000); j++ {
					bm.Add(base + uint32(rng.IntN(1<<16)))
				}
			case 2: // run
				lo := base + uint32(rng.IntN(1<<15))
				bm.AddRange(uint64(lo), uint64(lo)+uint64(1+rng.IntN(1<<15)))
			}
		}
		bm.RunOptimize()
		var c filterCursor
		from := uint32(rng.IntN(1 << 17))
		c.reset(bm, from)
		id := from
		for n := 0; n < 3000 && id < 9<<16; n++ {
			if got, want := c.contains(id), bm.Contains(id); got != want {
				t.Fatalf("round %d: contains(%d) = %v, want %v", round, id, got, want)
			}
			switch rng.IntN(10) {
			case 0: // ask the same id again
			case 1:
				id += uint32(rng.IntN(1 << 16)) // skip containers
			default:
				id += uint32(rng.IntN(64))
			}
		}
	}
	var c filterCursor // an empty bitmap holds nothing
	c.reset(roaring.New(), 0)
	if c.contains(0) || c.contains(7) {
		t.Fatal("empty bitmap: contains")
	}
}
