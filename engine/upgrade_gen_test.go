//go:build storegen

// The generator of the upgrade-test store (testdata/store-v1), built only
// with the storegen tag so that it is never a skipped test:
//
//	go test -tags storegen ./engine -run TestWriteStore -write-store=DIR

package engine

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/index"
	"github.com/lazymem/lazymem/segment"
)

var writeStore = flag.String("write-store", "", "write the upgrade-test store and its golden answers into `DIR` (TestWriteStore)")

// TestWriteStore writes the upgrade store and its golden answers when
// -write-store is given; it is a generator, not a check, and does nothing
// otherwise.
func TestWriteStore(t *testing.T) {
	if *writeStore == "" {
		t.Skip("generator: run with -write-store=DIR")
	}
	dir := filepath.Join(*writeStore, "store")
	if _, err := os.Stat(dir); err == nil {
		t.Fatalf("%s exists: refusing to overwrite a committed store", dir)
	}
	opts := storeOptions()
	// Sealed log segments and an unsealed tail; index segments flushed
	// explicitly.
	opts.Log = segment.Options{SegmentRecords: 8, DisableBackgroundSeal: true}
	opts.Index = index.Options{FlushDocs: -1, DisableBackgroundMerge: true}
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	batches := storeRecords()
	for i, b := range batches {
		if i == 0 {
			// One record alone, the rest as a batch: both append paths.
			if _, err := db.Append(ctx, b[0]); err != nil {
				t.Fatal(err)
			}
			b = b[1:]
		}
		if _, err := db.AppendBatch(ctx, b); err != nil {
			t.Fatal(err)
		}
		switch i {
		case 0:
			if err := db.idx.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := db.log.Seal(); err != nil {
				t.Fatal(err)
			}
			// Compact flushes Pebble: the sealed segments reach an sstable.
			if err := db.log.Compact(ctx); err != nil {
				t.Fatal(err)
			}
		case 1:
			if err := db.idx.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	q := storeQueries()[0]
	q.Now = storeClock
	if _, err := db.Recall(ctx, q); err != nil { // fills the embedding cache
		t.Fatal(err)
	}
	if err := db.cache.disk.Flush(); err != nil { // an sstable as well as the WAL
		t.Fatal(err)
	}
	if m := db.idx.Metrics(); m.Segments != 2 || m.MemDocs != uint64(len(batches[2])) {
		t.Fatalf("index: %d segments, %d in memory; want 2 and %d", m.Segments, m.MemDocs, len(batches[2]))
	}
	// Close without flushing the index: the store keeps an index that
	// lacks the last batch, as a crash leaves it.
	if err := db.cache.close(); err != nil {
		t.Fatal(err)
	}
	if err := db.idx.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.log.Close(); err != nil {
		t.Fatal(err)
	}
	db.closed = true

	// The golden answers are those of the store reopened (a copy: the
	// reopen writes).
	db = openCopy(t, dir, storeOptions())
	ans := storeAnswers(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, a := range ans {
		line, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(*writeStore, "answers.golden"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
