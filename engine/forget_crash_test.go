package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/lazymem/lazymem/internal/faultfs"
)

// forgetCrashPlan is the store the forgetting crash test starts from:
// record i (id i+1) holds crashToken(i). Groups, each removed by one
// operation of the workload:
//
//	group 1: a1's session "gone" (ids 1-4), forgotten by session
//	group 2: id 6, the first turn of a1's session "keep" (its successor
//	         id 7 inherited its words: re-indexed)
//	group 3: a3's records (ids 13-16), a year old: removed by retention
//
// every other record must survive every crash image.
func forgetCrashPlan() ([]Record, [][]uint64) {
	var recs []Record
	for i := range 20 {
		r := Record{Agent: "a1", Session: "keep", Role: []string{"user", "assistant"}[i%2],
			Text: fmt.Sprintf("%s common note %d", crashToken(i), i), Time: storeClock.Add(time.Duration(i) * time.Minute)}
		switch {
		case i < 4:
			r.Session = "gone"
		case i >= 12 && i < 16:
			r.Agent, r.Session, r.Time = "a3", "old", storeClock.AddDate(-1, 0, 0)
		case i >= 8:
			r.Agent, r.Session = "a2", "other"
		}
		recs = append(recs, r)
	}
	return recs, [][]uint64{{1, 2, 3, 4}, {6}, {13, 14, 15, 16}}
}

func forgetCrashOptions(fs vfs.FS) Options {
	o := crashOptions(fs)
	o.Retention = RetentionOptions{Window: 30 * 24 * time.Hour, Interval: -1}
	o.CompactInterval = -1
	return o
}

// TestCrashForgetCompactRetention takes a crash image after every
// filesystem operation of Forget (by session, and by id with a successor
// to re-index), a retention pass and Compact, and checks that each image
// opens; that each group of records one operation removed is wholly
// forgotten or wholly present (Get and a sparse recall of each record's
// own token agree: never gone from the log but still indexed, or the
// reverse); and that nothing else changed.
func TestCrashForgetCompactRetention(t *testing.T) {
	recs, groups := forgetCrashPlan()
	mem := vfs.NewCrashableMem()
	ctx := context.Background()
	db, err := Open("store", forgetCrashOptions(mem))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Recall(ctx, Query{Agents: []string{"a1", "a2", "a3"}, Text: "common note", K: 20, Candidates: 20}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	type image struct {
		n  int
		op string
		fs *vfs.MemFS
		// done[g]: group g's operation had returned when the image was
		// taken (it must then be forgotten).
		done [3]bool
	}
	v := faultfs.Verify(t, func(img image) error { return verifyForgetImage(img.fs, recs, groups, img.done) },
		func(img image) string { return fmt.Sprintf("crash after op %d (%s)", img.n, img.op) })
	var mu sync.Mutex
	var done [3]atomic.Bool
	// Images are taken from the first operation of the workload on: the
	// Open before it is not under test (Pebble's MANIFEST switch at Open
	// assumes a filesystem that keeps the order of directory operations,
	// which the crash clone does not).
	var armed atomic.Bool
	n := 0
	rng := rand.New(rand.NewPCG(3, 4))
	hook := func(op string) {
		if !armed.Load() {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		n++
		cfg := faultfs.CrashCfg(n, rng)
		img := image{n: n, op: op}
		for g := range done {
			img.done[g] = done[g].Load()
		}
		img.fs = mem.CrashClone(cfg)
		v.Add(img)
	}
	db, err = Open("store", forgetCrashOptions(&opFS{FS: mem, hook: hook}))
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	armed.Store(true)
	res, err := db.Forget(ctx, Selector{Agent: "a1", Sessions: []string{"gone"}})
	must(err)
	done[0].Store(true)
	res2, err := db.Forget(ctx, Selector{IDs: []uint64{6}})
	must(err)
	done[1].Store(true)
	expired, err := db.ApplyRetention(ctx)
	must(err)
	done[2].Store(true)
	must(db.Compact(ctx))
	must(db.Close())
	checked := v.Wait(t, 50)
	if res.Forgotten != 4 || res2.Forgotten != 1 || res2.Reindexed == 0 || expired != 4 {
		t.Fatalf("the workload forgot %d, %d (re-indexed %d) and expired %d; want 4, 1 (re-indexing), 4",
			res.Forgotten, res2.Forgotten, res2.Reindexed, expired)
	}
	t.Logf("%d crash images verified", checked)
}

// verifyForgetImage opens a crash image and checks it (see
// TestCrashForgetCompactRetention).
func verifyForgetImage(fs vfs.FS, recs []Record, groups [][]uint64, done [3]bool) error {
	ctx := context.Background()
	db, err := Open("store", forgetCrashOptions(fs))
	if err != nil {
		return fmt.Errorf("reopen: %w", err)
	}
	defer db.Close()
	present := func(id uint64) (bool, error) {
		r := recs[id-1]
		got, gerr := db.Get(ctx, id)
		switch {
		case gerr == nil:
			if got.Text != r.Text || got.Agent != r.Agent || got.Session != r.Session {
				return false, fmt.Errorf("id %d holds %q, want %q", id, got.Text, r.Text)
			}
		case !errors.Is(gerr, ErrNotFound):
			return false, fmt.Errorf("get %d: %w", id, gerr)
		}
		res, err := db.Recall(ctx, Query{Agent: r.Agent, Text: crashToken(int(id - 1)), Mode: ModeSparse, K: 3})
		if err != nil {
			return false, err
		}
		indexed := slices.Contains(memIDs(res.Memories), id)
		if indexed != (gerr == nil) {
			return false, fmt.Errorf("id %d: in the log %v, in the index %v", id, gerr == nil, indexed)
		}
		return indexed, nil
	}
	inGroup := map[uint64]bool{}
	for g, ids := range groups {
		var states []bool
		for _, id := range ids {
			inGroup[id] = true
			p, err := present(id)
			if err != nil {
				return err
			}
			states = append(states, p)
		}
		if slices.Contains(states, true) && slices.Contains(states, false) {
			return fmt.Errorf("group %d (%v) half forgotten: %v", g+1, ids, states)
		}
		if done[g] && states[0] {
			return fmt.Errorf("group %d (%v) present although its operation had returned", g+1, ids)
		}
		if !states[0] && len(ids) == 1 {
			// A successor must not match the forgotten record's words.
			res, err := db.Recall(ctx, Query{Agent: recs[ids[0]-1].Agent, Text: crashToken(int(ids[0] - 1)), Mode: ModeSparse, K: 3, FallbackScan: -1})
			if err != nil {
				return err
			}
			if len(res.Memories) > 0 {
				return fmt.Errorf("forgotten id %d's words still match %v", ids[0], memIDs(res.Memories))
			}
		}
	}
	for id := uint64(1); id <= uint64(len(recs)); id++ {
		if inGroup[id] {
			continue
		}
		p, err := present(id)
		if err != nil {
			return err
		}
		if !p {
			return fmt.Errorf("id %d, never forgotten, is gone", id)
		}
	}
	if got := db.log.Next() - 1; got != uint64(len(recs)) {
		return fmt.Errorf("the log has ids up to %d, want %d", got, len(recs))
	}
	return nil
}
