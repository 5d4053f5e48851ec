package vecmath

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// testLengths straddles every unroll boundary of every implementation
// (generic: 4; NEON: 16; AVX2: 8/32; AVX-512: 16/64; batch: 2 vectors).
var testLengths = func() []int {
	var ls []int
	for n := 0; n <= 17; n++ {
		ls = append(ls, n)
	}
	for _, c := range []int{32, 64, 128, 384, 768, 1536} {
		ls = append(ls, c-1, c, c+1)
	}
	return ls
}()

// offsets are element offsets of the slice start inside its buffer, so the
// kernels see starts that are 4-byte but not 16/32/64-byte aligned.
var offsets = []int{0, 1, 3, 7, 15}

const guard = 32 // elements of poison on each side of a slice

// poison is a signalling-free NaN with a recognizable payload: a kernel that
// reads it into a sum returns NaN, and one that writes over it is caught by
// a bit comparison.
var poison = math.Float32frombits(0x7fc0dead)

// guarded returns a copy of v placed at offset off inside a poisoned buffer,
// with cap == len so append or reslicing cannot reach the guard either.
func guarded(v []float32, off int) (s, buf []float32) {
	buf = make([]float32, guard+off+len(v)+guard)
	for i := range buf {
		buf[i] = poison
	}
	start := guard + off
	copy(buf[start:], v)
	return buf[start : start+len(v) : start+len(v)], buf
}

// checkGuards fails t if anything outside buf[start:start+n] changed.
func checkGuards(t *testing.T, buf []float32, start, n int) {
	t.Helper()
	for i, x := range buf {
		if i >= start && i < start+n {
			continue
		}
		if math.Float32bits(x) != math.Float32bits(poison) {
			t.Fatalf("guard element %d (slice is [%d:%d]) overwritten: %v", i, start, start+n, x)
		}
	}
}

// The float64 oracles. Every float32 product is exact in float64 and the
// sums here are far from float64's rounding error, so they stand for the
// exact value.
func oracleDot(a, b []float32) (sum, abs float64) {
	for i := range a {
		p := float64(a[i]) * float64(b[i])
		sum += p
		abs += math.Abs(p)
	}
	return sum, abs
}

func oracleL2(a, b []float32) float64 {
	var s float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		s += d * d
	}
	return s
}

// gamma is Higham's gamma_k = k*u/(1-k*u) for float32 (u = 2^-24).
func gamma(k int) float64 {
	const u = 1.0 / (1 << 24)
	return float64(k) * u / (1 - float64(k)*u)
}

// depth bounds how many roundings one product goes through in a kernel that
// keeps `lanes` partial sums, folds them pairwise, and adds a tail: its own
// product (1), the partial sum it joins (ceil(n/lanes)), the fold
// (log2(lanes)) and the tail merge (1). doc.go states the same bound.
func depth(n, lanes int) int {
	return 1 + (n+lanes-1)/lanes + bits.Len(uint(lanes)) + 1
}

// width is the number of independent partial sums each implementation keeps.
func width(name string) int {
	switch name {
	case "avx512":
		return 128
	case "avx2":
		return 32
	case "neon":
		return 16
	default:
		return 4
	}
}

func randVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// intVec holds small integers: every product and every partial sum in any
// order is exact in float32 (|sum| <= 1537*64 < 2^24), so kernels must agree
// with the oracle bit for bit, and a single dropped or repeated element
// shows.
func intVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.IntN(17) - 8)
	}
	return v
}

func forEachImpl(t *testing.T, f func(t *testing.T, k *kernels)) {
	for _, k := range impls {
		t.Run("impl="+k.name, func(t *testing.T) { f(t, k) })
	}
}

func TestImplsIncludeGeneric(t *testing.T) {
	if impls[len(impls)-1] != &genericKernels {
		t.Fatalf("last implementation is %q, want generic", impls[len(impls)-1].name)
	}
	if active != impls[0] || Implementation() != impls[0].name {
		t.Fatalf("active %q is not the best available %q", active.name, impls[0].name)
	}
	names := ""
	for _, k := range impls {
		names += " " + k.name
	}
	t.Logf("implementations on this machine:%s", names)
}

