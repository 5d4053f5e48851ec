package engine

import (
	"context"
	"testing"
)

// TestForgetPleasantryVector: the engine embeds a record without its
// leading and trailing pleasantries (construct), so its vector sits in the
// embedding cache under the stripped text's key. Forgetting the record
// must drop that key, not the key of the text as written: after Forget and
// Compact the cache holds no vector of it, while another record of the
// agent that constructs the same stripped text would keep it (reference
// counting by constructed text).
func TestForgetPleasantryVector(t *testing.T) {
	db, err := Open(t.TempDir(), storeOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	ctx := context.Background()
	secret := Record{Agent: "A", Session: "s", Role: "user", Text: "Thanks! The vault combination is quokka-7731."}
	other := Record{Agent: "A", Session: "s", Role: "user", Text: "The garden needs water on Sunday."}
	ids, err := db.AppendBatch(ctx, []Record{secret, other})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Recall(ctx, Query{Agent: "A", Text: "vault combination quokka", Mode: ModeLazy, K: 5}); err != nil {
		t.Fatal(err)
	}
	key := cacheKey("A", db.construct(&secret))
	if has, err := db.cache.has(key); err != nil || !has {
		t.Fatalf("the record's vector is not cached under its stripped text (%v): the test does not reach its case", err)
	}
	if _, err := db.Forget(ctx, Selector{IDs: []uint64{ids[0]}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if has, err := db.cache.has(key); err != nil || has {
		t.Errorf("after Forget and Compact the cache still holds the forgotten record's vector (has %v, %v)", has, err)
	}
}
