package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/engine"
)

func TestAgentScope(t *testing.T) {
	db := openT(t, t.TempDir(), nil)
	defer db.Close()
	load(t, db) // ids 1..11 are a1's, 12 is a2's
	ctx := context.Background()
	a2 := db.Agent("a2", engine.Quota{})
	if _, err := a2.Get(ctx, 1); !errors.Is(err, engine.ErrNotFound) || err.Error() != "lazymem: engine: record not found: id 1" {
		t.Fatalf("Get of another agent's id = %v, want ErrNotFound", err)
	}
	if r, err := a2.Get(ctx, 12); err != nil || r.Agent != "a2" {
		t.Fatalf("Get(12) = %+v, %v", r, err)
	}
	if _, err := a2.Append(ctx, engine.Record{Agent: "a1", Text: "sneaky"}); !errors.Is(err, engine.ErrScope) ||
		!strings.HasPrefix(err.Error(), "lazymem: record.agent: outside the handle's agent") {
		t.Fatalf("Append for another agent = %v", err)
	}
	for _, q := range []engine.Query{{Agent: "a1", Text: "pool"}, {Agents: []string{"a2", "a1"}, Text: "pool"}} {
		if _, err := a2.Recall(ctx, q); !errors.Is(err, engine.ErrScope) {
			t.Fatalf("Recall(%+v) = %v, want ErrScope", q, err)
		}
	}
	res, err := a2.Recall(ctx, engine.Query{Text: "connection pool", Explain: true, Mode: engine.ModeLazy})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) != 1 || res.Memories[0].ID != 12 {
		t.Fatalf("scoped recall = %v, want [12]", ids(res.Memories))
	}
	m := res.Memories[0]
	if m.Score != 0 || m.Sparse != 0 || len(m.Reasons) == 0 || m.Reasons[0] != "bm25 #1" {
		t.Fatalf("scoped recall shows raw BM25 scores: %+v %v", m.Score, m.Reasons)
	}
	if _, err := a2.Forget(ctx, engine.Selector{IDs: []uint64{1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Get(ctx, 1); err != nil {
		t.Fatalf("a2's Forget reached a1's record: %v", err)
	}
	if _, err := a2.Forget(ctx, engine.Selector{Agent: "a1"}); !errors.Is(err, engine.ErrScope) {
		t.Fatalf("Forget naming another agent = %v", err)
	}
}

func TestAgentQuota(t *testing.T) {
	db := openT(t, t.TempDir(), nil)
	defer db.Close()
	ctx := context.Background()
	a := db.Agent("q", engine.Quota{MaxRecords: 3, MaxBytes: 20})
	if _, err := a.AppendBatch(ctx, []engine.Record{{Text: "0123456789"}, {Text: "01234"}}); err != nil {
		t.Fatal(err)
	}
	_, err := a.Append(ctx, engine.Record{Text: "0123456789"})
	if !errors.Is(err, engine.ErrQuota) || !strings.Contains(err.Error(), `agent "q": 15 text bytes + 10 would pass the limit of 20 bytes`) {
		t.Fatalf("over the byte quota: %v", err)
	}
	if _, err := a.Append(ctx, engine.Record{Text: "abc"}); err != nil {
		t.Fatal(err)
	}
	_, err = a.Append(ctx, engine.Record{Text: "x"})
	if !errors.Is(err, engine.ErrQuota) || !strings.Contains(err.Error(), "3 records + 1 would pass the limit of 3 records") {
		t.Fatalf("over the record quota: %v", err)
	}
	if _, err := a.Forget(ctx, engine.Selector{IDs: []uint64{1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append(ctx, engine.Record{Text: "0123456789"}); err != nil {
		t.Fatalf("after forgetting, the quota has room again: %v", err)
	}
}

// TestCacheNamespace: one tenant's recall statistics do not reveal whether
// another tenant holds or asked a text.
func TestCacheNamespace(t *testing.T) {
	emb := newCounting(t)
	db := openT(t, t.TempDir(), emb)
	defer db.Close()
	ctx := context.Background()
	for _, ag := range []string{"a", "b"} {
		if _, err := db.Append(ctx, engine.Record{Agent: ag, Text: "the secret launch date is friday"}); err != nil {
			t.Fatal(err)
		}
	}
	q := engine.Query{Text: "launch date", Mode: engine.ModeLazy}
	first, err := db.Agent("a", engine.Quota{}).Recall(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	second, err := db.Agent("b", engine.Quota{}).Recall(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if first.Stats.Embedded != 2 || second.Stats.Embedded != 2 || second.Stats.CacheHits != 0 {
		t.Fatalf("b's stats after a asked the same and holds the same text: %+v (a's: %+v)", second.Stats, first.Stats)
	}
}
