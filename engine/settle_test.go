package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lazymem/lazymem/index"
)

// TestSettle: a store loaded into several index segments is searched as
// one after Settle, with the same recall, and stays so after a reopen.
func TestSettle(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// Flushes inside the appends (no background work): five segments. A
	// fixed clock and record times: the recency prior must not differ
	// between the two recalls (a race-detector run under load took long
	// enough between them to reorder two close scores).
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	opts := Options{Index: index.Options{FlushDocs: 50, MergeFactor: 16, DisableBackgroundMerge: true}, Clock: func() time.Time { return now }}
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	var recs []Record
	for i := range 230 {
		recs = append(recs, Record{Agent: "a", Session: fmt.Sprintf("s%d", i/10), Role: "user", Time: now.Add(time.Duration(i-230) * time.Minute),
			Text: fmt.Sprintf("note %d about the %s budget and the launch of project %d", i, []string{"travel", "cloud", "hiring"}[i%3], i%7)})
	}
	for i := 0; i < len(recs); i += 50 {
		if _, err := db.AppendBatch(ctx, recs[i:min(i+50, len(recs))]); err != nil {
			t.Fatal(err)
		}
	}
	q := Query{Text: "cloud budget project 3", Agent: "a", K: 5, Mode: ModeSparse}
	before, err := db.Recall(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if n := db.Metrics().Index.Segments; n < 4 {
		t.Fatalf("%d index segments before Settle, want 4 or more", n)
	}
	if err := db.Settle(); err != nil {
		t.Fatal(err)
	}
	if m := db.Metrics().Index; m.Segments != 1 || m.MemDocs != 0 {
		t.Fatalf("after Settle: %d segments, %d records in memory; want 1 and 0", m.Segments, m.MemDocs)
	}
	after, err := db.Recall(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Memories) != len(before.Memories) || len(after.Memories) == 0 {
		t.Fatalf("%d memories after Settle, %d before", len(after.Memories), len(before.Memories))
	}
	for i := range after.Memories {
		if after.Memories[i].ID != before.Memories[i].ID {
			t.Fatalf("memory %d: id %d after Settle, %d before", i, after.Memories[i].ID, before.Memories[i].ID)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Settle(); err != ErrClosed {
		t.Fatalf("Settle after Close: %v, want ErrClosed", err)
	}
	db, err = Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n := db.Metrics().Index.Segments; n != 1 {
		t.Fatalf("%d index segments after a reopen, want 1", n)
	}
}
