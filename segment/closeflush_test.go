package segment

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/lazymem/lazymem/internal/faultfs"
)

// walWriteFault fails every write and sync of a WAL file once armed.
type walWriteFault struct{ armed atomic.Bool }

func (f *walWriteFault) MaybeError(op errorfs.Op) error {
	if !f.armed.Load() || !strings.HasSuffix(op.Path, ".log") {
		return nil
	}
	switch op.Kind {
	case errorfs.OpFileWrite, errorfs.OpFileWriteAt, errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo:
		return &os.PathError{Op: "injected", Path: op.Path, Err: syscall.EIO}
	}
	return nil
}

func (f *walWriteFault) String() string { return "every WAL write and sync fails" }

// TestCloseAfterFailedWrite: a seal commits without sync (below a quarter
// of the 8 MiB space reserve, see commitLocked), so its bytes
// wait in Pebble's WAL writer, and their write fails with nobody told
// (the seal succeeded). Close must not flush then: the flush's WAL
// rotation would meet the error and Pebble panic (rotateWAL), killing the
// process. Close returns, and every acknowledged record reads back after
// a reopen. With 200-byte records the seal's value spans many WAL blocks,
// which Pebble's flusher writes after the seal's commit returned: an
// append is tried first then (commitAfterFailedWrite). In a child
// process: a regression panics.
func TestCloseAfterFailedWrite(t *testing.T) {
	if !faultfs.Child(t) {
		return
	}
	for _, size := range []int{200, 20000} { // payload bytes: one block or several
		mem := vfs.NewMem()
		inj := &walWriteFault{}
		opts := Options{FS: errorfs.Wrap(mem, inj), SegmentRecords: 4096, SegmentBytes: 16 << 20,
			MemTableBytes: 4 << 20, DisableBackgroundSeal: true}
		l, err := Open("db", opts)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(7, uint64(size)))
		acked := map[uint64][]byte{}
		var appended int
		appendUntil := func(bytes int, wal uint64) {
			for appended < bytes || walBytes(t, l) < wal {
				batch := make([][]byte, 1+4000/size)
				for i := range batch {
					batch[i] = make([]byte, size)
					for j := range batch[i] {
						batch[i][j] = 'a' + byte(r.IntN(26)) // incompressible enough: the seal spans blocks
					}
				}
				first, err := l.AppendBatch(ctx, batch)
				if err != nil {
					t.Fatal(err)
				}
				for i, p := range batch {
					acked[first+uint64(i)] = p
					appended += len(p)
				}
			}
		}
		// Memtables start at 256 KiB and double up to MemTableBytes: past
		// 8 MiB of appends and a flush, the memtable is a whole 4 MiB,
		// and neither the appends up to Close's threshold nor the seal
		// rotate it (a rotation inside a commit that meets the failed
		// write panics as well: TestFaultInjectionFlushes).
		appendUntil(8<<20, 0)
		if err := l.Seal(); err != nil {
			t.Fatal(err)
		}
		if err := l.db.Flush(); err != nil {
			t.Fatal(err)
		}
		appendUntil(0, l.opts.MemTableBytes/closeFlushMin)
		inj.armed.Store(true)
		if err := l.Seal(); err != nil {
			t.Logf("size %d: seal: %v", size, err) // the write may fail in the seal's commit
		}
		if size == 200 {
			commitAfterFailedWrite(t, l)
		}
		within(t, 30*time.Second, "Close after a failed WAL write", func() { err = l.Close() })
		t.Logf("size %d: %d records; Close: %v", size, len(acked), err)
		opts.FS = mem
		l, err = Open("db", opts)
		if err != nil {
			t.Fatalf("size %d: reopen: %v", size, err)
		}
		for id, p := range acked {
			got, err := l.Get(id, nil)
			if err != nil || !bytes.Equal(got, p) {
				t.Errorf("size %d: acknowledged id %d: %v", size, id, err)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	faultfs.Done(t)
}

// walBytes is the bytes the log committed into live WAL files.
func walBytes(t *testing.T, l *Log) uint64 {
	t.Helper()
	return l.wal.total()
}

// commitAfterFailedWrite appends once the seal's WAL bytes, written by
// Pebble's flusher after the seal returned, have failed: Pebble's WAL
// writer keeps the error and would panic in commitWrite on the commit, so
// the log must refuse it with ErrFailed. Whether the flusher has written
// them within two seconds depends on Pebble's batching (a large seal can
// go to a flushable batch instead); the refusal itself is tested
// deterministically by TestCommitRefusedAfterWALFailure.
func commitAfterFailedWrite(t *testing.T, l *Log) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); l.walErr.Load() == nil; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Log("the seal's WAL bytes were not written within 2 s: no append tried")
			return
		}
	}
	if _, err := l.AppendBatch(ctx, [][]byte{[]byte("after the failure")}); !errors.Is(err, ErrFailed) {
		t.Fatalf("append after a failed WAL write: %v, want ErrFailed", err)
	}
}

// TestCommitRefusedAfterWALFailure: once a write of the WAL is noted as
// failed, every commit is refused before it reaches Pebble (whose WAL
// writer would panic on it): appends fail with ErrFailed naming the
// write, a full disk's failure is ErrDiskFull (so the next append
// reopens once space returns), acknowledged records read back after a
// reopen, and the reopened log appends again.
func TestCommitRefusedAfterWALFailure(t *testing.T) {
	mem := vfs.NewMem()
	opts := Options{FS: mem, DisableBackgroundSeal: true}
	l, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	first, err := l.AppendBatch(ctx, [][]byte{[]byte("one"), []byte("two")})
	if err != nil {
		t.Fatal(err)
	}
	var eio error = &os.PathError{Op: "write", Path: "db/000002.log", Err: syscall.EIO}
	l.walErr.Store(&eio)
	if _, err := l.AppendBatch(ctx, [][]byte{[]byte("three")}); !errors.Is(err, ErrFailed) || !errors.Is(err, syscall.EIO) {
		t.Fatalf("append after a failed WAL write: %v, want ErrFailed wrapping EIO", err)
	}
	var full error = &os.PathError{Op: "write", Path: "db/000002.log", Err: syscall.ENOSPC}
	l.walErr.Store(&full)
	if err := l.walFailure(); !errors.Is(err, ErrDiskFull) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a full disk's WAL failure: %v, want ErrDiskFull wrapping ENOSPC", err)
	}
	if err := l.Close(); err != nil {
		t.Logf("Close: %v", err)
	}
	if l, err = Open("db", opts); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"one", "two"} {
		if got, err := l.Get(first+uint64(i), nil); err != nil || string(got) != want {
			t.Errorf("id %d: %q, %v; want %q", first+uint64(i), got, err, want)
		}
	}
	if _, err := l.AppendBatch(ctx, [][]byte{[]byte("three")}); err != nil {
		t.Fatalf("append after the reopen: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}
