package eval

import (
	"errors"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	a := &RunReport{Mode: "lazy", PerQuestion: map[int][]float64{10: {1, 1, 0.5, 0, 1, 1}}}
	b := &RunReport{Mode: "sparse", PerQuestion: map[int][]float64{10: {1, 0, 0.5, 0.5, 1, 0}}}
	c, err := Compare(a, b, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	// differences 0, 1, 0, -0.5, 0, 1: mean 1.5/6
	if !near(c.Diff, 0.25) || c.Better != 2 || c.Worse != 1 {
		t.Fatalf("%+v", c)
	}
	if !(c.Lo <= c.Diff && c.Diff <= c.Hi) || c.Lo < -0.5 || c.Hi > 1 || c.Lo == c.Hi {
		t.Fatalf("interval %+v", c)
	}
	if again, _ := Compare(a, b, 10, 1); again != c {
		t.Fatalf("not reproducible: %+v then %+v", c, again)
	}
	same, _ := Compare(a, a, 10, 1)
	if same.Diff != 0 || same.Lo != 0 || same.Hi != 0 || same.Better+same.Worse != 0 {
		t.Fatalf("a against itself: %+v", same)
	}
	b.PerQuestion[10] = b.PerQuestion[10][:5]
	if _, err := Compare(a, b, 10, 1); !errors.Is(err, ErrConfig) {
		t.Fatalf("different question counts: %v", err)
	}
	if _, err := Compare(a, a, 5, 1); !errors.Is(err, ErrConfig) {
		t.Fatalf("k not measured: %v", err)
	}
}

// TestTableComparesLazy: the table of a report with sparse, dense and lazy
// runs ends with lazy against the better of the two at each k.
func TestTableComparesLazy(t *testing.T) {
	rep, err := Run(t.Context(), Config{DataDir: tiny, Ks: []int{1, 5}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	_, cmp, ok := strings.Cut(out, "lazy against the better of sparse and dense")
	if !ok || strings.Count(cmp, "\n| hash | 1 | ") != 1 || strings.Count(cmp, "\n| hash | 5 | ") != 1 {
		t.Fatalf("table:\n%s", out)
	}
}
