package testembed

import (
	"context"
	"math"
	"strings"
)

// Concepts is a semantic test double: each element is a concept, the
// words (in any language) that mean it; a text's vector counts, per
// concept, the words of it the lowercased text contains, plus a small
// constant in a last dimension so that no vector is zero, normalized to
// unit length. Texts that mention the same concepts in other words, or in
// another language, are then close: what a multilingual model would make
// of them, on a vocabulary the test chooses.
type Concepts [][]string

// Name identifies the double (the embedding cache keys vectors by it).
func (c Concepts) Name() string { return "test-concepts-v1" }

// Dim is one dimension a concept plus the constant one.
func (c Concepts) Dim() int { return len(c) + 1 }

// Embed returns one unit vector a text.
func (c Concepts) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, c.Dim())
		v[len(c)] = 0.1
		lt := strings.ToLower(t)
		for d, words := range c {
			for _, w := range words {
				if strings.Contains(lt, w) {
					v[d]++
				}
			}
		}
		var n float64
		for _, x := range v {
			n += float64(x * x)
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(n))
		}
		out[i] = v
	}
	return out, nil
}
