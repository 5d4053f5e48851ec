package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// unpackTierOrGo is unpack on tier, the Go loops where the tier does not
// take the values (what unpack does on its tier).
func unpackTierOrGo(tier int, data []byte, out []uint32, w uint, base uint32) {
	if !unpackAt(tier, data, out, w, base) {
		unpackGo(data, out, w, base)
	}
}

// unpackGapsTierOrGo is unpackGaps on tier.
func unpackGapsTierOrGo(tier int, data []byte, out []uint32, w uint, acc uint64) uint64 {
	if last, ok := unpackGapsAt(tier, data, out, w, acc); ok {
		return last
	}
	return unpackGapsGo(data, out, w, acc)
}

// TestUnpackKernels holds every tier of unpack and unpackGaps this CPU
// runs (the kernels) to the Go loops: every width, every count up to two
// blocks, random bits, bases and sums near the kernels' uint32 limit.
func TestUnpackKernels(t *testing.T) {
	if len(unpackTiers) == 1 {
		t.Log("no kernel on this CPU or build: the Go loops are compared with themselves")
	}
	for _, tier := range unpackTiers {
		t.Run(fmt.Sprint("tier=", tier), func(t *testing.T) { testUnpackKernels(t, tier) })
	}
	// And the dispatch itself, on the tier in use.
	data := []byte{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x0f, 0xed, 0xcb, 0xa9}
	got, want := make([]uint32, 24), make([]uint32, 24)
	unpack(data, got, 4, 9)
	unpackGo(data, want, 4, 9)
	if !slices.Equal(got, want) {
		t.Fatalf("dispatch: %v, want %v", got, want)
	}
	if ga, wa := unpackGaps(data, got, 4, 100), unpackGapsGo(data, want, 4, 100); ga != wa || !slices.Equal(got, want) {
		t.Fatalf("dispatch: %d %v, want %d %v", ga, got, wa, want)
	}
}

func testUnpackKernels(t *testing.T, tier int) {
	r := rand.New(rand.NewPCG(1, 2))
	for w := uint(0); w <= 32; w++ {
		for n := 0; n <= 2*blockSize; n++ {
			data := make([]byte, packedTFsLen(n, w)-1+r.IntN(3)) // exact or longer
			for i := range data {
				data[i] = byte(r.Uint32())
			}
			base := r.Uint32() >> (r.IntN(32) + 1)
			got, want := make([]uint32, n+1), make([]uint32, n+1)
			got[n], want[n] = 7, 7 // past out: never written
			unpackTierOrGo(tier, data, got[:n], w, base)
			unpackGo(data, want[:n], w, base)
			if !slices.Equal(got, want) {
				t.Fatalf("unpack w=%d n=%d base=%d:\n got %v\nwant %v", w, n, base, got, want)
			}
			for _, acc := range []uint64{0, uint64(r.Uint32() >> 8), (1<<32 - 1 - uint64(n)<<w) & (1<<33 - 1), 1<<32 - 1 - uint64(n)<<w, 1<<32 - 1} {
				ga := unpackGapsTierOrGo(tier, data, got[:n], w, acc)
				wa := unpackGapsGo(data, want[:n], w, acc)
				if ga != wa || !slices.Equal(got, want) {
					t.Fatalf("unpackGaps w=%d n=%d acc=%d: sums %d, %d\n got %v\nwant %v", w, n, acc, ga, wa, got, want)
				}
			}
		}
	}
}

// TestUnpackShortData: a buffer shorter than its values (a damaged
// block the callers would reject first) decodes as the Go loops do, on
// every tier.
func TestUnpackShortData(t *testing.T) {
	for _, tier := range unpackTiers {
		for w := uint(1); w <= 25; w++ {
			data := []byte{0xff, 0x0f, 0xf0}
			got, want := make([]uint32, 40), make([]uint32, 40)
			unpackTierOrGo(tier, data, got, w, 3)
			unpackGo(data, want, w, 3)
			if !slices.Equal(got, want) {
				t.Fatalf("tier %d w=%d:\n got %v\nwant %v", tier, w, got, want)
			}
		}
	}
}

// BenchmarkUnpackGaps decodes a block's 127 doc gaps of each width on
// every tier this CPU runs (0 the Go loops, 1 AVX2, 2 AVX-512).
func BenchmarkUnpackGaps(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, w := range []uint{3, 7, 12} {
		data := make([]byte, packedTFsLen(blockSize-1, w)-1)
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		out := make([]uint32, blockSize-1)
		for _, tier := range unpackTiers {
			b.Run(fmt.Sprintf("w=%d/tier=%d", w, tier), func(b *testing.B) {
				for b.Loop() {
					unpackGapsTierOrGo(tier, data, out, w, 5)
				}
			})
		}
	}
}
