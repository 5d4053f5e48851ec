package zhmem_test

import (
	"context"
	"flag"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/lazymem/lazymem/bench/zhmem"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/engine/embed"
	"github.com/lazymem/lazymem/engine/embed/gloss"
	"github.com/lazymem/lazymem/engine/embed/use"
	"github.com/lazymem/lazymem/internal/testenv"
)

// openGloss loads CC-CEDICT and USE-lite from the repository's .cache (or
// $LAZYMEM_CEDICT_DIR, $LAZYMEM_USE_DIR), or ends the test by
// testenv.Missing.
func openGloss(t *testing.T) (*gloss.Dict, *use.USE) {
	t.Helper()
	cdir := os.Getenv("LAZYMEM_CEDICT_DIR")
	if cdir == "" {
		cdir = filepath.Join("..", "..", gloss.DefaultDir)
	}
	d, err := gloss.LoadDict(cdir)
	if err != nil {
		testenv.Missing(t, "CC-CEDICT absent in %s (set LAZYMEM_CEDICT_DIR or run make cedict): %v", cdir, err)
	}
	udir := os.Getenv("LAZYMEM_USE_DIR")
	if udir == "" {
		udir = filepath.Join("..", "..", use.DefaultDir)
	}
	u, err := use.New(udir, use.Options{})
	if err != nil {
		testenv.Missing(t, "USE-lite model absent in %s (set LAZYMEM_USE_DIR or run make use-model): %v", udir, err)
	}
	return d, u
}

// memo caches an embedder's vectors by text across the runs of one test
// (the runs embed the same texts again and again). Its name is the
// inner's, so the vectors are the inner's, and so is the fusion it
// recommends.
type memo struct {
	embed.Embedder
	mu sync.Mutex
	m  map[string][]float32
}

// RecommendedFusion passes the inner embedder's on (none: the zero
// Fusion, no recommendation).
func (c *memo) RecommendedFusion() embed.Fusion {
	if a, ok := c.Embedder.(embed.FusionAdvisor); ok {
		return a.RecommendedFusion()
	}
	return embed.Fusion{}
}

func (c *memo) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var miss []string
	var at []int
	c.mu.Lock()
	for i, t := range texts {
		if v, ok := c.m[t]; ok {
			out[i] = v
		} else {
			miss, at = append(miss, t), append(at, i)
		}
	}
	c.mu.Unlock()
	if len(miss) == 0 {
		return out, nil
	}
	vs, err := c.Embedder.Embed(ctx, miss)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	for j, v := range vs {
		c.m[miss[j]] = v
		out[at[j]] = v
	}
	c.mu.Unlock()
	return out, nil
}

var glossGrid = flag.Bool("gloss.grid", false, "run TestGlossGrid and TestGlossConcat (logged measurements, about a minute each)")

