package vecmath

import (
	"fmt"
	"math"
)

// Dot returns the inner product of a and b. Only the first
// min(len(a), len(b)) elements take part; callers that need equal lengths
// enforced check them once, outside their loops.
func Dot(a, b []float32) float32 {
	if len(b) < len(a) {
		a = a[:len(b)]
	}
	return active.dot(a, b)
}

// SquaredL2 returns the squared Euclidean distance between a and b over
// their first min(len(a), len(b)) elements.
func SquaredL2(a, b []float32) float32 {
	if len(b) < len(a) {
		a = a[:len(b)]
	}
	return active.squaredL2(a, b)
}

// Norm returns the Euclidean length of a. The sum of squares is taken in
// float32 by the kernel and the square root in float64; when the float32 sum
// underflows to zero or overflows to Inf (elements beyond about 1e-23 or
// 1e19 in magnitude) it is recomputed in float64, so Norm is +Inf only when
// the length itself exceeds float32's range (or an element is Inf).
func Norm(a []float32) float32 {
	return float32(norm64(a))
}

// norm64 is the length of a in float64: the fast float32 kernel, with a
// float64 pass for sums that left float32's range. A NaN element gives NaN.
func norm64(a []float32) float64 {
	ss := active.dot(a, a)
	if ss != 0 && !math.IsInf(float64(ss), 1) {
		return math.Sqrt(float64(ss))
	}
	// Squares of float32 values neither overflow nor underflow float64.
	var s float64
	for _, x := range a {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// Normalize scales a in place to unit Euclidean length and returns its
// length before scaling. A zero vector is left unchanged and 0 is returned.
// Vectors too short or too long for float32 arithmetic (see Norm) are
// still normalized correctly. If an element is NaN every element becomes
// NaN; if one is ±Inf (and none NaN) the infinite elements become NaN and
// the finite ones zero, and +Inf is returned.
func Normalize(a []float32) float32 {
	n := norm64(a)
	if n == 0 {
		return 0
	}
	inv := 1 / n
	if f := float32(inv); f != 0 && !math.IsInf(float64(f), 0) {
		active.scale(a, f)
	} else {
		// 1/n itself leaves float32's range (n < 2^-128 or so, or n
		// beyond 2^126): scale in float64.
		for i, x := range a {
			a[i] = float32(float64(x) * inv)
		}
	}
	return float32(n)
}

// Cosine returns the cosine similarity of a and b over their first
// min(len(a), len(b)) elements, in one pass over both. It is 0 when either
// vector is zero and NaN when an element is NaN or infinite. The result can
// exceed 1 in magnitude by a few ulps because of rounding; callers that need
// [-1, 1] clamp. Vectors whose float32 sums would underflow or overflow are
// handled by a float64 pass.
func Cosine(a, b []float32) float32 {
	if len(b) < len(a) {
		a = a[:len(b)]
	}
	ab, aa, bb := active.cosineSums(a, b)
	if inRange(aa) && inRange(bb) && !math.IsInf(float64(ab), 0) {
		return float32(float64(ab) / math.Sqrt(float64(aa)*float64(bb)))
	}
	// Zero vectors, NaN/Inf elements, or sums outside float32's range:
	// float64 holds every product of two float32 values.
	var ab64, aa64, bb64 float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		ab64 += x * y
		aa64 += x * x
		bb64 += y * y
	}
	if aa64 == 0 || bb64 == 0 {
		return 0
	}
	return float32(ab64 / math.Sqrt(aa64) / math.Sqrt(bb64))
}

// inRange reports whether a float32 sum of squares is usable: non-zero (no
// total underflow) and finite. NaN fails too.
func inRange(s float32) bool { return s > 0 && s <= math.MaxFloat32 }

// DotBatch scores one query against many vectors stored row after row in
// flat: out[r] = Dot(q, flat[r*dim:(r+1)*dim]) for every row, up to the
// last bits (the four-row kernel sums in its own order; doc.go bounds
// both). dim must equal len(q) and divide len(flat), and out must hold at
// least len(flat)/dim values; otherwise an error wrapping ErrDimension is
// returned and out is not touched. Rows are scored four at a time so that
// each piece of q is loaded once per four rows.
func DotBatch(q, flat []float32, dim int, out []float32) error {
	if err := checkBatch(q, flat, dim, out); err != nil {
		return err
	}
	dotBatch(active, q, flat, out[:len(flat)/dim])
	return nil
}

func checkBatch(q, flat []float32, dim int, out []float32) error {
	if dim <= 0 || dim != len(q) {
		return fmt.Errorf("%w: dim %d, len(q) %d", ErrDimension, dim, len(q))
	}
	if len(flat)%dim != 0 {
		return fmt.Errorf("%w: len(flat) %d is not a multiple of dim %d", ErrDimension, len(flat), dim)
	}
	if rows := len(flat) / dim; len(out) < rows {
		return fmt.Errorf("%w: out holds %d scores, need %d", ErrDimension, len(out), rows)
	}
	return nil
}

// dotBatch runs k's four-row kernel over the largest multiple of four rows
// and its single-row kernel over the rest. len(out)*len(q) == len(flat).
func dotBatch(k *kernels, q, flat, out []float32) {
	dim := len(q)
	n4 := len(out) &^ 3
	if n4 > 0 {
		k.dotBatch4(q, flat[:n4*dim], out[:n4])
	}
	for r := n4; r < len(out); r++ {
		out[r] = k.dot(q, flat[r*dim:(r+1)*dim])
	}
}