func TestDotExactIntegers(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	forEachImpl(t, func(t *testing.T, k *kernels) {
		for _, n := range testLengths {
			for _, off := range offsets {
				a0, b0 := intVec(r, n), intVec(r, n)
				a, abuf := guarded(a0, off)
				b, bbuf := guarded(b0, off+1)
				want, _ := oracleDot(a0, b0)
				if got := k.dot(a, b); float64(got) != want {
					t.Fatalf("dot n=%d off=%d: got %v want %v", n, off, got, want)
				}
				wantL2 := oracleL2(a0, b0)
				if got := k.squaredL2(a, b); float64(got) != wantL2 {
					t.Fatalf("squaredL2 n=%d off=%d: got %v want %v", n, off, got, wantL2)
				}
				ab, aa, bb := k.cosineSums(a, b)
				wab, _ := oracleDot(a0, b0)
				waa, _ := oracleDot(a0, a0)
				wbb, _ := oracleDot(b0, b0)
				if float64(ab) != wab || float64(aa) != waa || float64(bb) != wbb {
					t.Fatalf("cosineSums n=%d off=%d: got %v %v %v want %v %v %v", n, off, ab, aa, bb, wab, waa, wbb)
				}
				checkGuards(t, abuf, guard+off, n)
				checkGuards(t, bbuf, guard+off+1, n)
			}
		}
	})
}

func TestDotOracleBound(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	forEachImpl(t, func(t *testing.T, k *kernels) {
		h := width(k.name)
		for _, n := range testLengths {
			for _, off := range offsets {
				a0, b0 := randVec(r, n), randVec(r, n)
				a, _ := guarded(a0, off)
				b, _ := guarded(b0, off)
				want, abs := oracleDot(a0, b0)
				got := k.dot(a, b)
				if tol := gamma(depth(n, h)) * abs; math.Abs(float64(got)-want) > tol {
					t.Fatalf("dot n=%d off=%d: got %v want %v (tol %g)", n, off, got, want, tol)
				}
				// (a-b) rounds once before it is squared: two more roundings.
				wantL2 := oracleL2(a0, b0)
				gotL2 := k.squaredL2(a, b)
				if tol := gamma(depth(n, h)+2) * wantL2; math.Abs(float64(gotL2)-wantL2) > tol {
					t.Fatalf("squaredL2 n=%d off=%d: got %v want %v (tol %g)", n, off, gotL2, wantL2, tol)
				}
				ab, aa, bb := k.cosineSums(a, b)
				waa, _ := oracleDot(a0, a0)
				wbb, _ := oracleDot(b0, b0)
				for _, c := range []struct {
					name      string
					got       float32
					want, abs float64
				}{{"ab", ab, want, abs}, {"aa", aa, waa, waa}, {"bb", bb, wbb, wbb}} {
					// cosineSums keeps half as many partial sums in the
					// generic code (2 per output); use its own width.
					hc := h
					if k.name == "generic" {
						hc = 2
					}
					if tol := gamma(depth(n, hc)) * c.abs; math.Abs(float64(c.got)-c.want) > tol {
						t.Fatalf("cosineSums.%s n=%d off=%d: got %v want %v (tol %g)", c.name, n, off, c.got, c.want, tol)
					}
				}
			}
		}
	})
}

func TestScale(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	forEachImpl(t, func(t *testing.T, k *kernels) {
		for _, n := range testLengths {
			for _, off := range offsets {
				v := randVec(r, n)
				s := float32(r.NormFloat64())
				a, buf := guarded(v, off)
				k.scale(a, s)
				for i := range v {
					// One IEEE multiply: every implementation must agree exactly.
					if want := v[i] * s; math.Float32bits(a[i]) != math.Float32bits(want) {
						t.Fatalf("scale n=%d off=%d: a[%d]=%v want %v", n, off, i, a[i], want)
					}
				}
				checkGuards(t, buf, guard+off, n)
			}
		}
	})
}

func TestDotBatch(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	dims := []int{1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 383, 384, 385, 767, 768, 769}
	forEachImpl(t, func(t *testing.T, k *kernels) {
		// The four-row kernels keep two vector accumulators per row
		// (doc.go: 32 AVX-512, 16 AVX2); NEON and generic batch with dot.
		h := map[string]int{"avx512": 32, "avx2": 16}[k.name]
		if h == 0 {
			h = width(k.name)
		}
		for _, dim := range dims {
			for rows := 0; rows <= 9; rows++ {
				q0 := intVec(r, dim)
				flat0 := intVec(r, rows*dim)
				q, _ := guarded(q0, 1)
				flat, _ := guarded(flat0, 3)
				out, obuf := guarded(make([]float32, rows), 5)
				dotBatch(k, q, flat, out)
				for i := 0; i < rows; i++ {
					want, _ := oracleDot(q0, flat0[i*dim:(i+1)*dim])
					if float64(out[i]) != want {
						t.Fatalf("dim=%d rows=%d: out[%d]=%v want %v", dim, rows, i, out[i], want)
					}
				}
				checkGuards(t, obuf, guard+5, rows)

				q0, flat0 = randVec(r, dim), randVec(r, rows*dim)
				dotBatch(k, q0, flat0, out)
				for i := 0; i < rows; i++ {
					want, abs := oracleDot(q0, flat0[i*dim:(i+1)*dim])
					if tol := gamma(depth(dim, h)) * abs; math.Abs(float64(out[i])-want) > tol {
						t.Fatalf("dim=%d rows=%d: out[%d]=%v want %v (tol %g)", dim, rows, i, out[i], want, tol)
					}
				}
			}
		}
	})
}

