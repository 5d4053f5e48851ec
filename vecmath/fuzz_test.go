package vecmath

import (
	"encoding/binary"
	"math"
	"testing"
)

// decodeFuzzVec turns 3 bytes into one float32 of varied magnitude and
// sign: a 16-bit mantissa scaled by 2^(e-8), e in [0, 16). Values stay far
// from overflow (|x| < 2^24), so every implementation must land within the
// doc.go bound of the float64 oracle even with heavy cancellation.
func decodeFuzzVec(data []byte) (a, b []float32) {
	n := len(data) / 6
	a = make([]float32, n)
	b = make([]float32, n)
	for i := 0; i < n; i++ {
		p := data[6*i:]
		a[i] = float32(int16(binary.LittleEndian.Uint16(p))) * float32(math.Ldexp(1, int(p[2]%16)-8))
		b[i] = float32(int16(binary.LittleEndian.Uint16(p[3:]))) * float32(math.Ldexp(1, int(p[5]%16)-8))
	}
	return a, b
}

// FuzzKernels is the differential fuzz target: every implementation
// against the float64 oracle, at a fuzzer-chosen start offset.
func FuzzKernels(f *testing.F) {
	f.Add(make([]byte, 6*70), uint8(0))
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}, uint8(3))
	seed := make([]byte, 6*1537)
	for i := range seed {
		seed[i] = byte(i * 7)
	}
	f.Add(seed, uint8(5))
	f.Fuzz(func(t *testing.T, data []byte, off uint8) {
		a0, b0 := decodeFuzzVec(data)
		n := len(a0)
		a, abuf := guarded(a0, int(off%16))
		b, bbuf := guarded(b0, int(off/16))
		want, abs := oracleDot(a0, b0)
		wantL2 := oracleL2(a0, b0)
		waa, _ := oracleDot(a0, a0)
		wbb, _ := oracleDot(b0, b0)
		for _, k := range impls {
			h := width(k.name)
			if got := k.dot(a, b); math.Abs(float64(got)-want) > gamma(depth(n, h))*abs {
				t.Fatalf("%s dot n=%d: %v want %v", k.name, n, got, want)
			}
			if got := k.squaredL2(a, b); math.Abs(float64(got)-wantL2) > gamma(depth(n, h)+2)*wantL2 {
				t.Fatalf("%s squaredL2 n=%d: %v want %v", k.name, n, got, wantL2)
			}
			hc := h
			if k.name == "generic" {
				hc = 2
			}
			ab, aa, bb := k.cosineSums(a, b)
			g := gamma(depth(n, hc))
			if math.Abs(float64(ab)-want) > g*abs || math.Abs(float64(aa)-waa) > g*waa || math.Abs(float64(bb)-wbb) > g*wbb {
				t.Fatalf("%s cosineSums n=%d: %v %v %v want %v %v %v", k.name, n, ab, aa, bb, want, waa, wbb)
			}
			if n > 0 {
				dim := 1 + int(off)%n
				rows := n / dim
				q, flat := b[:dim], a[:rows*dim]
				out := make([]float32, rows)
				dotBatch(k, q, flat, out)
				for r := range out {
					w, ab := oracleDot(q, flat[r*dim:(r+1)*dim])
					if math.Abs(float64(out[r])-w) > gamma(depth(dim, 4))*ab {
						t.Fatalf("%s dotBatch dim=%d row %d: %v want %v", k.name, dim, r, out[r], w)
					}
				}
			}
		}
		checkGuards(t, abuf, guard+int(off%16), n)
		checkGuards(t, bbuf, guard+int(off/16), n)
	})
}
