package testembed

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"

	"github.com/lazymem/lazymem/engine/embed"
)

// NoiseDim is the number of dimensions Noisy adds to its inner embedder's.
const NoiseDim = 64

// Noisy embeds with Inner and appends Sigma times a random unit vector in
// NoiseDim extra dimensions, seeded by the text (so the same text always
// gets the same vector). With a perfect Inner (cosine 1 between a question
// and its evidence, 0 with everything else) unrelated texts get random
// cosines of spread about Sigma²/(1+Sigma²)/sqrt(NoiseDim) and the
// evidence's falls below 1: the larger Sigma, the weaker the embedder. The
// noise is independent of the words, unlike a real model's errors: an
// indication of quality, not a model.
type Noisy struct {
	Inner embed.Embedder
	Sigma float64
}

// Name names the inner embedder and the noise.
func (n *Noisy) Name() string { return fmt.Sprintf("%s+noise-%g", n.Inner.Name(), n.Sigma) }

// Dim is the inner embedder's Dim plus NoiseDim.
func (n *Noisy) Dim() int { return n.Inner.Dim() + NoiseDim }

// Embed returns the inner vectors with the noise appended.
func (n *Noisy) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	inner, err := n.Inner.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	g := make([]float64, NoiseDim)
	for i, t := range texts {
		h := fnv.New64a()
		h.Write([]byte(t))
		rng := rand.New(rand.NewPCG(h.Sum64(), 1))
		var norm float64
		for j := range g {
			g[j] = rng.NormFloat64()
			norm += g[j] * g[j]
		}
		norm = math.Sqrt(norm)
		v := append(make([]float32, 0, n.Dim()), inner[i]...)
		for _, x := range g {
			v = append(v, float32(n.Sigma*x/norm))
		}
		out[i] = v
	}
	return out, nil
}
