package vecmath

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"testing"
)

// loop runs body under b.Loop on a locked OS thread and adds the metric
// cpu-ns/op: thread CPU time per iteration (see threadCPU).
func loop(b *testing.B, body func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0, ok := threadCPU()
	for b.Loop() {
		body()
	}
	if c1, ok1 := threadCPU(); ok && ok1 && b.N > 0 {
		b.ReportMetric(float64(c1-c0)/float64(b.N), "cpu-ns/op")
	}
}

// dotLoop is the plain Go loop the targets are stated against: one
// accumulator, sequential order, exactly the loop in the stubs' doc comments.
func dotLoop(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

var sink float32

var benchDims = []int{128, 384, 512, 768, 1536}

// BenchmarkDot: one pair of vectors, L1-resident (1536-d is 12 KiB for both).
func BenchmarkDot(b *testing.B) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, dim := range benchDims {
		x, y := randVec(r, dim), randVec(r, dim)
		run := func(name string, f func(a, b []float32) float32) {
			b.Run(fmt.Sprintf("dim=%d/impl=%s", dim, name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(8 * dim))
				var s float32
				loop(b, func() { s += f(x, y) })
				sink = s
			})
		}
		for _, k := range impls {
			run(k.name, k.dot)
		}
		run("loop", dotLoop)
	}
}

func BenchmarkSquaredL2(b *testing.B) {
	r := rand.New(rand.NewPCG(23, 24))
	const dim = 768
	x, y := randVec(r, dim), randVec(r, dim)
	for _, k := range impls {
		b.Run(fmt.Sprintf("dim=%d/impl=%s", dim, k.name), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(8 * dim)
			loop(b, func() { sink += k.squaredL2(x, y) })
		})
	}
}

func BenchmarkCosine(b *testing.B) {
	r := rand.New(rand.NewPCG(25, 26))
	const dim = 768
	x, y := randVec(r, dim), randVec(r, dim)
	for _, k := range impls {
		b.Run(fmt.Sprintf("dim=%d/impl=%s", dim, k.name), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(8 * dim)
			loop(b, func() {
				ab, aa, bb := k.cosineSums(x, y)
				sink += ab + aa + bb
			})
		})
	}
}

// BenchmarkDotBatch: one query against n stored vectors. Bytes are those of
// the stored vectors (the query stays in L1), so MB/s is the rate the
// vectors stream through the kernel. impl=rows calls the single-pair kernel
// once a row, for comparison with the four-row kernel. Set
// LAZYMEM_BENCH_MEM=0 to skip the 1 GB case.
func BenchmarkDotBatch(b *testing.B) {
	r := rand.New(rand.NewPCG(27, 28))
	cases := []struct{ n, dim int }{{500, 768}, {10000, 768}, {100000, 768}, {100000, 384}}
	if os.Getenv("LAZYMEM_BENCH_MEM") != "0" {
		// 1.07 GB of vectors: more than any cache, like the 1 GiB
		// BenchmarkMemBandwidth buffer (the 307 MB of n=100000 may partly
		// stay in this machine's large shared L3).
		cases = append(cases, struct{ n, dim int }{350000, 768})
	}
	for _, c := range cases {
		q := randVec(r, c.dim)
		flat := randVec(r, c.n*c.dim)
		out := make([]float32, c.n)
		for _, k := range impls {
			b.Run(fmt.Sprintf("n=%d/dim=%d/impl=%s", c.n, c.dim, k.name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(4 * c.n * c.dim))
				loop(b, func() { dotBatch(k, q, flat, out) })
			})
		}
		b.Run(fmt.Sprintf("n=%d/dim=%d/impl=rows", c.n, c.dim), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(4 * c.n * c.dim))
			loop(b, func() {
				for i := range out {
					out[i] = active.dot(q, flat[i*c.dim:(i+1)*c.dim])
				}
			})
		})
	}
}

// BenchmarkMemBandwidth is the machine's streaming-read rate, the ceiling for
// DotBatch over data that does not fit in cache: bytes.IndexByte (SIMD
// assembly in the runtime) scanning a 1 GiB zeroed buffer for a byte that is
// not there, i.e. a pure sequential read. impl=memmove copies 512 MiB into
// another 512 MiB (SetBytes counts read + written bytes). Set
// LAZYMEM_BENCH_MEM=0 to skip (it allocates 1 GiB).
func BenchmarkMemBandwidth(b *testing.B) {
	if os.Getenv("LAZYMEM_BENCH_MEM") == "0" {
		b.Skip("LAZYMEM_BENCH_MEM=0")
	}
	buf := make([]byte, 1<<30)
	for i := range buf {
		buf[i] = 1 // fault every page in before timing
	}
	b.Run("size=1GiB/impl=indexbyte", func(b *testing.B) {
		b.SetBytes(int64(len(buf)))
		loop(b, func() {
			if bytes.IndexByte(buf, 0) >= 0 {
				b.Fatal("found a zero")
			}
		})
	})
	b.Run("size=512MiB/impl=memmove", func(b *testing.B) {
		half := len(buf) / 2
		b.SetBytes(int64(2 * half))
		loop(b, func() { copy(buf[:half], buf[half:]) })
	})
}

func BenchmarkTopK(b *testing.B) {
	r := rand.New(rand.NewPCG(29, 30))
	const n, k = 100000, 10
	scores := randVec(r, n)
	b.Run(fmt.Sprintf("n=%d/k=%d/impl=topk", n, k), func(b *testing.B) {
		b.ReportAllocs()
		dst := make([]int, 0, k)
		loop(b, func() { dst = TopKInto(dst, scores, k) })
	})
	b.Run(fmt.Sprintf("n=%d/k=%d/impl=sort", n, k), func(b *testing.B) {
		b.ReportAllocs()
		idx := make([]int, n)
		loop(b, func() {
			for i := range idx {
				idx[i] = i
			}
			sort.Slice(idx, func(x, y int) bool {
				sx, sy := scores[idx[x]], scores[idx[y]]
				return sx > sy || (sx == sy && idx[x] < idx[y])
			})
			_ = idx[:k]
		})
	})
}

// BenchmarkDotFloat16: the binary16 kernels, L1-resident pair and batch.
// SetBytes counts the bytes read (float32 query + binary16 vector).
func BenchmarkDotFloat16(b *testing.B) {
	r := rand.New(rand.NewPCG(31, 32))
	const dim = 768
	q := randVec(r, dim)
	h := AppendFloat16(nil, randVec(r, dim))
	for _, k := range impls {
		b.Run(fmt.Sprintf("dim=%d/impl=%s", dim, k.name), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(6 * dim)
			loop(b, func() { sink += k.dotF16(q, h) })
		})
	}
}

// BenchmarkDotBatchFloat16: as BenchmarkDotBatch with binary16 rows;
// SetBytes counts the stored rows (2 bytes per element).
func BenchmarkDotBatchFloat16(b *testing.B) {
	r := rand.New(rand.NewPCG(33, 34))
	for _, c := range []struct{ n, dim int }{{500, 768}, {100000, 768}} {
		q := randVec(r, c.dim)
		flat := AppendFloat16(nil, randVec(r, c.n*c.dim))
		out := make([]float32, c.n)
		b.Run(fmt.Sprintf("n=%d/dim=%d/impl=%s", c.n, c.dim, active.name), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(2 * c.n * c.dim))
			loop(b, func() {
				if err := DotBatchFloat16(q, flat, c.dim, out); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}
