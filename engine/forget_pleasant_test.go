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

// TestForgetSharedVector: a vector two live records of an agent share (the
// same constructed text, one of them with a pleasantry) stays when one is
// forgotten and goes with the second; the records Forget reads to count
// are those the index finds holding every word of the text, not the
// agent's whole history (TestForgetPleasantryVector: the other direction).
func TestForgetSharedVector(t *testing.T) {
	db, err := Open(t.TempDir(), storeOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	ctx := context.Background()
	recs := []Record{
		{Agent: "A", Session: "s1", Role: "user", Text: "Let's ship the beta on Friday."},
		{Agent: "A", Session: "s2", Role: "user", Text: "Thanks! Let's ship the beta on Friday."},
		{Agent: "A", Session: "s3", Role: "user", Text: "Let's ship the beta on Monday instead."},
		{Agent: "B", Session: "s1", Role: "user", Text: "Let's ship the beta on Friday."},
	}
	ids, err := db.AppendBatch(ctx, recs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Recall(ctx, Query{Agent: "A", Text: "when do we ship the beta", Mode: ModeLazy, K: 5}); err != nil {
		t.Fatal(err)
	}
	// The vectors on disk first: a write still pending when Forget drops
	// the record it was embedded for skips the vector (the cache is
	// derived data), shared or not.
	db.cache.settle()
	key := cacheKey("A", db.construct(&recs[0]))
	if key != cacheKey("A", db.construct(&recs[1])) {
		t.Fatal("the two records construct different texts: the test does not reach its case")
	}
	has := func() bool {
		t.Helper()
		ok, err := db.cache.has(key)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !has() {
		t.Fatal("the shared vector is not cached: the test does not reach its case")
	}
	if _, err := db.Forget(ctx, Selector{Agent: "A", IDs: []uint64{ids[0]}}); err != nil {
		t.Fatal(err)
	}
	if !has() {
		t.Fatal("forgetting one of two records that construct the text dropped the vector the other still uses")
	}
	if _, err := db.Forget(ctx, Selector{Agent: "A", IDs: []uint64{ids[1]}}); err != nil {
		t.Fatal(err)
	}
	if has() {
		t.Fatal("the vector outlives the last record of the agent that constructs its text")
	}
}
