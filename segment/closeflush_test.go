package segment

import (
	"bytes"
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
// a reopen. The seal's value is below one WAL block (its bytes wait for
// the next sync or the rotation) or spans several (written at once, the
// writer keeps the error). In a child process: a regression panics.
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