func TestDotBatchErrors(t *testing.T) {
	q := make([]float32, 4)
	flat := make([]float32, 12)
	out := make([]float32, 3)
	for _, c := range []struct {
		q, flat, out []float32
		dim          int
	}{
		{q, flat, out, 0},
		{q, flat, out, 3},
		{q, flat[:10], out, 4},
		{q, flat, out[:2], 4},
	} {
		err := DotBatch(c.q, c.flat, c.dim, c.out)
		if !errors.Is(err, ErrDimension) {
			t.Errorf("DotBatch(len(q)=%d, len(flat)=%d, dim=%d, len(out)=%d) = %v, want ErrDimension",
				len(c.q), len(c.flat), c.dim, len(c.out), err)
		}
	}
	if err := DotBatch(q, flat, 4, make([]float32, 5)); err != nil {
		t.Fatalf("valid call: %v", err)
	}
	if err := DotBatch(q, nil, 4, nil); err != nil {
		t.Fatalf("empty batch: %v", err)
	}
}

func TestPublicAPI(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{0, 1, 5, 100, 768} {
		a, b := randVec(r, n), randVec(r, n)
		want, abs := oracleDot(a, b)
		tol := gamma(depth(n, width(active.name))) * abs
		if got := Dot(a, b); math.Abs(float64(got)-want) > tol {
			t.Errorf("Dot n=%d: %v want %v", n, got, want)
		}
		// Mismatched lengths use the common prefix.
		if n > 0 {
			w2, _ := oracleDot(a[:n-1], b[:n-1])
			if got := Dot(a[:n-1], b); math.Abs(float64(got)-w2) > tol {
				t.Errorf("Dot(short, long) n=%d: %v want %v", n, got, w2)
			}
			if got := Dot(a, b[:n-1]); math.Abs(float64(got)-w2) > tol {
				t.Errorf("Dot(long, short) n=%d: %v want %v", n, got, w2)
			}
			if got, want := SquaredL2(a, b[:n-1]), oracleL2(a[:n-1], b[:n-1]); math.Abs(float64(got)-want) > 1e-4*want+1e-6 {
				t.Errorf("SquaredL2(long, short) n=%d: %v want %v", n, got, want)
			}
		}
		aa, _ := oracleDot(a, a)
		bb, _ := oracleDot(b, b)
		if got, want := Norm(a), math.Sqrt(aa); math.Abs(float64(got)-want) > 1e-5*want {
			t.Errorf("Norm n=%d: %v want %v", n, got, want)
		}
		wantCos := 0.0
		if aa > 0 && bb > 0 {
			wantCos = want / math.Sqrt(aa*bb)
		}
		// |cos error| <= gamma*(sum|ab|)/(|a||b|) + a few roundings; sum|ab| <= |a||b|.
		hc := width(active.name)
		if active.name == "generic" {
			hc = 2
		}
		// doc.go: |Cosine - cos| <= 2*gamma(h) + u.
		if got := Cosine(a, b); math.Abs(float64(got)-wantCos) > 2*gamma(depth(n, hc))+1.0/(1<<24) {
			t.Errorf("Cosine n=%d: %v want %v", n, got, wantCos)
		}
		c := append([]float32(nil), a...)
		norm := Normalize(c)
		if math.Abs(float64(norm)-math.Sqrt(aa)) > 1e-5*math.Sqrt(aa) {
			t.Errorf("Normalize n=%d returned %v want %v", n, norm, math.Sqrt(aa))
		}
		if n > 0 {
			cc, _ := oracleDot(c, c)
			if math.Abs(math.Sqrt(cc)-1) > 1e-5 {
				t.Errorf("Normalize n=%d: result has length %v", n, math.Sqrt(cc))
			}
		}
	}
	zero := make([]float32, 8)
	if Normalize(zero) != 0 || Cosine(zero, zero) != 0 || Norm(zero) != 0 {
		t.Error("zero vector: want 0 from Normalize, Cosine and Norm")
	}
	for _, x := range zero {
		if x != 0 {
			t.Fatal("Normalize changed a zero vector")
		}
	}
	if got := Cosine([]float32{1, 2, 3}, []float32{2, 4, 6}); math.Abs(float64(got)-1) > 1e-6 {
		t.Errorf("Cosine of parallel vectors = %v", got)
	}
	if got := Cosine([]float32{1, 0}, []float32{0, 1}); got != 0 {
		t.Errorf("Cosine of orthogonal vectors = %v", got)
	}
}

