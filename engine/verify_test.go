package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/internal/storetest"
	"github.com/lazymem/lazymem/segment"
)

// damagedStore builds a store of n records in sealed segments inside one
// Pebble sstable, then flips bytes in the middle of that sstable: a data
// block holding some segments is damaged.
func damagedStore(t *testing.T, n int) (dir string, opts engine.Options) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "mem")
	// Row segments: the damage lands in the middle of the largest sstable,
	// which must be a block of segments; columnar segments of these short
	// records make the sstable so small that its middle is the block Open
	// reads first.
	opts = engine.Options{Log: segment.Options{SegmentRecords: 20, ReserveBytes: -1, DisableColumns: true}}
	db, err := engine.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	recs := make([]engine.Record, n)
	for i := range recs {
		recs[i] = engine.Record{Time: time.Date(2026, 5, 1, 0, i, 0, 0, time.UTC), Agent: "a1", Session: fmt.Sprintf("s%d", i/10), Role: "user",
			Text: fmt.Sprintf("note %d: the connection pool of service-%d was resized to %d workers", i, i%13, i*7)}
	}
	if _, err := db.AppendBatch(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	storetest.DamageLogBlock(t, filepath.Join(dir, "log"), opts.Log)
	return dir, opts
}

func TestVerifyHealthyStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mem")
	db, err := engine.Open(dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AppendBatch(context.Background(), corpus()); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	var calls int
	rep, err := engine.Verify(dir, engine.VerifyOptions{Progress: func(engine.VerifyProgress) { calls++ }})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Records != uint64(len(corpus())) || rep.Live != rep.Records || calls == 0 {
		t.Fatalf("healthy store: %+v (progress calls %d)", rep, calls)
	}
	if _, err := engine.Verify(filepath.Join(t.TempDir(), "nothing"), engine.VerifyOptions{}); err == nil {
		t.Fatal("verify of a missing store succeeded")
	}
}

