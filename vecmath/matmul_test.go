package vecmath

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// matLanes is the number of partial sums MatMulT keeps per result on
// implementation k: one vector register's lanes in the block kernels (16
// on AVX-512, 8 on AVX2), at least 16 in the NEON dot and dotBatch kernels
// it falls back on, 4 in the generic code.
func matLanes(name string) int {
	if name == "avx2" {
		return 8
	}
	return min(16, width(name))
}

// checkMatMulT holds out (m x n) to the float64 oracle within the doc.go
// bound for lanes partial sums.
func checkMatMulT(t *testing.T, name string, a []float32, m int, b []float32, n, dim, lanes int, out []float32) {
	t.Helper()
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			w, abs := oracleDot(a[i*dim:(i+1)*dim], b[j*dim:(j+1)*dim])
			if got := out[i*n+j]; math.Abs(float64(got)-w) > gamma(depth(dim, lanes))*abs {
				t.Fatalf("%s m=%d n=%d dim=%d out[%d,%d] = %v, want %v", name, m, n, dim, i, j, got, w)
			}
		}
	}
}

// TestMatMulTOracle runs every implementation and the reference over random
// shapes (m, n in 1..9 and a few larger, dim straddling every unroll and
// mask boundary) on guarded slices at unaligned offsets, against the
// float64 oracle, and checks nothing outside the slices is touched.
func TestMatMulTOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	dims := []int{1, 2, 3, 5, 15, 16, 17, 31, 33, 64, 100, 512, 513}
	sizes := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13}
	for _, dim := range dims {
		for trial := 0; trial < 6; trial++ {
			m := sizes[r.IntN(len(sizes))]
			n := sizes[r.IntN(len(sizes))]
			a0, b0 := randVec(r, m*dim), randVec(r, n*dim)
			offA, offB, offO := offsets[r.IntN(len(offsets))], offsets[r.IntN(len(offsets))], offsets[r.IntN(len(offsets))]
			a, abuf := guarded(a0, offA)
			b, bbuf := guarded(b0, offB)
			for _, k := range impls {
				out, obuf := guarded(make([]float32, m*n), offO)
				matMulT(k, a, m, b, n, dim, out)
				checkMatMulT(t, k.name, a0, m, b0, n, dim, matLanes(k.name), out)
				checkGuards(t, obuf, guard+offO, m*n)
			}
			ref := make([]float32, m*n)
			matMulTRef(a, m, b, n, dim, ref)
			checkMatMulT(t, "ref", a0, m, b0, n, dim, 4, ref)
			checkGuards(t, abuf, guard+offA, m*dim)
			checkGuards(t, bbuf, guard+offB, n*dim)
		}
	}
}

// TestMatMulTExact: on small integers every summation order is exact, so
// every implementation must equal the reference bit for bit.
func TestMatMulTExact(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	for _, dim := range []int{7, 16, 40, 300} {
		m, n := 11, 10
		a, b := make([]float32, m*dim), make([]float32, n*dim)
		for i := range a {
			a[i] = float32(r.IntN(17) - 8)
		}
		for i := range b {
			b[i] = float32(r.IntN(17) - 8)
		}
		want := make([]float32, m*n)
		matMulTRef(a, m, b, n, dim, want)
		for _, k := range impls {
			got := make([]float32, m*n)
			matMulT(k, a, m, b, n, dim, got)
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%s dim=%d out[%d] = %v, want %v", k.name, dim, i, got[i], want[i])
				}
			}
		}
	}
}

