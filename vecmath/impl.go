package vecmath

// kernels is one implementation of the primitive loops. The exported
// functions call through active; tests and benchmarks walk impls to exercise
// every implementation the CPU can run.
type kernels struct {
	name string
	// dot returns sum(a[i]*b[i]) for i < len(a); len(b) >= len(a).
	dot func(a, b []float32) float32
	// squaredL2 returns sum((a[i]-b[i])^2) for i < len(a); len(b) >= len(a).
	squaredL2 func(a, b []float32) float32
	// cosineSums returns sum(a*b), sum(a*a), sum(b*b) for i < len(a).
	cosineSums func(a, b []float32) (ab, aa, bb float32)
	// scale multiplies a by s in place.
	scale func(a []float32, s float32)
	// dotBatch4 sets out[r] = dot(q, flat[r*len(q):]) for r < len(out);
	// len(out) is a multiple of 4 and len(flat) >= len(out)*len(q).
	dotBatch4 func(q, flat, out []float32)
	// dotF16 returns sum(q[i]*float32(h[i])) for i < len(q); len(h) >= len(q).
	dotF16 func(q []float32, h []uint16) float32
	// matMulT, when set, holds register-blocked kernels that set
	// out[i*ldo+j] = dot(a[i*dim:], b[j*dim:]) for i < m, j < n. Without it
	// matMulT scores one row of a at a time with dotBatch.
	matMulT *matMulKernels
}

// matMulKernels are the block shapes of a matMulT implementation: full
// blocks of ar rows of a by br rows of b, and the edge shapes 1 x br,
// ar x 1 and 1 x 1, all with the same per-result summation order. Each
// takes m a multiple of its a rows and n of its b rows.
type matMulKernels struct {
	ar, br                   int
	full, aEdge, bEdge, both func(a, b, out []float32, m, n, dim, ldo int)
}

var genericKernels = kernels{
	name:       "generic",
	dot:        dotGeneric,
	squaredL2:  squaredL2Generic,
	cosineSums: cosineSumsGeneric,
	scale:      scaleGeneric,
	dotBatch4:  dotBatch4Generic,
	dotF16:     dotF16Generic,
}

// impls lists the implementations usable on this CPU, best first; the last
// one is always generic. It is filled by the per-architecture init.
var impls []*kernels

// active is impls[0]: the implementation the exported functions use.
var active *kernels

func init() {
	impls = append(platformKernels(), &genericKernels)
	active = impls[0]
}

// Implementation names the kernel set the exported functions use on this
// machine: "avx512", "avx2", "neon" or "generic".
func Implementation() string { return active.name }
