package vecmath

import (
	"fmt"
	"math"
)

// Float16 storage: embeddings kept as IEEE 754 binary16 take half the bytes
// of float32 (a 512-d vector: 1 KiB instead of 2 KiB), so a cache holds twice
// as many and a batch streams half the memory. Queries stay float32;
// DotFloat16 widens the stored halves on the fly (VCVTPH2PS on amd64).
// docs/benchmarks/vecmath.md has the measured speed and the effect on
// retrieval (top-10 agreement with float32 on the LoCoMo embeddings).

// AppendFloat16 appends v converted to binary16 (round to nearest, ties to
// even; magnitudes from 65520 up become Inf, those up to 2^-25 signed zero,
// NaN stays NaN) to dst and returns the extended slice.
func AppendFloat16(dst []uint16, v []float32) []uint16 {
	dst = grow16(dst, len(v))
	for _, x := range v {
		dst = append(dst, float32ToFloat16(x))
	}
	return dst
}

// AppendFromFloat16 appends h widened to float32 (exact) to dst.
func AppendFromFloat16(dst []float32, h []uint16) []float32 {
	if n := len(dst) + len(h); n > cap(dst) {
		d := make([]float32, len(dst), n)
		copy(d, dst)
		dst = d
	}
	for _, x := range h {
		dst = append(dst, float16ToFloat32(x))
	}
	return dst
}

func grow16(dst []uint16, n int) []uint16 {
	if len(dst)+n > cap(dst) {
		d := make([]uint16, len(dst), len(dst)+n)
		copy(d, dst)
		dst = d
	}
	return dst
}

// DotFloat16 returns the inner product of the float32 query q and the
// binary16 vector h over their first min(len(q), len(h)) elements. Every
// half converts exactly to float32, so the precision bound of Dot (doc.go)
// holds with h's widened values.
func DotFloat16(q []float32, h []uint16) float32 {
	if len(h) < len(q) {
		q = q[:len(h)]
	}
	return active.dotF16(q, h)
}

// DotBatchFloat16 is DotBatch over binary16 rows: out[r] =
// DotFloat16(q, flat[r*dim:(r+1)*dim]). Shapes are checked as in DotBatch.
func DotBatchFloat16(q []float32, flat []uint16, dim int, out []float32) error {
	if dim <= 0 || dim != len(q) {
		return fmt.Errorf("%w: dim %d, len(q) %d", ErrDimension, dim, len(q))
	}
	if len(flat)%dim != 0 {
		return fmt.Errorf("%w: len(flat) %d is not a multiple of dim %d", ErrDimension, len(flat), dim)
	}
	rows := len(flat) / dim
	if len(out) < rows {
		return fmt.Errorf("%w: out holds %d scores, need %d", ErrDimension, len(out), rows)
	}
	f := active.dotF16
	for r := 0; r < rows; r++ {
		out[r] = f(q, flat[r*dim:(r+1)*dim])
	}
	return nil
}

func dotF16Generic(q []float32, h []uint16) float32 {
	h = h[:len(q)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(q); i += 4 {
		s0 += q[i] * float16ToFloat32(h[i])
		s1 += q[i+1] * float16ToFloat32(h[i+1])
		s2 += q[i+2] * float16ToFloat32(h[i+2])
		s3 += q[i+3] * float16ToFloat32(h[i+3])
	}
	for ; i < len(q); i++ {
		s0 += q[i] * float16ToFloat32(h[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// float32ToFloat16 rounds to nearest, ties to even.
func float32ToFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	man := b & 0x7fffff
	switch {
	case exp == 0xff: // Inf or NaN; keep NaN quiet and non-zero.
		if man != 0 {
			return sign | 0x7e00 | uint16(man>>13)
		}
		return sign | 0x7c00
	case exp > 127+15: // overflow
		return sign | 0x7c00
	case exp >= 127-14: // normal half
		h := uint32(exp-127+15)<<10 | man>>13
		// Round to nearest even on the 13 dropped bits; a carry into the
		// exponent is correct (it may reach Inf).
		rest := man & 0x1fff
		if rest > 0x1000 || (rest == 0x1000 && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	case exp >= 127-25: // subnormal half (or rounds up into the smallest one)
		m := man | 0x800000      // implicit bit
		shift := uint(126 - exp) // value = m * 2^(exp-150) = h * 2^-24
		h := m >> shift
		rest := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rest > half || (rest == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	default: // underflow to signed zero
		return sign
	}
}

// float16ToFloat32 is exact. It rebiases the exponent in place and fixes
// up the two rare classes with a branch each (F. Giesen's half_to_float):
// Inf/NaN get the float32 all-ones exponent, and zero/subnormal halves are
// normalized by one float subtraction, which is exact.
func float16ToFloat32(h uint16) float32 {
	const shiftedExp = 0x7c00 << 13 // half exponent field, in float32 position
	o := uint32(h&0x7fff) << 13
	exp := o & shiftedExp
	o += (127 - 15) << 23
	switch exp {
	case shiftedExp: // Inf or NaN
		o += (128 - 16) << 23
	case 0: // zero or subnormal
		o += 1 << 23
		o = math.Float32bits(math.Float32frombits(o) - math.Float32frombits(113<<23))
	}
	return math.Float32frombits(o | uint32(h&0x8000)<<16)
}
