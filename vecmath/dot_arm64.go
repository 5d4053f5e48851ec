//go:build !purego

package vecmath

// NEON (Advanced SIMD) is mandatory on arm64, so there is no feature check:
// the kernels in dot_arm64.s always run. Each stub's doc comment is the loop
// it computes.

// dotNEON computes
//
//	for i := range a { s += a[i] * b[i] }
//
// with 4 accumulators of 4 lanes and a scalar tail.
//
//go:noescape
func dotNEON(a, b []float32) float32

// squaredL2NEON computes
//
//	for i := range a { d := a[i] - b[i]; s += d * d }
//
//go:noescape
func squaredL2NEON(a, b []float32) float32

// cosineSumsNEON computes, in one pass,
//
//	for i := range a { ab += a[i]*b[i]; aa += a[i]*a[i]; bb += b[i]*b[i] }
//
//go:noescape
func cosineSumsNEON(a, b []float32) (ab, aa, bb float32)

// dotBatch4NEON scores rows one at a time with dotNEON: the four-row
// q-sharing kernel exists only for amd64 so far.
func dotBatch4NEON(q, flat, out []float32) {
	dim := len(q)
	for r := range out {
		out[r] = dotNEON(q, flat[r*dim:(r+1)*dim])
	}
}

var neonKernels = kernels{
	name:       "neon",
	dot:        dotNEON,
	squaredL2:  squaredL2NEON,
	cosineSums: cosineSumsNEON,
	// Normalize's scaling pass is not worth assembly: it runs once per
	// vector, not once per comparison.
	scale:     scaleGeneric,
	dotBatch4: dotBatch4NEON,
	// No binary16 kernel for NEON yet: the generic loop widens in Go.
	dotF16: dotF16Generic,
}

func platformKernels() []*kernels { return []*kernels{&neonKernels} }
