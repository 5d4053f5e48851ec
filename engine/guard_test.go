package engine_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/lazymem/lazymem/engine"
)

// constEmbedder maps every text to the same unit vector e_axis.
type constEmbedder struct {
	name string
	axis int
}

func (e constEmbedder) Name() string { return e.name }
func (e constEmbedder) Dim() int     { return 4 }
func (e constEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = make([]float32, 4)
		out[i][e.axis] = 1
	}
	return out, nil
}

// TestCacheKeyedByEmbedderName: a store reopened with another embedder of
// the same dimension must never be served the first one's vectors from the
// disk cache (the embedder's name is part of the key).
func TestCacheKeyedByEmbedderName(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	q := engine.Query{Agent: "a", Text: "lighthouse keeper", Mode: engine.ModeLazy}
	open := func(e engine.Options) *engine.DB {
		db, err := engine.Open(dir, e)
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := open(engine.Options{Embedder: constEmbedder{"model-a", 0}})
	for _, s := range []string{"the lighthouse keeper waved", "a keeper of bees", "lighthouse at dawn"} {
		if _, err := db.Append(ctx, engine.Record{Agent: "a", Text: s}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := db.Recall(ctx, q)
	if err != nil || len(res.Memories) == 0 {
		t.Fatalf("first recall: %+v %v", res, err)
	}
	if d := res.Memories[0].Dense; math.Abs(d-1) > 1e-6 {
		t.Fatalf("model-a dense %v, want 1", d)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = open(engine.Options{Embedder: constEmbedder{"model-b", 1}})
	defer db.Close()
	res, err = db.Recall(ctx, q)
	if err != nil || len(res.Memories) == 0 {
		t.Fatalf("recall after reopen: %+v %v", res, err)
	}
	// model-b's query vector is e1; its record vectors are e1 too. A vector
	// served from model-a's cache entries (e0) would score 0.
	for _, m := range res.Memories {
		if math.Abs(m.Dense-1) > 1e-6 {
			t.Fatalf("record %d dense %v after switching embedders: served another model's vector", m.ID, m.Dense)
		}
	}
	if res.Stats.DiskHits != 0 {
		t.Fatalf("%d disk-cache hits for a model that never wrote the cache", res.Stats.DiskHits)
	}
}

// TestUntilBoundsEveryMode: Query.Until is an exclusive upper bound in
// sparse, lazy and dense recalls alike (and Since an inclusive lower one).
func TestUntilBoundsEveryMode(t *testing.T) {
	db, err := engine.Open(t.TempDir(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	base := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for d := range 10 {
		r := engine.Record{Agent: "a", Time: base.AddDate(0, 0, d), Text: "the quarterly budget review meeting notes"}
		if _, err := db.Append(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	since, until := base.AddDate(0, 0, 3), base.AddDate(0, 0, 6)
	for _, mode := range []engine.Mode{engine.ModeSparse, engine.ModeLazy, engine.ModeDense} {
		res, err := db.Recall(ctx, engine.Query{Agent: "a", Text: "budget review", Mode: mode, Since: since, Until: until, K: 10})
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if len(res.Memories) != 3 {
			t.Errorf("%s: %d memories, want the 3 of days 3-5", mode, len(res.Memories))
		}
		for _, m := range res.Memories {
			if m.Time.Before(since) || !m.Time.Before(until) {
				t.Errorf("%s: record at %s outside [%s, %s)", mode, m.Time, since, until)
			}
		}
		// Until alone.
		res, err = db.Recall(ctx, engine.Query{Agent: "a", Text: "budget review", Mode: mode, Until: until, K: 10})
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if len(res.Memories) != 6 {
			t.Errorf("%s until only: %d memories, want 6", mode, len(res.Memories))
		}
	}
}
