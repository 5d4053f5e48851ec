package vecmath

// The generic kernels are the pure-Go reference: always compiled, used on
// platforms without assembly and under the purego tag, and the baseline the
// assembly is tested against. They keep four accumulators (lane i%4), which
// lets the CPU overlap four independent add chains; the summation order is
// therefore not the sequential one either (see doc.go for the bound).

func dotGeneric(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func squaredL2Generic(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		d0 := a[i] - b[i]
		d1 := a[i+1] - b[i+1]
		d2 := a[i+2] - b[i+2]
		d3 := a[i+3] - b[i+3]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < len(a); i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return (s0 + s1) + (s2 + s3)
}

func cosineSumsGeneric(a, b []float32) (ab, aa, bb float32) {
	b = b[:len(a)]
	var ab0, ab1, aa0, aa1, bb0, bb1 float32
	i := 0
	for ; i+2 <= len(a); i += 2 {
		x0, y0 := a[i], b[i]
		x1, y1 := a[i+1], b[i+1]
		ab0 += x0 * y0
		aa0 += x0 * x0
		bb0 += y0 * y0
		ab1 += x1 * y1
		aa1 += x1 * x1
		bb1 += y1 * y1
	}
	for ; i < len(a); i++ {
		x, y := a[i], b[i]
		ab0 += x * y
		aa0 += x * x
		bb0 += y * y
	}
	return ab0 + ab1, aa0 + aa1, bb0 + bb1
}

func scaleGeneric(a []float32, s float32) {
	for i := range a {
		a[i] *= s
	}
}

func dotBatch4Generic(q, flat, out []float32) {
	dim := len(q)
	for r := range out {
		out[r] = dotGeneric(q, flat[r*dim:(r+1)*dim])
	}
}