// TestMatMulTShapes: bad shapes are refused with ErrDimension and out is
// left alone; longer slices are fine and only their prefixes are used.
func TestMatMulTShapes(t *testing.T) {
	a, b := make([]float32, 12), make([]float32, 8)
	for i := range a {
		a[i] = 1
	}
	for i := range b {
		b[i] = 2
	}
	cases := []struct {
		name       string
		m, n, dim  int
		outLen     int
		wantErrDim bool
	}{
		{"dim0", 1, 1, 0, 4, true},
		{"negm", -1, 1, 4, 4, true},
		{"negn", 1, -1, 4, 4, true},
		{"shorta", 4, 1, 4, 4, true},
		{"shortb", 1, 3, 4, 4, true},
		{"shortout", 3, 2, 4, 5, true},
		{"ok", 3, 2, 4, 7, false},
		{"empty", 0, 2, 4, 0, false},
	}
	for _, c := range cases {
		out := make([]float32, c.outLen)
		for i := range out {
			out[i] = -1
		}
		err := MatMulT(a, c.m, b, c.n, c.dim, out)
		if c.wantErrDim {
			if !errors.Is(err, ErrDimension) {
				t.Fatalf("%s: err %v, want ErrDimension", c.name, err)
			}
			for _, v := range out {
				if v != -1 {
					t.Fatalf("%s: out written on error", c.name)
				}
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for i := 0; i < c.m*c.n; i++ {
			if out[i] != 8 {
				t.Fatalf("%s: out[%d] = %v, want 8", c.name, i, out[i])
			}
		}
		for i := c.m * c.n; i < len(out); i++ {
			if out[i] != -1 {
				t.Fatalf("%s: out[%d] beyond m*n written", c.name, i)
			}
		}
	}
}

// FuzzMatMulT is the differential fuzz target for MatMulT: fuzzer-chosen
// values and shape, every implementation against the float64 oracle.
func FuzzMatMulT(f *testing.F) {
	f.Add(make([]byte, 6*70), uint8(4), uint8(3))
	seed := make([]byte, 6*600)
	for i := range seed {
		seed[i] = byte(i * 13)
	}
	f.Add(seed, uint8(17), uint8(6))
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, uint8(1), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, dimB, mB uint8) {
		v, w := decodeFuzzVec(data)
		dim := 1 + int(dimB)%40
		m := 1 + int(mB)%9
		if len(v) < m*dim {
			return
		}
		n := min(len(w)/dim, 9)
		if n == 0 {
			return
		}
		a, b := v[:m*dim], w[:n*dim]
		for _, k := range impls {
			out, obuf := guarded(make([]float32, m*n), 0)
			matMulT(k, a, m, b, n, dim, out)
			checkMatMulT(t, k.name, a, m, b, n, dim, matLanes(k.name), out)
			checkGuards(t, obuf, guard, m*n)
		}
	})
}

// BenchmarkMatMulT: m token rows against n weight rows, the shapes of the
// USE-lite projections (dim 512; n 1536 is the QKV block, 2048 the FFN;
// n=48 and n=16 are the weight blocks apply() multiplies at a time).
// kernel=blocked is MatMulT on implementation impl; kernel=dotbatch runs
// that implementation's DotBatch once per row of a (what MatMulT replaces).
// Bytes are those of b, the matrix streamed per call.
func BenchmarkMatMulT(b *testing.B) {
	r := rand.New(rand.NewPCG(45, 46))
	for _, c := range []struct{ m, n, dim int }{{1, 512, 512}, {8, 512, 512}, {32, 512, 512}, {32, 2048, 512}, {64, 1536, 512}, {64, 48, 512}, {64, 16, 1536}} {
		x := randVec(r, c.m*c.dim)
		wt := randVec(r, c.n*c.dim)
		out := make([]float32, c.m*c.n)
		for _, k := range impls {
			b.Run(fmt.Sprintf("m=%d/n=%d/dim=%d/impl=%s/kernel=blocked", c.m, c.n, c.dim, k.name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(4 * c.n * c.dim))
				loop(b, func() { matMulT(k, x, c.m, wt, c.n, c.dim, out) })
			})
			if k.matMulT == nil {
				continue // matMulT is the dotbatch loop already
			}
			b.Run(fmt.Sprintf("m=%d/n=%d/dim=%d/impl=%s/kernel=dotbatch", c.m, c.n, c.dim, k.name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(4 * c.n * c.dim))
				loop(b, func() {
					for i := 0; i < c.m; i++ {
						dotBatch(k, x[i*c.dim:(i+1)*c.dim], wt, out[i*c.n:(i+1)*c.n])
					}
				})
			})
		}
	}
}
