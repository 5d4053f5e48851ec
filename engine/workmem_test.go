package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lazymem/lazymem/engine/embed"
)

// gate is an embedder that counts the texts it embeds and, once armed,
// blocks every call until released (started is signalled per blocked
// call); fail makes calls return an error.
type gate struct {
	embed.Embedder
	texts   atomic.Int64
	armed   atomic.Bool
	fail    atomic.Bool
	started chan struct{}
	release chan struct{}
}

func newGate(t *testing.T) *gate {
	h, err := embed.NewHash(embed.HashOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &gate{Embedder: h, started: make(chan struct{}, 64), release: make(chan struct{})}
}

func (g *gate) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if g.armed.Load() {
		g.started <- struct{}{}
		<-g.release
	}
	if g.fail.Load() {
		return nil, errors.New("embedder down")
	}
	g.texts.Add(int64(len(texts)))
	return g.Embedder.Embed(ctx, texts)
}

var wmNow = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func openWM(t *testing.T, emb embed.Embedder, wm WorkingMemoryOptions) *DB {
	t.Helper()
	db, err := Open(t.TempDir(), Options{Embedder: emb, Clock: func() time.Time { return wmNow }, WorkingMemory: wm})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// history is n records of agent a from days ago: not live.
func history(n int) []Record {
	var recs []Record
	for i := range n {
		recs = append(recs, Record{Time: wmNow.AddDate(0, 0, -30).Add(time.Duration(i) * time.Minute), Agent: "a",
			Session: fmt.Sprint("old", i/20), Role: []string{"user", "assistant"}[i%2],
			Text: fmt.Sprintf("old note %d about the quarterly budget and topic%d", i, i%9)})
	}
	return recs
}

// meeting is the turns of a live meeting, appended one at a time.
var meeting = []Record{
	{Agent: "a", Session: "meet", Role: "Wang Fang", Text: "The budget for the launch is now 150k."},
	{Agent: "a", Session: "meet", Role: "Li Lei", Text: "ok"},
	{Agent: "a", Session: "meet", Role: "Li Lei", Text: "Then the launch moves to December 15."},
	{Agent: "a", Session: "meet", Role: "Wang Fang", Text: "I will tell the ops team about the new date."},
}

// TestWorkingMemoryLiveTurns: the turns of a live meeting are embedded in
// the background (the pleasantry "ok" is not), an import of old history
// queues nothing, and the first recall in the meeting then finds the
// turns' vectors in the cache: it embeds fewer texts than the same recall
// with working memory off.
func TestWorkingMemoryLiveTurns(t *testing.T) {
	ctx := context.Background()
	first := map[bool]int{}
	for _, off := range []bool{false, true} {
		emb := newGate(t)
		db := openWM(t, emb, WorkingMemoryOptions{Disable: off})
		if _, err := db.AppendBatch(ctx, history(200)); err != nil {
			t.Fatal(err)
		}
		db.SettleWorkingMemory()
		if m := db.Metrics().WorkingMemory; m.Queued != 0 || emb.texts.Load() != 0 {
			t.Fatalf("off=%v: an import of old history queued %d, embedded %d texts", off, m.Queued, emb.texts.Load())
		}
		for _, r := range meeting {
			if _, err := db.Append(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		db.SettleWorkingMemory()
		m := db.Metrics().WorkingMemory
		if off {
			if m != (WorkingMemoryMetrics{}) || emb.texts.Load() != 0 {
				t.Fatalf("working memory off: %+v, %d texts embedded", m, emb.texts.Load())
			}
		} else if m.Queued != 4 || m.Skipped != 1 || m.Embedded != 3 || emb.texts.Load() != 3 || m.Pending != 0 {
			t.Fatalf("live meeting: %+v, embedder saw %d texts; want 4 queued, 1 skipped (\"ok\"), 3 embedded", m, emb.texts.Load())
		}
		res, err := db.Recall(ctx, Query{Agent: "a", CurrentSession: "meet", Text: "what is the launch budget?", K: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 || res.Memories[0].Text != meeting[0].Text {
			t.Errorf("off=%v: top %v, want the budget turn", off, res.Memories)
		}
		first[off] = res.Stats.Embedded
	}
	if first[false] >= first[true] {
		t.Errorf("first recall embedded %d texts with working memory, %d without: want fewer with it", first[false], first[true])
	}
}

// TestWorkingMemoryBounds: one append call queues at most PerAppend live
// records (its last), and a full queue drops its oldest.
func TestWorkingMemoryBounds(t *testing.T) {
	ctx := context.Background()
	emb := newGate(t)
	db := openWM(t, emb, WorkingMemoryOptions{PerAppend: 3, MaxPending: 2})
	var live []Record
	for i := range 20 {
		live = append(live, Record{Agent: "a", Session: "s", Role: "user", Text: fmt.Sprintf("live line %d about deploys", i)})
	}
	if _, err := db.AppendBatch(ctx, live); err != nil {
		t.Fatal(err)
	}
	db.SettleWorkingMemory()
	if m := db.Metrics().WorkingMemory; m.Queued != 3 || m.Embedded+m.Dropped != 3 {
		t.Fatalf("a batch of 20 live records: %+v, want 3 queued", m)
	}
	// Hold the worker in a call, then queue five more: two stay.
	emb.armed.Store(true)
	base := db.Metrics().WorkingMemory
	if _, err := db.Append(ctx, Record{Agent: "a", Session: "s", Role: "user", Text: "the first of the held"}); err != nil {
		t.Fatal(err)
	}
	<-emb.started
	for i := range 5 {
		if _, err := db.Append(ctx, Record{Agent: "a", Session: "s", Role: "user", Text: fmt.Sprintf("held line %d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if m := db.Metrics().WorkingMemory; m.Pending != 2 || m.Dropped-base.Dropped != 3 {
		t.Fatalf("full queue: %+v, want 2 pending and 3 more dropped", m)
	}
	emb.armed.Store(false)
	close(emb.release)
	db.SettleWorkingMemory()
	if m := db.Metrics().WorkingMemory; m.Pending != 0 || m.Embedded-base.Embedded != 3 {
		t.Fatalf("after release: %+v, want the held one and the two kept embedded", m)
	}
}

// TestWorkingMemoryForget: a live record forgotten right after it is
// appended leaves no vector in the cache, whichever of Forget and the
// worker runs first; another agent's identical text is never its
// vector's owner (keys are per agent).
func TestWorkingMemoryForget(t *testing.T) {
	ctx := context.Background()
	emb := newGate(t)
	db := openWM(t, emb, WorkingMemoryOptions{})
	for i := range 20 {
		secret := Record{Agent: "a", Session: "s", Role: "user", Text: fmt.Sprintf("the vault code is quokka-%d", i)}
		id, err := db.Append(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			db.SettleWorkingMemory() // the worker first, then Forget
		}
		if _, err := db.Forget(ctx, Selector{IDs: []uint64{id}}); err != nil {
			t.Fatal(err)
		}
		db.SettleWorkingMemory()
		if has, err := db.cache.has(cacheKey("a", db.construct(&secret))); err != nil || has {
			t.Fatalf("record %d: the cache holds the forgotten record's vector (%v, %v)", i, has, err)
		}
	}
	if m := db.Metrics().WorkingMemory; m.Queued != 20 || m.Embedded+m.Skipped != 20 {
		t.Errorf("%+v: want every record either embedded (then dropped by Forget) or skipped", m)
	}
}

// TestWorkingMemoryErrors: an embedder failure in the background is
// counted and reported, never returned to an append; bad options name
// their field.
func TestWorkingMemoryErrors(t *testing.T) {
	ctx := context.Background()
	emb := newGate(t)
	var mu sync.Mutex
	var reported []error
	db, err := Open(t.TempDir(), Options{Embedder: emb, Clock: func() time.Time { return wmNow },
		OnBackgroundError: func(err error) { mu.Lock(); reported = append(reported, err); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	emb.fail.Store(true)
	if _, err := db.Append(ctx, Record{Agent: "a", Text: "a live turn while the embedder is down"}); err != nil {
		t.Fatalf("append: %v", err)
	}
	db.SettleWorkingMemory()
	mu.Lock()
	n := len(reported)
	mu.Unlock()
	if n != 1 || db.Metrics().BackgroundErrors != 1 {
		t.Errorf("reported %d errors, counted %d: want 1", n, db.Metrics().BackgroundErrors)
	}
	for _, o := range []WorkingMemoryOptions{{Live: -1}, {PerAppend: -1}, {MaxPending: -2}, {PerMinute: -3}} {
		_, err := Open(t.TempDir(), Options{WorkingMemory: o})
		if !errors.Is(err, ErrOptions) {
			t.Errorf("%+v: %v, want ErrOptions", o, err)
		}
	}
}

// TestWorkingMemoryBudget: at most PerMinute records are embedded a
// minute: with a budget of 2, five live turns leave three queued until
// the bucket refills (30 s a token), and Close stops the waiting worker.
func TestWorkingMemoryBudget(t *testing.T) {
	ctx := context.Background()
	emb := newGate(t)
	db := openWM(t, emb, WorkingMemoryOptions{PerMinute: 2})
	for i := range 5 {
		if _, err := db.Append(ctx, Record{Agent: "a", Session: "s", Role: "user", Text: fmt.Sprintf("live turn %d about the launch", i)}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for db.Metrics().WorkingMemory.Embedded < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the budget's first two were not embedded: %+v", db.Metrics().WorkingMemory)
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // the next token is 30 s away
	if m := db.Metrics().WorkingMemory; m.Embedded != 2 || m.Pending != 3 {
		t.Fatalf("over budget: %+v, want 2 embedded and 3 pending", m)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestWorkingMemoryBudgetClock: the budget is counted on the DB's clock
// (a replay on a clock of its own is budgeted in its own minutes), and
// SettleWorkingMemory returns once the budget is spent instead of waiting
// for tokens.
func TestWorkingMemoryBudgetClock(t *testing.T) {
	ctx := context.Background()
	emb := newGate(t)
	var now atomic.Int64
	now.Store(wmNow.UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	db, err := Open(t.TempDir(), Options{Embedder: emb, Clock: clock, WorkingMemory: WorkingMemoryOptions{PerMinute: 2}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	turn := func(i int) {
		t.Helper()
		if _, err := db.Append(ctx, Record{Agent: "a", Session: "s", Role: "user", Text: fmt.Sprintf("live turn %d about the launch", i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 5 {
		turn(i)
	}
	db.SettleWorkingMemory() // returns: two embedded, the budget spent
	if m := db.Metrics().WorkingMemory; m.Embedded != 2 || m.Pending != 3 {
		t.Fatalf("over budget: %+v, want 2 embedded and 3 pending", m)
	}
	now.Add(int64(time.Minute)) // a minute of the DB's clock: two tokens
	turn(5)
	db.SettleWorkingMemory()
	if m := db.Metrics().WorkingMemory; m.Embedded != 4 || m.Pending != 2 {
		t.Fatalf("a minute later on the DB's clock: %+v, want 4 embedded and 2 pending", m)
	}
	now.Add(-int64(time.Hour)) // a clock going back refills nothing
	turn(6)
	db.SettleWorkingMemory()
	if m := db.Metrics().WorkingMemory; m.Embedded != 4 {
		t.Fatalf("the clock went back: %+v, want still 4 embedded", m)
	}
}
