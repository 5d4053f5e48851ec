package segment

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestWarmIndexes: after Open, the index block of every table holding
// segments is in Pebble's block cache (warmIndexes), so a new process's
// first read of a segment loads at most its data block: one block cache
// miss, not two.
func TestWarmIndexes(t *testing.T) {
	fs := vfs.NewMem()
	opts := Options{SegmentRecords: 64, DisableBackgroundSeal: true, CacheBytes: 1}
	l := openMem(t, fs, opts)
	r := rand.New(rand.NewPCG(5, 6))
	var recs [][]byte
	for range 4000 {
		recs = append(recs, chatRecord(r, 200+r.IntN(400)))
	}
	for lo := 0; lo < len(recs); lo += 500 {
		if _, err := l.AppendBatch(context.Background(), recs[lo:lo+500]); err != nil {
			t.Fatal(err)
		}
		if err := l.Seal(); err != nil {
			t.Fatal(err)
		}
	}
	// Compacted to the last level before the reopen: a compaction
	// running after it would write tables the warm-up did not see.
	if err := l.db.Compact(context.Background(), []byte{0}, []byte{0xff}, true); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openMem(t, fs, opts)
	defer l.Close()
	tables := 0
	levels, err := l.db.SSTables()
	if err != nil {
		t.Fatal(err)
	}
	for _, level := range levels {
		tables += len(level)
	}
	if tables == 0 {
		t.Fatal("no sstable")
	}
	// One record in the middle of each batch of 500: segments other than
	// their table's first, whose data block the warm-up did not load; the
	// first read of a table would load its index block too without it.
	for lo := 250; lo < len(recs); lo += 500 {
		before := l.db.Metrics().BlockCache.Misses
		p := mustGet(t, l, uint64(lo+1))
		if string(p) != string(recs[lo]) {
			t.Fatalf("record %d read back wrong", lo+1)
		}
		if d := l.db.Metrics().BlockCache.Misses - before; d > 1 {
			t.Fatalf("record %d: %d block cache misses, want at most 1 (its data block)", lo+1, d)
		}
	}
}
