package testembed

import (
	"context"
	"math"
	"testing"

	"github.com/lazymem/lazymem/vecmath"
)

// unit gives "a" and "b" one axis each and everything else a third.
type unit struct{}

func (unit) Name() string { return "unit" }
func (unit) Dim() int     { return 3 }
func (unit) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, 3)
		switch t {
		case "a":
			v[0] = 1
		case "b":
			v[1] = 1
		default:
			v[2] = 1
		}
		out[i] = v
	}
	return out, nil
}

// The noise is deterministic per text, of norm Sigma, and lowers a perfect
// match's cosine to about 1/(1+Sigma²) while leaving the inner part as is.
func TestNoisy(t *testing.T) {
	n := &Noisy{Inner: unit{}, Sigma: 1}
	if n.Dim() != 3+NoiseDim || n.Name() != "unit+noise-1" {
		t.Fatalf("Dim %d Name %q", n.Dim(), n.Name())
	}
	v, err := n.Embed(context.Background(), []string{"a", "a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	for j := range v[0] {
		if v[0][j] != v[1][j] {
			t.Fatalf("the same text, two vectors: dim %d %g != %g", j, v[0][j], v[1][j])
		}
	}
	if v[0][0] != 1 || v[0][1] != 0 || v[0][2] != 0 {
		t.Fatalf("inner part changed: %v", v[0][:3])
	}
	var norm float64
	for _, x := range v[0][3:] {
		norm += float64(x) * float64(x)
	}
	if math.Abs(math.Sqrt(norm)-1) > 1e-5 {
		t.Fatalf("noise norm %g, want Sigma = 1", math.Sqrt(norm))
	}
	// "a" against "b": only the
	// noise correlates, far below the 1/(1+Sigma²) = 0.5 a match keeps
	// against its inner twin.
	if c := float64(vecmath.Cosine(v[0], v[2])); c > 0.45 {
		t.Fatalf("cos(a, b) = %g: the noise correlates too much", c)
	}
	w, _ := (&Noisy{Inner: unit{}, Sigma: 0}).Embed(context.Background(), []string{"b"})
	if c := float64(vecmath.Cosine(w[0], v[2])); math.Abs(c-0.5*math.Sqrt2) > 1e-5 {
		t.Fatalf("cos(b without noise, b with Sigma 1) = %g, want 1/sqrt(2)", c)
	}
}
