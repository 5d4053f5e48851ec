package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/engine"
)

// TestDenseScanBudget: a dense recall whose filters pass more records than
// Query.MaxDenseScan fails before embedding anything, with an error naming
// the limit; at the limit it runs.
func TestDenseScanBudget(t *testing.T) {
	emb := newCounting(t)
	db := openT(t, t.TempDir(), emb)
	defer db.Close()
	load(t, db)
	emb.reset()
	ctx := context.Background()
	// Agent a1 holds 11 records.
	_, err := db.Recall(ctx, engine.Query{Agent: "a1", Text: "connection pool", Mode: engine.ModeDense, MaxDenseScan: 10})
	if !errors.Is(err, engine.ErrBudget) {
		t.Fatalf("11 records over a budget of 10: %v, want ErrBudget", err)
	}
	for _, w := range []string{"query.max_dense_scan", "10", "11"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name %q", err, w)
		}
	}
	if emb.calls.Load() != 0 {
		t.Errorf("the refused recall embedded %d texts", emb.texts.Load())
	}
	res := recall(t, db, engine.Query{Agent: "a1", Text: "connection pool", Mode: engine.ModeDense, MaxDenseScan: 11})
	if res.Stats.Candidates != 11 || len(res.Memories) == 0 {
		t.Fatalf("at the budget: %d candidates, %d memories", res.Stats.Candidates, len(res.Memories))
	}
	// The budget bounds dense mode only.
	recall(t, db, engine.Query{Agent: "a1", Text: "connection pool", MaxDenseScan: 1})
	_, err = db.Recall(ctx, engine.Query{Agent: "a1", Text: "x", MaxDenseScan: -1})
	if !errors.Is(err, engine.ErrInvalid) || !strings.Contains(err.Error(), "query.max_dense_scan") {
		t.Fatalf("negative budget: %v", err)
	}
}
