package zhmem_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/lazymem/lazymem/bench/zhmem"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/internal/testembed"
)

// oracle is a perfect dense embedder for one set: a record's vector is the
// unit vector of its own axis, a question's is the normalized sum of its
// evidence records' axes, and any other text (a query the engine rewrote
// past recognition) gets an axis of its own that no record shares. Cosine
// similarity is then 1 between a single-evidence question and its evidence
// and 0 with every other record: what a semantic embedder that understood
// every paraphrase would give. It measures the ceiling of the pipeline
// around the embedder (lazy mode's lexical narrowing, fusion), not a model.
type oracle struct {
	recs  map[string]int   // record text -> axis
	qs    map[string][]int // question text -> evidence axes
	texts []string         // record texts, by axis
	dim   int

	mu     sync.Mutex
	misses map[string]bool // texts matched to no record or question
}

func newOracle(s *zhmem.Set) *oracle {
	o := &oracle{recs: map[string]int{}, qs: map[string][]int{}, misses: map[string]bool{}}
	byKey := map[string]int{}
	for i, r := range s.Records {
		o.recs[r.Text] = i
		o.texts = append(o.texts, r.Text)
		byKey[r.Key()] = i
	}
	for _, q := range s.Questions {
		for _, k := range q.Evidence {
			o.qs[q.Text] = append(o.qs[q.Text], byKey[k])
		}
	}
	o.dim = len(s.Records) + 1 // the last axis is nobody's
	return o
}

func (o *oracle) Name() string { return "oracle" }
func (o *oracle) Dim() int     { return o.dim }

func (o *oracle) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, o.dim)
		axes := o.axes(t)
		if len(axes) == 0 {
			o.mu.Lock()
			o.misses[t] = true
			o.mu.Unlock()
			v[o.dim-1] = 1
		}
		for _, a := range axes {
			v[a] = 1 / float32(len(axes))
		}
		out[i] = v
	}
	return out, nil
}

// axes finds the record or question a text is: exactly, or as the record
// or question the engine trimmed it from (the role prefixed to a record,
// pleasantries stripped from it, words removed from a query).
func (o *oracle) axes(t string) []int {
	if a, ok := o.recs[t]; ok {
		return []int{a}
	}
	if a, ok := o.qs[t]; ok {
		return a
	}
	// The engine embeds a record as "role: text".
	for _, role := range []string{"user: ", "assistant: "} {
		if r, ok := strings.CutPrefix(t, role); ok {
			t = r
			break
		}
	}
	if a, ok := o.recs[t]; ok {
		return []int{a}
	}
	t = strings.TrimSpace(t)
	if t == "" {
		return nil
	}
	for q, a := range o.qs {
		if strings.Contains(q, t) || strings.Contains(t, q) {
			return a
		}
	}
	for a, r := range o.texts {
		if strings.Contains(r, t) {
			return []int{a}
		}
	}
	return nil
}

// TestOracleCeiling measures the set with a perfect dense embedder
// (oracle): dense mode must then find every single-evidence question's
// evidence at rank 1, which checks that Evaluate passes the embedder's
// scores through. Lazy mode's figures, at the engine's defaults and with a
// larger dense weight and more candidates, are the ceiling a real semantic
// embedder could reach through the engine's lexical narrowing and fusion
// (docs/benchmarks/zh-embedders.md): logged, not asserted.
func TestOracleCeiling(t *testing.T) {
	if testing.Short() {
		t.Skip("embeds every record")
	}
	s, err := zhmem.Load("testdata")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	runs := []zhmem.Config{
		{Mode: engine.ModeDense},
		{Mode: engine.ModeLazy},
		{Mode: engine.ModeLazy, DenseWeight: 0.35},
		{Mode: engine.ModeLazy, DenseWeight: 0.5},
		{Mode: engine.ModeLazy, DenseWeight: 0.8},
		{Mode: engine.ModeLazy, Candidates: 200},
		{Mode: engine.ModeLazy, Candidates: 200, DenseWeight: 0.35},
		{Mode: engine.ModeLazy, Candidates: 200, DenseWeight: 0.5},
		{Mode: engine.ModeLazy, Candidates: 200, DenseWeight: 0.8},
	}
	for _, cfg := range runs {
		o := newOracle(s)
		cfg.Embedder, cfg.Ks = o, []int{1, 5, 10}
		rep, err := zhmem.Evaluate(ctx, s, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s oracle (dense weight %g, candidates %d): R@1 %.3f R@5 %.3f R@10 %.3f, embedded %d, texts matched to nothing %d",
			cfg.Mode, cfg.DenseWeight, cfg.Candidates, rep.Recall[1], rep.Recall[5], rep.Recall[10], rep.Embedded, len(o.misses))
		for kind, m := range rep.ByKind {
			t.Logf("  %-10s (%3d) R@1 %.3f R@5 %.3f R@10 %.3f", kind, rep.KindCount[kind], m[1], m[5], m[10])
		}
		for m := range o.misses {
			t.Logf("  unmatched: %q", m)
		}
		if cfg.Mode != engine.ModeDense {
			continue
		}
		// Single-evidence questions: the oracle's cosine is 1 for the
		// evidence and 0 for every other record.
		for _, q := range s.Questions {
			if len(q.Evidence) == 1 && rep.Ranks[q.ID][0] != 1 {
				t.Errorf("dense oracle: %s %q: evidence %s at rank %d, want 1", q.ID, q.Text, q.Evidence[0], rep.Ranks[q.ID][0])
			}
		}
	}
}

// TestOracleNoisy logs lazy recall on the set for noisy oracles of several
// dense-only qualities, at several dense weights: the weight that suits an
// embedder depends on how good it is. Logged, not asserted.
//
//	go test -run TestOracleNoisy -v ./bench/zhmem/
func TestOracleNoisy(t *testing.T) {
	if testing.Short() {
		t.Skip("embeds every record, many times")
	}
	s, err := zhmem.Load("testdata")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, sigma := range []float64{1, 1.25, 1.5, 2} {
		dense, err := zhmem.Evaluate(ctx, s, zhmem.Config{Mode: engine.ModeDense, Embedder: &testembed.Noisy{Inner: newOracle(s), Sigma: sigma}})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("sigma %g: dense-only R@1 %.3f R@5 %.3f R@10 %.3f", sigma, dense.Recall[1], dense.Recall[5], dense.Recall[10])
		for _, c := range []int{0, 200} {
			for _, w := range []float64{0.2, 0.35, 0.5, 0.8} {
				rep, err := zhmem.Evaluate(ctx, s, zhmem.Config{Mode: engine.ModeLazy, Embedder: &testembed.Noisy{Inner: newOracle(s), Sigma: sigma}, DenseWeight: w, Candidates: c})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("  lazy, candidates %d, dense weight %.2f: R@1 %.3f R@5 %.3f R@10 %.3f", c, w, rep.Recall[1], rep.Recall[5], rep.Recall[10])
			}
		}
	}
}