// TestVerifyRepairDamagedBlock damages a Pebble data block of the log:
// Verify names the damaged segments and their id ranges, every other record
// is read; Repair sets them aside under quarantine/, then the store opens,
// verifies clean and answers recalls.
func TestVerifyRepairDamagedBlock(t *testing.T) {
	const n = 400
	dir, opts := damagedStore(t, n)
	rep, err := engine.Verify(dir, engine.VerifyOptions{Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() {
		t.Fatal("verify found nothing in a damaged store")
	}
	var lost uint64
	for _, d := range rep.Damage {
		if d.Kind != "segment" {
			continue
		}
		if d.FirstID == 0 || d.LastID < d.FirstID || d.Segment != d.FirstID || d.Err == "" {
			t.Fatalf("damage entry: %+v", d)
		}
		lost += d.Count
	}
	if lost == 0 || lost >= n/2 {
		t.Fatalf("damaged records %d of %d: want a block's worth", lost, n)
	}
	if rep.Live+lost != n {
		t.Fatalf("read %d live + %d damaged, want %d", rep.Live, lost, n)
	}

	rr, err := engine.Repair(dir, engine.VerifyOptions{Options: opts})
	if err != nil {
		t.Fatalf("repair: %v", err)
	}
	if rr.LostRecords != lost || !rr.After.OK() || rr.Quarantine == "" {
		t.Fatalf("repair report: lost %d (want %d), after %+v", rr.LostRecords, lost, rr.After)
	}
	if !strings.HasPrefix(rr.Quarantine, filepath.Join(dir, "quarantine")) {
		t.Fatalf("quarantine %q not under the store", rr.Quarantine)
	}
	if _, err := os.Stat(filepath.Join(rr.Quarantine, "damage.json")); err != nil {
		t.Fatal(err)
	}
	db, err := engine.Open(dir, opts)
	if err != nil {
		t.Fatalf("open after repair: %v", err)
	}
	defer db.Close()
	res, err := db.Recall(context.Background(), engine.Query{Text: "connection pool service-3", Agent: "a1", K: 5})
	if err != nil || len(res.Memories) == 0 {
		t.Fatalf("recall after repair: %v %+v", err, res)
	}
	for _, d := range rep.Damage {
		if d.Kind == "segment" {
			if _, err := db.Get(context.Background(), d.FirstID); !errors.Is(err, engine.ErrNotFound) {
				t.Fatalf("quarantined record %d: %v", d.FirstID, err)
			}
		}
	}
	if _, err := db.Append(context.Background(), engine.Record{Agent: "a1", Session: "s", Role: "user", Text: "after repair"}); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyIndexDisagreement: a record deleted from the log but still
// indexed is reported with its id, and Repair rebuilds the index from the
// log.
func TestVerifyIndexDisagreement(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mem")
	db, err := engine.Open(dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := db.AppendBatch(ctx, corpus()[:8]); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil { // Close flushes the index: it covers ids 1-8
		t.Fatal(err)
	}
	// Delete record 2 from the log only: the index still holds it.
	l, err := segment.Open(filepath.Join(dir, "log"), segment.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Delete(ctx, []uint64{2}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := engine.Verify(dir, engine.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var extra bool
	for _, d := range rep.Damage {
		if d.Kind == "index-extra" && d.FirstID == 2 && d.Count == 1 {
			extra = true
		}
	}
	if !extra || rep.Indexed != 8 || rep.Live != 7 {
		t.Fatalf("index holding a deleted record not reported: %+v", rep)
	}
	rr, err := engine.Repair(dir, engine.VerifyOptions{})
	if err != nil || !rr.After.OK() || rr.After.Indexed != 7 || rr.LostRecords != 0 {
		t.Fatalf("repair: %v %+v", err, rr)
	}
}

// TestRepairDamagedWAL damages the newest WAL of the log: the log does not
// open (Verify reports kind "log"); Repair copies the log aside, moves the
// damaged WAL into the quarantine, and the store opens with the records
// that were already in sstables or older WALs, its index rebuilt.
func TestRepairDamagedWAL(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mem")
	opts := engine.Options{Log: segment.Options{ReserveBytes: -1}}
	ctx := context.Background()
	recs := corpus()
	for i := 0; i < 2; i++ {
		db, err := engine.Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		batch := recs[:4]
		if i == 1 {
			batch = nil
			for j := 0; j < 60; j++ {
				r := recs[4+j%4]
				r.Text = fmt.Sprintf("%s (%d) %s", r.Text, j, strings.Repeat("padding ", 150))
				batch = append(batch, r)
			}
		}
		for _, r := range batch {
			if _, err := db.Append(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	wals, _ := filepath.Glob(filepath.Join(dir, "log", "*.log"))
	if len(wals) == 0 {
		t.Fatal("no WAL")
	}
	sort.Strings(wals)
	newest := wals[len(wals)-1]
	b, err := os.ReadFile(newest)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(b) / 2; i < len(b)/2+8; i++ {
		b[i] ^= 0x5a
	}
	if err := os.WriteFile(newest, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := engine.Verify(dir, engine.VerifyOptions{Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Damage) != 1 || rep.Damage[0].Kind != "log" {
		t.Fatalf("verify of a log with a damaged WAL: %+v", rep.Damage)
	}
	rr, err := engine.Repair(dir, engine.VerifyOptions{Options: opts})
	if err != nil {
		t.Fatalf("repair: %v\n%+v", err, rr)
	}
	if _, err := os.Stat(filepath.Join(rr.Quarantine, filepath.Base(newest))); err != nil {
		t.Fatalf("damaged WAL not in the quarantine: %v (moved %v)", err, rr.Moved)
	}
	if rr.After.Records < 4 || !rr.After.OK() {
		t.Fatalf("after repair: %+v", rr.After)
	}
	db, err := engine.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for id := uint64(1); id <= 4; id++ {
		if r, err := db.Get(ctx, id); err != nil || r.Text != recs[id-1].Text {
			t.Fatalf("record %d of the first session: %v", id, err)
		}
	}
}
