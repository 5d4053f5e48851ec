package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestUnpackKernels holds unpack and unpackGaps (the kernels where the
// CPU has them) to their Go loops: every width, every count up to two
// blocks, random bits, bases and sums near the kernels' uint32 limit.
func TestUnpackKernels(t *testing.T) {
	if len(unpackTiers) == 1 {
		t.Log("no kernel on this CPU or build: the Go loops are compared with themselves")
	}
	was := unpackTier
	defer func() { unpackTier = was }()
	for _, tier := range unpackTiers {
		unpackTier = tier
		t.Run(fmt.Sprint("tier=", tier), testUnpackKernels)
	}
}

func testUnpackKernels(t *testing.T) {
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
			unpack(data, got[:n], w, base)
			unpackGo(data, want[:n], w, base)
			if !slices.Equal(got, want) {
				t.Fatalf("unpack w=%d n=%d base=%d:\n got %v\nwant %v", w, n, base, got, want)
			}
			for _, acc := range []uint64{0, uint64(r.Uint32() >> 8), (1<<32 - 1 - uint64(n)<<w) & (1<<33 - 1), 1<<32 - 1 - uint64(n)<<w, 1<<32 - 1} {
				ga := unpackGaps(data, got[:n], w, acc)
				wa := unpackGapsGo(data, want[:n], w, acc)
				if ga != wa || !slices.Equal(got, want) {
					t.Fatalf("unpackGaps w=%d n=%d acc=%d: sums %d, %d\n got %v\nwant %v", w, n, acc, ga, wa, got, want)
				}
			}
		}
	}
}

// TestUnpackShortData: a buffer shorter than its values (a damaged
// block the callers would reject first) decodes as the Go loops do.
func TestUnpackShortData(t *testing.T) {
	was := unpackTier
	defer func() { unpackTier = was }()
	for _, unpackTier = range unpackTiers {
		testUnpackShortData(t)
	}
}

func testUnpackShortData(t *testing.T) {
	for w := uint(1); w <= 25; w++ {
		data := []byte{0xff, 0x0f, 0xf0}
		got, want := make([]uint32, 40), make([]uint32, 40)
		unpack(data, got, w, 3)
		unpackGo(data, want, w, 3)
		if !slices.Equal(got, want) {
			t.Fatalf("w=%d:\n got %v\nwant %v", w, got, want)
		}
	}
}

// BenchmarkUnpackGaps decodes a block's 127 doc gaps of each width on
// every tier this CPU runs (0 the Go loops, 1 AVX2, 2 AVX-512).
func BenchmarkUnpackGaps(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	was := unpackTier
	defer func() { unpackTier = was }()
	for _, w := range []uint{3, 7, 12} {
		data := make([]byte, packedTFsLen(blockSize-1, w)-1)
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		out := make([]uint32, blockSize-1)
		for _, tier := range unpackTiers {
			b.Run(fmt.Sprintf("w=%d/tier=%d", w, tier), func(b *testing.B) {
				unpackTier = tier
				for b.Loop() {
					unpackGaps(data, out, w, 5)
				}
			})
		}
	}
}