// TestNaNPropagates: a NaN inside the slice must reach the result in every
// implementation (the tail paths included).
func TestNaNPropagates(t *testing.T) {
	forEachImpl(t, func(t *testing.T, k *kernels) {
		for _, n := range testLengths {
			for pos := 0; pos < n; pos += 1 + n/7 {
				a := make([]float32, n)
				b := make([]float32, n)
				for i := range a {
					a[i], b[i] = 1, 1
				}
				a[pos] = float32(math.NaN())
				if got := k.dot(a, b); !math.IsNaN(float64(got)) {
					t.Fatalf("dot n=%d NaN at %d: got %v", n, pos, got)
				}
				if got := k.squaredL2(a, b); !math.IsNaN(float64(got)) {
					t.Fatalf("squaredL2 n=%d NaN at %d: got %v", n, pos, got)
				}
			}
		}
	})
}

// TestNormRange: vectors whose float32 sum of squares underflows or
// overflows still get their true length and a unit result.
func TestNormRange(t *testing.T) {
	for _, scale := range []float64{1e-30, 1e-40, 1, 1e20, 1e30, 3e38} {
		a := []float32{float32(3 * scale / 5), float32(4 * scale / 5), 0}
		if scale == 3e38 {
			a = []float32{3e38, 3e38} // length 4.2e38 > MaxFloat32
		}
		want := 0.0
		for _, x := range a {
			want += float64(x) * float64(x)
		}
		want = math.Sqrt(want)
		got := Norm(a)
		if want > math.MaxFloat32 {
			if !math.IsInf(float64(got), 1) {
				t.Errorf("Norm at %g: %v, want +Inf", scale, got)
			}
			continue
		}
		// 2e-45: one float32 subnormal ulp, for the 1e-40 case.
		tol := 1e-6*want + 2e-45
		if math.Abs(float64(got)-want) > tol {
			t.Errorf("Norm at %g: %v want %v", scale, got, want)
		}
		if n := Normalize(a); math.Abs(float64(n)-want) > tol {
			t.Errorf("Normalize at %g returned %v want %v", scale, n, want)
		}
		var l float64
		for _, x := range a {
			l += float64(x) * float64(x)
		}
		if math.Abs(math.Sqrt(l)-1) > 1e-6 {
			t.Errorf("Normalize at %g: result length %v (%v)", scale, math.Sqrt(l), a)
		}
	}
	for _, scale := range []float32{1e-30, 1e-40, 1e20, 3e38} {
		x := []float32{scale, 0}
		y := []float32{scale, scale}
		if got := Cosine(x, y); math.Abs(float64(got)-math.Sqrt2/2) > 1e-6 {
			t.Errorf("Cosine at %g: %v want %v", scale, got, math.Sqrt2/2)
		}
	}
	if got := Cosine([]float32{1, float32(math.NaN())}, []float32{1, 1}); !math.IsNaN(float64(got)) {
		t.Errorf("Cosine with a NaN element: %v", got)
	}
	nan := []float32{1, float32(math.NaN()), 2}
	Normalize(nan)
	for _, x := range nan {
		if !math.IsNaN(float64(x)) {
			t.Fatalf("Normalize with a NaN element: %v", nan)
		}
	}
	inf := []float32{1, float32(math.Inf(-1)), 2}
	if n := Normalize(inf); !math.IsInf(float64(n), 1) || inf[0] != 0 || inf[2] != 0 || !math.IsNaN(float64(inf[1])) {
		t.Fatalf("Normalize with an Inf element: returned %v, vector %v", n, inf)
	}
}

func ExampleDotBatch() {
	q := []float32{1, 0, 1}
	flat := []float32{
		1, 2, 3,
		4, 5, 6,
	}
	out := make([]float32, 2)
	if err := DotBatch(q, flat, 3, out); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out)
	// Output: [4 10]
}