// TestGlossSet measures the gloss embedder on the set beside the hash
// embedder, in one run, at each embedder's recommended fusion: lazy gloss
// must reach the floors measured when it was added (R@5 0.80, R@10 0.86;
// it gave .428/.803/.869 where the hash embedder gives .414/.772/.834) and
// not fall below the hash embedder at R@5 or R@10, and dense gloss, where
// USE-lite alone finds almost nothing (R@10 .021), must reach R@10 0.70
// (.717 measured).
func TestGlossSet(t *testing.T) {
	if testing.Short() {
		t.Skip("embeds every record with USE-lite")
	}
	d, u := openGloss(t)
	s, err := zhmem.Load("testdata")
	if err != nil {
		t.Fatal(err)
	}
	g, err := gloss.New(d, u, gloss.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	e := &memo{Embedder: g, m: map[string][]float32{}}
	hash, err := zhmem.Evaluate(ctx, s, zhmem.Config{Mode: engine.ModeLazy})
	if err != nil {
		t.Fatal(err)
	}
	lazy, err := zhmem.Evaluate(ctx, s, zhmem.Config{Mode: engine.ModeLazy, Embedder: e})
	if err != nil {
		t.Fatal(err)
	}
	dense, err := zhmem.Evaluate(ctx, s, zhmem.Config{Mode: engine.ModeDense, Embedder: e})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*zhmem.Report{hash, lazy, dense} {
		t.Logf("%s %s: R@1 %.3f R@5 %.3f R@10 %.3f", r.Mode, r.Embedder, r.Recall[1], r.Recall[5], r.Recall[10])
	}
	if lazy.Recall[5] < 0.80 || lazy.Recall[10] < 0.86 {
		t.Errorf("lazy gloss R@5 %.3f R@10 %.3f, floors 0.80 and 0.86", lazy.Recall[5], lazy.Recall[10])
	}
	if lazy.Recall[5] < hash.Recall[5] || lazy.Recall[10] < hash.Recall[10] {
		t.Errorf("lazy gloss R@5 %.3f R@10 %.3f below lazy hash's %.3f and %.3f", lazy.Recall[5], lazy.Recall[10], hash.Recall[5], hash.Recall[10])
	}
	if dense.Recall[10] < 0.70 {
		t.Errorf("dense gloss R@10 %.3f, floor 0.70", dense.Recall[10])
	}
}

// TestGlossGrid logs the gloss embedder's recall on the set: dense only,
// and lazy at dense weights 0.2-0.8 and 50 or 200 candidates, for 1-3
// senses per word (docs/benchmarks/zh-embedders.md). Logged, not
// asserted: TestGlossSet asserts the chosen settings' floor.
//
//	go test -run TestGlossGrid -v ./bench/zhmem/ -gloss.grid
func TestGlossGrid(t *testing.T) {
	if !*glossGrid {
		t.Skip("a measurement: run with -gloss.grid")
	}
	d, u := openGloss(t)
	s, err := zhmem.Load("testdata")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, senses := range []int{1, 2, 3} {
		g, err := gloss.New(d, u, gloss.Options{Senses: senses})
		if err != nil {
			t.Fatal(err)
		}
		e := &memo{Embedder: g, m: map[string][]float32{}}
		dense, err := zhmem.Evaluate(ctx, s, zhmem.Config{Mode: engine.ModeDense, Embedder: e})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("senses %d: dense R@1 %.3f R@5 %.3f R@10 %.3f", senses, dense.Recall[1], dense.Recall[5], dense.Recall[10])
		for _, c := range []int{50, 200} {
			for _, w := range []float64{0.2, 0.35, 0.5, 0.65, 0.8} {
				rep, err := zhmem.Evaluate(ctx, s, zhmem.Config{Mode: engine.ModeLazy, Embedder: e, DenseWeight: w, Candidates: c})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("  lazy, candidates %d, dense weight %.2f: R@1 %.3f R@5 %.3f R@10 %.3f", c, w, rep.Recall[1], rep.Recall[5], rep.Recall[10])
			}
		}
	}
}

// concat joins two embedders' unit vectors, scaled by sqrt(a) and
// sqrt(1-a): the cosine of two concatenations is a times the first's
// cosine plus 1-a times the second's.
type concat struct {
	a, b embed.Embedder
	wa   float64
}

func (c *concat) Name() string { return "concat" }
func (c *concat) Dim() int     { return c.a.Dim() + c.b.Dim() }
func (c *concat) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	va, err := c.a.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	vb, err := c.b.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	sa, sb := float32(math.Sqrt(c.wa)), float32(math.Sqrt(1-c.wa))
	out := make([][]float32, len(texts))
	for i := range texts {
		v := make([]float32, 0, c.Dim())
		for _, x := range va[i] {
			v = append(v, sa*x)
		}
		for _, x := range vb[i] {
			v = append(v, sb*x)
		}
		out[i] = v
	}
	return out, nil
}

// TestGlossConcat logs the set with the hash and gloss embedders' vectors
// concatenated (a share of the cosine each): whether the two dense views
// add up. Logged, not asserted.
//
//	go test -run TestGlossConcat -v ./bench/zhmem/ -gloss.grid
func TestGlossConcat(t *testing.T) {
	if !*glossGrid {
		t.Skip("a measurement: run with -gloss.grid")
	}
	d, u := openGloss(t)
	s, err := zhmem.Load("testdata")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	g, err := gloss.New(d, u, gloss.Options{Senses: 2})
	if err != nil {
		t.Fatal(err)
	}
	ge := &memo{Embedder: g, m: map[string][]float32{}}
	he, err := embed.NewHash(embed.HashOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := &memo{Embedder: he, m: map[string][]float32{}}
	for _, wa := range []float64{0.3, 0.5, 0.7} {
		e := &concat{a: h, b: ge, wa: wa}
		dense, err := zhmem.Evaluate(ctx, s, zhmem.Config{Mode: engine.ModeDense, Embedder: e})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("hash share %.1f: dense R@1 %.3f R@5 %.3f R@10 %.3f", wa, dense.Recall[1], dense.Recall[5], dense.Recall[10])
		for _, c := range []int{50, 200} {
			for _, w := range []float64{0.2, 0.35, 0.5, 0.65} {
				rep, err := zhmem.Evaluate(ctx, s, zhmem.Config{Mode: engine.ModeLazy, Embedder: e, DenseWeight: w, Candidates: c})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("  lazy, candidates %d, dense weight %.2f: R@1 %.3f R@5 %.3f R@10 %.3f", c, w, rep.Recall[1], rep.Recall[5], rep.Recall[10])
			}
		}
	}
}
