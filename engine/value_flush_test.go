package engine

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestFlushValuesOffLock: while flushValues reads the persisted value
// entries (the slow part: one read a record) a recall runs to its end
// (its noteRecall and core merge take the core store's lock, which the
// reads used to hold), Value counts the deltas being flushed, and a
// record forgotten meanwhile is not written back.
func TestFlushValuesOffLock(t *testing.T) {
	ctx := context.Background()
	db, err := Open(t.TempDir(), Options{Core: CoreOptions{FlushInterval: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	recs := []Record{
		{Time: time.Unix(1e9, 0), Agent: "a1", Session: "s1", Role: "Alice", Text: "The staging replica runs Postgres 16 on port 5433."},
		{Time: time.Unix(1e9+60, 0), Agent: "a1", Session: "s1", Role: "Bob", Text: "Postgres staging is slow on port 5433 today."},
		{Time: time.Unix(1e9+120, 0), Agent: "a1", Session: "s1", Role: "Alice", Text: "Nice weather today."},
	}
	ids, err := db.AppendBatch(ctx, recs)
	if err != nil {
		t.Fatal(err)
	}
	q := Query{Agent: "a1", Text: "postgres staging port", K: 2}
	res, err := db.Recall(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) != 2 {
		t.Fatalf("recall returned %d memories, want 2", len(res.Memories))
	}
	keep, gone := ids[0], ids[1]
	hooked := false
	db.core.afterFlushRead = func() {
		hooked = true
		done := make(chan error, 1)
		go func() {
			_, err := db.Recall(ctx, q)
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("recall during the flush: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a recall waited for the flush's reads")
		}
		v, err := db.Value(ctx, keep)
		if err != nil {
			t.Fatal(err)
		}
		if v.Candidates != 2 || v.TopK != 2 {
			t.Errorf("Value during the flush: %d candidates, %d top k; want 2 and 2 (one being flushed, one not)", v.Candidates, v.TopK)
		}
		if _, err := db.Forget(ctx, Selector{IDs: []uint64{gone}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.flushValues(); err != nil {
		t.Fatal(err)
	}
	db.core.afterFlushRead = nil
	if !hooked {
		t.Fatal("flushValues did not reach its reads")
	}
	if err := db.flushValues(); err != nil {
		t.Fatal(err)
	}
	v, err := db.Value(ctx, keep)
	if err != nil {
		t.Fatal(err)
	}
	if v.Candidates != 2 || v.TopK != 2 {
		t.Errorf("Value after the flushes: %d candidates, %d top k; want 2 and 2", v.Candidates, v.TopK)
	}
	pv, err := db.core.readValue(gone)
	if err != nil {
		t.Fatal(err)
	}
	if pv != (valueEntry{}) {
		t.Errorf("the record forgotten during the flush has a persisted value entry %+v", pv)
	}
	if _, err := db.Value(ctx, gone); !errors.Is(err, ErrNotFound) {
		t.Errorf("Value of the forgotten record: %v, want ErrNotFound", err)
	}
}
