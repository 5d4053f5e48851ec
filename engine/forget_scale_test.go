package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/lazymem/lazymem/internal/storetest"
)

// TestForgetTenThousand: a selector matching 10,000 records forgets all of
// them and nothing of another agent holding the same texts; no forgotten
// record comes back through BM25, dense scoring, session context, the
// embedding cache or a restart.
func TestForgetTenThousand(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 records")
	}
	dir := t.TempDir()
	o := storeOptions()
	db, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	text := func(i int) string { return fmt.Sprintf("entry %d of the zephyrine ledger, topic %d", i, i%50) }
	var a, b []Record
	for i := range 10000 {
		a = append(a, Record{Agent: "A", Session: fmt.Sprintf("s%d", i%100), Role: "user", Text: text(i)})
	}
	for i := range 500 {
		b = append(b, Record{Agent: "B", Session: "b", Role: "user", Text: text(i)}) // the same texts
	}
	aIDs, err := db.AppendBatch(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	bIDs, err := db.AppendBatch(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	// Fill the cache for both agents: lazy recalls over A and over B.
	for _, ag := range []string{"A", "B"} {
		for topic := range 5 {
			if _, err := db.Recall(ctx, Query{Agent: ag, Text: fmt.Sprintf("zephyrine ledger topic %d", topic), K: 20, Candidates: 200}); err != nil {
				t.Fatal(err)
			}
		}
	}
	res, err := db.Forget(ctx, Selector{Agent: "A"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Forgotten != 10000 || len(res.Ranges) != 1 || res.Ranges[0] != (IDRange{aIDs[0], aIDs[len(aIDs)-1]}) {
		t.Fatalf("Forget = %d records in %v, want 10000 in one range", res.Forgotten, res.Ranges)
	}
	check := func(stage string) {
		t.Helper()
		for _, id := range []uint64{aIDs[0], aIDs[4999], aIDs[9999]} {
			if _, err := db.Get(ctx, id); !errors.Is(err, ErrNotFound) {
				t.Fatalf("%s: Get(%d) = %v", stage, id, err)
			}
			if _, ok := db.cache.getID(id); ok {
				t.Fatalf("%s: the memory tier serves forgotten id %d", stage, id)
			}
		}
		for i, id := range bIDs {
			r, err := db.Get(ctx, id)
			if err != nil || r.Text != b[i].Text {
				t.Fatalf("%s: B's record %d: %q, %v", stage, id, r.Text, err)
			}
		}
		for _, m := range []Mode{ModeSparse, ModeLazy, ModeDense} {
			r, err := db.Recall(ctx, Query{Agent: "A", Text: "zephyrine ledger topic 3", Mode: m, CurrentSession: "s3"})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Memories) != 0 {
				t.Fatalf("%s: %s recall of A found %v", stage, m, r.Memories[0].ID)
			}
			r, err = db.Recall(ctx, Query{Agent: "B", Text: "zephyrine ledger topic 3", Mode: m, K: 10})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Memories) != 10 {
				t.Fatalf("%s: %s recall of B found %d", stage, m, len(r.Memories))
			}
			for _, mem := range r.Memories {
				if mem.Agent != "B" {
					t.Fatalf("%s: %s recall of B returned %s's record", stage, m, mem.Agent)
				}
			}
		}
		// On disk: A's vectors are gone, B's (same texts, its own
		// namespace) stay.
		goneA, keptB := 0, 0
		for i := range 500 {
			if _, c, err := db.cache.disk.Get(db.cache.diskKey(nil, cacheKey("A", db.opts.Construct(&a[i])))); err == nil {
				c.Close()
				t.Fatalf("%s: A's vector of %q is still on disk", stage, a[i].Text)
			} else if errors.Is(err, pebble.ErrNotFound) {
				goneA++
			}
			if _, c, err := db.cache.disk.Get(db.cache.diskKey(nil, cacheKey("B", db.opts.Construct(&b[i])))); err == nil {
				c.Close()
				keptB++
			}
		}
		if keptB == 0 {
			t.Fatalf("%s: none of B's vectors is on disk: the check is blind", stage)
		}
	}
	check("after Forget")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(dir, o); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	check("after a restart")
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	check("after Compact")
}

// TestCompactDeletesV1CacheKeys: the unnamespaced keys of the previous
// cache layout (a forgotten text's vector may be among them, and no
// engine reads them) are gone after Compact.
func TestCompactDeletesV1CacheKeys(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, storeOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	v1 := append([]byte(cacheKeyV1+db.cache.name+"\x00"), []byte("0123456789abcdef")...)
	if err := db.cache.disk.Set(v1, make([]byte, 4*db.cache.dim), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := db.cache.disk.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if _, c, err := db.cache.disk.Get(v1); !errors.Is(err, pebble.ErrNotFound) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("a v1 key survived Compact: %v", err)
	}
	if where := storetest.Find(storetest.Images(t, dir), v1); len(where) > 0 {
		t.Fatalf("the v1 key is still in %v", where)
	}
}

// TestRebuildIndexOnline: records appended while the index is rebuilt are
// all in the new index (the catch-up), each found by its own word.
func TestRebuildIndexOnline(t *testing.T) {
	db, err := Open(t.TempDir(), Options{DisableEmbedder: true, Clock: storeClock.Local})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	var recs []Record
	for i := range 5000 {
		recs = append(recs, Record{Agent: "a", Session: fmt.Sprint(i % 7), Text: fmt.Sprintf("base %s", crashToken(i%600))})
	}
	if _, err := db.AppendBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan []uint64)
	go func() {
		var ids []uint64
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- ids
				return
			default:
			}
			id, err := db.Append(ctx, Record{Agent: "a", Session: "live", Text: fmt.Sprintf("zqlive%dx", i)})
			if err != nil {
				t.Error(err)
				done <- ids
				return
			}
			ids = append(ids, id)
		}
	}()
	n, err := db.rebuildIndex()
	close(stop)
	ids := <-done
	if err != nil {
		t.Fatal(err)
	}
	if n < 5000 {
		t.Fatalf("rebuilt %d records, want at least 5000", n)
	}
	if got, want := db.idx.Metrics().Docs, uint64(5000+len(ids)); got != want {
		t.Fatalf("the index holds %d records, the log %d", got, want)
	}
	for i, id := range ids {
		res, err := db.Recall(ctx, Query{Agent: "a", Text: fmt.Sprintf("zqlive%dx", i), Mode: ModeSparse, K: 3, SessionTurns: -1})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 || res.Memories[0].ID != id {
			t.Fatalf("record %d appended during the rebuild is not found: %v", id, memIDs(res.Memories))
		}
	}
	t.Logf("%d records appended during the rebuild", len(ids))
}
