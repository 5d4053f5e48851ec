package segment

import (
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// allocated is the sum of the blocks allocated to the files under dir
// whose names end in suffix ("" for all), as du counts them: preallocated
// extents count, file lengths do not.
func allocated(t *testing.T, dir, suffix string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, suffix) {
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			return err
		}
		n += st.Blocks * 512
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSizeOnDiskAfterClose writes a few MB on the real filesystem and
// checks the blocks left allocated after Close: WAL files are not
// preallocated (Pebble's 110% of MemTableSize each), so they hold their
// bytes only (before: 60,000 records left 423 MB allocated in six WAL
// files), and Close flushes a WAL that holds a quarter of a memtable or
// more (closeflush.go), so the WAL files are left empty but for a block
// (before: up to a memtable of records, raw).
func TestSizeOnDiskAfterClose(t *testing.T) {
	dir := t.TempDir()
	// No space reserve: it is 8 MiB preallocated on purpose (ReserveBytes).
	// A 16 MiB memtable: the ~5 MB of WAL the appends write are all there
	// at Close, past the quarter of a memtable that makes Close flush.
	l, err := Open(filepath.Join(dir, "log"), Options{ReserveBytes: -1, MemTableBytes: 16 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var raw int64
	batch := make([][]byte, 0, 1000)
	for i := 0; i < 60000; i++ {
		p := payload(i)
		raw += int64(len(p))
		batch = append(batch, p)
		if len(batch) == cap(batch) {
			if _, err := l.AppendBatch(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	wal := l.wal.total()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got, walGot := allocated(t, dir, ""), allocated(t, dir, ".log")
	// Bound: the raw payloads once (segments compress them; an sstable
	// may still hold tail records a flush caught before their seal) plus
	// 1 MiB of fixed files.
	if limit := raw + 1<<20; got > limit {
		t.Errorf("%d bytes allocated after Close for %d bytes of payload; want at most %d", got, raw, limit)
	}
	if wal < l.opts.MemTableBytes/closeFlushMin {
		t.Fatalf("the WAL held %d bytes before Close, less than Close flushes: the test checks nothing", wal)
	}
	if walGot > 64<<10 {
		t.Errorf("the WAL held %d bytes before Close, its files %d bytes allocated after it: not flushed", wal, walGot)
	}
	t.Logf("%d payload bytes, %d bytes allocated after Close, %d of them in WAL files (%d WAL bytes before Close)", raw, got, walGot, wal)
}
