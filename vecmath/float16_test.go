package vecmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// f16Value is the exact value of a finite half, from its fields.
func f16Value(h uint16) float64 {
	e := int(h>>10) & 0x1f
	m := float64(h & 0x3ff)
	var v float64
	if e == 0 {
		v = math.Ldexp(m, -24)
	} else {
		v = math.Ldexp(1024+m, e-25)
	}
	if h&0x8000 != 0 {
		v = -v
	}
	return v
}

func TestFloat16RoundTripAllHalves(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		f := float16ToFloat32(h)
		if h&0x7c00 == 0x7c00 && h&0x3ff != 0 { // NaN
			if !math.IsNaN(float64(f)) {
				t.Fatalf("%#04x: want NaN, got %v", h, f)
			}
			if !math.IsNaN(float64(float16ToFloat32(float32ToFloat16(f)))) {
				t.Fatalf("%#04x: NaN did not survive a round trip", h)
			}
			continue
		}
		if h&0x7c00 != 0x7c00 && float64(f) != f16Value(h) {
			t.Fatalf("%#04x: widened to %v, want %v", h, f, f16Value(h))
		}
		if back := float32ToFloat16(f); back != h {
			t.Fatalf("%#04x -> %v -> %#04x", h, f, back)
		}
	}
}

// TestFloat16RoundsToNearestEven checks the narrowing against the exact
// neighbours of each input, including every tie between consecutive halves.
func TestFloat16RoundsToNearestEven(t *testing.T) {
	check := func(x float32) {
		h := float32ToFloat16(x)
		got := float64(float16ToFloat32(h))
		xv := float64(x)
		if math.Abs(xv) >= 65520 { // 65504 + half an ulp rounds to Inf
			if !math.IsInf(got, int(math.Copysign(1, xv))) {
				t.Fatalf("%v: want Inf, got %v", x, got)
			}
			return
		}
		d := math.Abs(got - xv)
		for _, nb := range []uint16{h - 1, h + 1} {
			if nb&0x7c00 == 0x7c00 || (nb^h)&0x8000 != 0 {
				continue
			}
			dn := math.Abs(f16Value(nb) - xv)
			if dn < d || (dn == d && h&1 == 1) {
				t.Fatalf("%v (%#08x) -> %#04x (%v); neighbour %#04x (%v) is nearer or the even tie", x, math.Float32bits(x), h, got, nb, f16Value(nb))
			}
		}
	}
	for i := 0; i < 0x7c00; i++ {
		a, b := f16Value(uint16(i)), f16Value(uint16(i+1))
		if i+1 < 0x7c00 {
			mid := float32((a + b) / 2) // exact in float32
			check(mid)
			check(-mid)
			check(math.Nextafter32(mid, 0))
			check(math.Nextafter32(mid, float32(math.Inf(1))))
		}
	}
	r := rand.New(rand.NewPCG(31, 32))
	for i := 0; i < 200000; i++ {
		check(math.Float32frombits(r.Uint32() & 0x7fffffff >> (r.UintN(8))))
	}
	for _, x := range []float32{0, float32(math.Copysign(0, -1)), 1e-10, 65504, 65519, 65520, 1e6, float32(math.Inf(1))} {
		check(x)
	}
}

func TestDotFloat16(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	forEachImpl(t, func(t *testing.T, k *kernels) {
		for _, n := range testLengths {
			for _, off := range offsets {
				q0 := randVec(r, n)
				h0 := AppendFloat16(nil, randVec(r, n))
				wide := AppendFromFloat16(nil, h0)
				q, qbuf := guarded(q0, off)
				// Guard the halves too: poison halves are NaN.
				hbuf := make([]uint16, guard+off+n+guard)
				for i := range hbuf {
					hbuf[i] = 0x7e01
				}
				copy(hbuf[guard+off:], h0)
				h := hbuf[guard+off : guard+off+n : guard+off+n]
				want, abs := oracleDot(q0, wide)
				got := k.dotF16(q, h)
				if tol := gamma(depth(n, width(k.name))) * abs; math.Abs(float64(got)-want) > tol {
					t.Fatalf("n=%d off=%d: got %v want %v (tol %g)", n, off, got, want, tol)
				}
				checkGuards(t, qbuf, guard+off, n)
			}
		}
	})
}
