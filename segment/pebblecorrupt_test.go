package segment

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// bigPayload is large enough that every sealed segment of 10 records is
// bigger than a Pebble data block (4 KiB): a damaged block then holds one
// segment value.
func bigPayload(i int) []byte {
	p := fmt.Appendf(nil, "record %d:", i)
	for len(p) < 600 {
		p = fmt.Appendf(p, " %d-%d", i, len(p))
	}
	return p
}

// pebbleFiles lists dir's files whose names end with suffix, largest first.
func pebbleFiles(t *testing.T, dir, suffix string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	size := map[string]int64{}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), suffix) {
			fi, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, e.Name())
			out = append(out, p)
			size[p] = fi.Size()
		}
	}
	sort.Slice(out, func(i, j int) bool { return size[out[i]] > size[out[j]] })
	return out
}

func flipMiddle(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mid := len(b) / 2
	for i := mid; i < mid+8 && i < len(b); i++ {
		b[i] ^= 0xa5
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPebbleBlockCorruption damages a data block in the middle of a real
// sstable of the log and reads every record in this process: Pebble's
// default logger would end the process from its corruption report. The
// records of the damaged block read as *CorruptionError, every other record
// reads back, and the metrics count what was seen.
func TestPebbleBlockCorruption(t *testing.T) {
	dir := t.TempDir()
	opts := Options{FS: vfs.Default, SegmentRecords: 10, NoCompression: true, DisableBackgroundSeal: true, ReserveBytes: -1}
	l, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	var batch [][]byte
	for i := 0; i < n; i++ {
		batch = append(batch, bigPayload(i))
	}
	if _, err := l.AppendBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if err := l.Seal(); err != nil {
		t.Fatal(err)
	}
	if err := l.db.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	ssts := pebbleFiles(t, dir, ".sst")
	if len(ssts) == 0 {
		t.Fatal("no sstable written")
	}
	flipMiddle(t, ssts[0])

	l, err = Open(dir, opts)
	if err != nil {
		t.Fatalf("open with a damaged data block: %v", err)
	}
	defer l.Close()
	damaged := map[uint64]bool{}
	for id := uint64(1); id <= n; id++ {
		got, err := l.Get(id, nil)
		var ce *CorruptionError
		switch {
		case errors.As(err, &ce):
			if ce.Segment > id || id >= ce.Segment+10 {
				t.Fatalf("id %d: corruption names segment %d", id, ce.Segment)
			}
			damaged[ce.Segment] = true
		case err != nil:
			t.Fatalf("id %d: %v", id, err)
		case !bytes.Equal(got, bigPayload(int(id-1))):
			t.Fatalf("id %d: wrong payload", id)
		}
	}
	if len(damaged) != 1 {
		t.Fatalf("damaged segments %v: want exactly the one in the damaged block", damaged)
	}
	m := l.Metrics()
	if m.Corruptions < 10 || m.PebbleCorruptions == 0 {
		t.Fatalf("metrics: %d corruptions, %d pebble reports", m.Corruptions, m.PebbleCorruptions)
	}
	// Scan stops at the damage with the same error; Verify names it.
	if err := l.Scan(1, n+1, func(uint64, []byte) error { return nil }); !IsCorruption(err) {
		t.Fatalf("scan: %v", err)
	}
	var ce *CorruptionError
	if err := l.Verify(ctx); !errors.As(err, &ce) || !damaged[ce.Segment] {
		t.Fatalf("verify: %v", err)
	}
	// Appends go on beside the damage.
	id, err := l.Append(ctx, []byte("after"))
	if err != nil || id != n+1 {
		t.Fatalf("append: %d %v", id, err)
	}
	// Repair replaces the damaged segment; its records read as deleted.
	if _, err := l.Repair(ctx, ce); err != nil {
		t.Fatalf("repair: %v", err)
	}
	if _, err := l.Get(ce.Segment, nil); !errors.Is(err, ErrDeleted) {
		t.Fatalf("repaired record: %v", err)
	}
	// Repair shadows the damaged segment; its block stays in the sstable.
	// A compaction reading it fails (Pebble would retry it for good:
	// Compact hung): Compact returns the corruption instead.
	if err := l.Compact(ctx); !IsCorruption(err) {
		t.Fatalf("compact over the damaged block: %v, want a *CorruptionError", err)
	}
	if _, err := l.Append(ctx, []byte("after compact")); err != nil {
		t.Fatalf("append after the failed compact: %v", err)
	}
}

// TestPebbleWALCorruption damages the middle of the newest WAL of a log
// whose records were never flushed. With WAL sync chunks (the log's Pebble
// format) replay knows the damaged record lies inside the synced part:
// Open returns a *CorruptionError, in this process (no exit), instead of
// stopping the replay there as at a torn tail and silently dropping every
// later acknowledged record. (The WAL a new store's first Open creates
// predates the format upgrade; the store is opened once before.)
func TestPebbleWALCorruption(t *testing.T) {
	dir := t.TempDir()
	opts := Options{FS: vfs.Default, SegmentRecords: 10, NoCompression: true, DisableBackgroundSeal: true, ReserveBytes: -1}
	for i := 0; i < 2; i++ {
		l, err := Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; i == 1 && j < 100; j++ {
			if _, err := l.Append(ctx, bigPayload(j)); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	wals := pebbleFiles(t, dir, ".log")
	if len(wals) == 0 {
		t.Fatal("no WAL")
	}
	flipMiddle(t, wals[0])
	l, err := Open(dir, opts)
	if err == nil {
		l.Close()
		t.Fatalf("open after WAL damage succeeded with %d of 100 records", l.Next()-1)
	}
	var ce *CorruptionError
	if !errors.As(err, &ce) || ce.Segment != 0 {
		t.Fatalf("open with a damaged WAL: want *CorruptionError naming no segment, got %v", err)
	}
}
