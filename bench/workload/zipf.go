package workload

import (
	"math"
	"math/rand/v2"
)

// zipfQ is the Mandelbrot offset of the rank law: P(k) ∝ (k+1+zipfQ)^-s.
// With q = 0 the top noun ("time") took a fifth of all noun slots; q = 2.7
// (Mandelbrot's fit to English text) flattens the head to ~7% and leaves
// the tail a power law.
const zipfQ = 2.7

// zipf samples k in [0, n) with P(k) proportional to (k+1+q)^-s, by Walker's
// alias method: one 64-bit draw per sample, against ~2 transcendental calls
// per sample for math/rand/v2's rejection sampler, which was a third of the
// generator's time.
type zipf struct {
	r     *rand.Rand
	n     uint64
	prob  []uint32 // threshold on the low 32 bits
	alias []uint32
}

func newZipf(r *rand.Rand, s float64, n int) *zipf { return newZipfQ(r, s, zipfQ, n) }

func newZipfQ(r *rand.Rand, s, q float64, n int) *zipf {
	w := make([]float64, n)
	var sum float64
	for k := range w {
		w[k] = math.Pow(float64(k+1)+q, -s)
		sum += w[k]
	}
	z := &zipf{r: r, n: uint64(n), prob: make([]uint32, n), alias: make([]uint32, n)}
	// Vose's stable variant: scaled weights, small and large work lists.
	small := make([]int, 0, n)
	large := make([]int, 0, n)
	for k := range w {
		w[k] = w[k] * float64(n) / sum
		if w[k] < 1 {
			small = append(small, k)
		} else {
			large = append(large, k)
		}
	}
	for len(small) > 0 && len(large) > 0 {
		l := small[len(small)-1]
		small = small[:len(small)-1]
		g := large[len(large)-1]
		z.prob[l] = uint32(w[l] * (1 << 32))
		z.alias[l] = uint32(g)
		w[g] = (w[g] + w[l]) - 1
		if w[g] < 1 {
			large = large[:len(large)-1]
			small = append(small, g)
		}
	}
	for _, k := range large {
		z.prob[k], z.alias[k] = 1<<32-1, uint32(k)
	}
	for _, k := range small { // rounding leftovers
		z.prob[k], z.alias[k] = 1<<32-1, uint32(k)
	}
	return z
}

func (z *zipf) next() uint64 {
	u := z.r.Uint64()
	i := (u >> 32) * z.n >> 32
	if uint32(u) < z.prob[i] {
		return i
	}
	return uint64(z.alias[i])
}
