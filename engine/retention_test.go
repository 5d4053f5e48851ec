package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/segment"
)

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestRetention: with a fake clock, records past their agent's window
// vanish (Get, recall, restart), pinned ones stay, whole sealed segments
// are dropped, and disk usage falls after compaction.
func TestRetention(t *testing.T) {
	dir := t.TempDir()
	clk := &fakeClock{t: t0}
	opts := engine.Options{
		DisableEmbedder: true,
		Clock:           clk.Now,
		Log:             segment.Options{SegmentRecords: 100},
		Retention: engine.RetentionOptions{
			Window:   30 * 24 * time.Hour,
			PerAgent: map[string]time.Duration{"keep": -1, "short": time.Hour},
			Interval: -1, // the test runs the passes
		},
	}
	db, err := engine.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// 1000 old records of "old" (60 days ago), 10 of "keep" (60 days ago),
	// 10 of "short" (2 hours ago), 100 fresh of "old".
	var recs []engine.Record
	pad := "lorem ipsum dolor sit amet"
	for i := range 1000 {
		recs = append(recs, engine.Record{Agent: "old", Time: t0.AddDate(0, 0, -60).Add(time.Duration(i) * time.Second),
			Text: fmt.Sprintf("ancient memo %d with enough words to weigh something on disk %s", i, pad)})
	}
	for i := range 10 {
		recs = append(recs, engine.Record{Agent: "keep", Time: t0.AddDate(0, 0, -60), Text: fmt.Sprintf("keep forever %d", i)})
	}
	for i := range 10 {
		recs = append(recs, engine.Record{Agent: "short", Time: t0.Add(-2 * time.Hour), Text: fmt.Sprintf("short lived %d", i)})
	}
	for i := range 100 {
		recs = append(recs, engine.Record{Agent: "old", Time: t0, Text: fmt.Sprintf("fresh note %d", i)})
	}
	ids, err := db.AppendBatch(ctx, recs)
	if err != nil {
		t.Fatal(err)
	}
	pinned := ids[500]
	if err := db.Pin(ctx, pinned); err != nil {
		t.Fatal(err)
	}
	if err := db.Pin(ctx, 99999); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("Pin of an unknown id = %v", err)
	}
	if err := db.Agent("keep", engine.Quota{}).Pin(ctx, ids[0]); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("a scoped Pin of another agent's record = %v", err)
	}
	// Let the log seal its segments; disk usage before.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = engine.Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	before := db.Metrics().Log.DiskBytes
	n, err := db.ApplyRetention(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 999+10 {
		t.Fatalf("%d records expired, want 1009 (999 old unpinned + 10 short)", n)
	}
	for i, id := range ids {
		_, err := db.Get(ctx, id)
		gone := i < 1000 && id != pinned || i >= 1010 && i < 1020
		if gone != errors.Is(err, engine.ErrNotFound) {
			t.Fatalf("record %d (%s): Get = %v, want gone=%v", i, recs[i].Agent, err, gone)
		}
	}
	res := recall(t, db, engine.Query{Agent: "old", Text: "ancient memo", Mode: engine.ModeSparse, K: 50})
	if len(res.Memories) != 1 || res.Memories[0].ID != pinned {
		t.Fatalf("recall of expired records = %v, want only the pinned %d", ids2(res.Memories), pinned)
	}
	m := db.Metrics().Retention
	if m.Expired != 1009 || m.DroppedRecords == 0 || m.Pinned != 1 {
		t.Fatalf("retention metrics %+v: want 1009 expired, whole segments dropped, 1 pinned", m)
	}
	// Time passes: nothing more expires until the fresh ones age.
	if n, err := db.ApplyRetention(ctx); err != nil || n != 0 {
		t.Fatalf("second pass: %d, %v", n, err)
	}
	if err := db.Unpin(ctx, pinned); err != nil {
		t.Fatal(err)
	}
	clk.Add(31 * 24 * time.Hour)
	if n, err := db.ApplyRetention(ctx); err != nil || n != 101 {
		t.Fatalf("after 31 days: %d expired (want the 100 fresh and the unpinned), %v", n, err)
	}
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if after := db.Metrics().Log.DiskBytes; after >= before {
		t.Fatalf("disk usage %d before, %d after retention and compaction", before, after)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = engine.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if m := db.Metrics(); m.Index.Docs != 10 {
		t.Fatalf("after a restart %d records, want the 10 of keep", m.Index.Docs)
	}
}

func ids2(ms []engine.Memory) []uint64 { return ids(ms) }

// TestRetentionBackground: the background loop runs the passes (and the
// compaction) on its own, appends going on meanwhile.
func TestRetentionBackground(t *testing.T) {
	clk := &fakeClock{t: t0}
	db, err := engine.Open(t.TempDir(), engine.Options{
		DisableEmbedder: true, Clock: clk.Now,
		Retention:       engine.RetentionOptions{Window: time.Hour, Interval: time.Millisecond},
		CompactInterval: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	old, err := db.Append(ctx, engine.Record{Agent: "a", Time: t0.Add(-2 * time.Hour), Text: "stale"})
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := db.Append(ctx, engine.Record{Agent: "a", Text: "fresh"})
	if err != nil {
		t.Fatal(err)
	}
	// Wait for the loop (no assertion on how long it takes: the deadline
	// only keeps a broken loop from hanging the test).
	deadline := time.Now().Add(time.Minute)
	for {
		m := db.Metrics()
		if m.Retention.Expired == 1 && m.Compactions > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the background loop did not expire and compact: %+v, %d compactions", m.Retention, m.Compactions)
		}
		if _, err := db.Append(ctx, engine.Record{Agent: "b", Text: "meanwhile"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := db.Get(ctx, old); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("the expired record: %v", err)
	}
	if _, err := db.Get(ctx, fresh); err != nil {
		t.Fatalf("the fresh record: %v", err)
	}
}

// TestRetentionSuccessor: a turn that expires takes its words out of the
// next turn of its session, which inherited them through session context
// (that record is indexed again at once, not at the next compaction); so
// after a restart.
func TestRetentionSuccessor(t *testing.T) {
	dir := t.TempDir()
	clk := &fakeClock{t: t0}
	opts := engine.Options{
		DisableEmbedder: true,
		Clock:           clk.Now,
		Retention:       engine.RetentionOptions{Window: 30 * 24 * time.Hour, Interval: -1},
	}
	db, err := engine.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()
	ctx := context.Background()
	ids, err := db.AppendBatch(ctx, []engine.Record{
		{Agent: "a", Session: "s", Role: "user", Time: t0.AddDate(0, 0, -60), Text: "the quokka vault code is swordfish"},
		{Agent: "a", Session: "s", Role: "assistant", Time: t0.AddDate(0, 0, -1), Text: "Noted, I will keep it safe."},
		{Agent: "a", Session: "s2", Role: "user", Time: t0, Text: "I painted a sunrise."},
	})
	if err != nil {
		t.Fatal(err)
	}
	q := engine.Query{Agent: "a", Text: "quokka swordfish", Mode: engine.ModeSparse, SessionTurns: -1, FallbackScan: -1, NoExpansion: true}
	if got := ids2(recall(t, db, q).Memories); len(got) != 2 {
		t.Fatalf("before: %v, want the statement and the reply that inherits its words", got)
	}
	if n, err := db.ApplyRetention(ctx); err != nil || n != 1 {
		t.Fatalf("ApplyRetention = %d, %v; want 1", n, err)
	}
	if got := recall(t, db, q).Memories; len(got) != 0 {
		t.Fatalf("after retention: %v: the reply still matches the expired turn's words", texts(got))
	}
	if m := db.Metrics().Index; m.Amended != 1 {
		t.Fatalf("amended %d, want the reply (%d)", m.Amended, ids[1])
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = engine.Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	if got := recall(t, db, q).Memories; len(got) != 0 {
		t.Fatalf("reopened: %v", texts(got))
	}
	if got := recall(t, db, engine.Query{Agent: "a", Text: "keep it safe", Mode: engine.ModeSparse}).Memories; len(got) == 0 || got[0].ID != ids[1] {
		t.Fatalf("the reply itself: %v", ids2(got))
	}
}
