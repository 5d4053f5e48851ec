package segment

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// faultKind is a class of injected failure: which operations it counts and
// the error the chosen one returns.
type faultKind struct {
	name  string
	match func(errorfs.OpKind) bool
	err   syscall.Errno
}

func isWriteOp(k errorfs.OpKind) bool {
	switch k {
	case errorfs.OpCreate, errorfs.OpLink, errorfs.OpReuseForWrite, errorfs.OpFilePreallocate,
		errorfs.OpFileWrite, errorfs.OpFileWriteAt, errorfs.OpRename, errorfs.OpMkdirAll:
		return true
	}
	return false
}

func isSyncOp(k errorfs.OpKind) bool {
	switch k {
	case errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo, errorfs.OpFileFlush:
		return true
	}
	return false
}

// opNames names errorfs's operation kinds for a child's note.
var opNames = map[errorfs.OpKind]string{
	errorfs.OpCreate: "create", errorfs.OpLink: "link", errorfs.OpRename: "rename",
	errorfs.OpReuseForWrite: "reuse", errorfs.OpMkdirAll: "mkdir", errorfs.OpFilePreallocate: "preallocate",
	errorfs.OpFileWrite: "write", errorfs.OpFileWriteAt: "writeat", errorfs.OpFileSync: "sync",
	errorfs.OpFileSyncData: "syncdata", errorfs.OpFileSyncTo: "syncto", errorfs.OpFileFlush: "flush",
}

var faultKinds = []faultKind{
	{"write", isWriteOp, syscall.EIO},
	{"sync", isSyncOp, syscall.EIO},
	{"enospc", func(k errorfs.OpKind) bool { return isWriteOp(k) || isSyncOp(k) }, syscall.ENOSPC},
}

// faultAt fails the k-th operation (0-based) that kind matches, once; k < 0
// never fails and only counts. A path, if set, limits it to the operations
// on files whose path holds it.
type faultAt struct {
	kind faultKind
	k    int64
	path string
	n    atomic.Int64
	hit  atomic.Bool
	// note, if set, is told which operation failed (a child process of
	// TestFaultInjectionFlushes writes it to stderr, which the parent
	// shows when the child hangs or fails).
	note func(op errorfs.Op)
}

func (f *faultAt) MaybeError(op errorfs.Op) error {
	if !f.kind.match(op.Kind) || !strings.Contains(op.Path, f.path) {
		return nil
	}
	if f.n.Add(1)-1 == f.k {
		f.hit.Store(true)
		if f.note != nil {
			f.note(op)
		}
		return &os.PathError{Op: "injected", Path: op.Path, Err: f.kind.err}
	}
	return nil
}

func (f *faultAt) String() string { return fmt.Sprintf("%s at %d", f.kind.name, f.k) }

// TestFaultInjection runs a workload (open, appends, seals, a delete,
// close) over Pebble's errorfs, failing in turn every filesystem operation
// of a kind (write errors, sync errors, ENOSPC) once, at its index. Every
// append either succeeds durably or returns an error: after a crash image
// taken at the end (synced data only) and a reopen without faults, every
// acknowledged record reads back, every acknowledged deletion holds, the
// ids are dense and nothing appears that no one appended. The store always
// reopens.
//
// Points where Pebble v2.1.7 itself stops the process (Fatalf never exits
// with the log's QuietLogger, so these are panics):
//   - atomicfs.Marker.Move panics when the directory sync after moving a
//     marker fails (fsync errors are unrecoverable). This workload reaches
//     it in Open (the sync faults on the directory); Open's own cleanup
//     runs before the panic, and segment.Open turns it into an error: the
//     test then crashes and reopens, as after a restart. Reached from a
//     MANIFEST rotation in a background flush or compaction, it stops the
//     process, like a crash.
//   - rotateWAL panics when the memtable rotates inside a commit and the
//     new WAL cannot be created or the old one closed; this workload's
//     memtable never rotates (TestFaultInjectionFlushes, in child
//     processes, covers it).
//   - after a failed MANIFEST write or sync in a flush or compaction,
//     QuietLogger parks Pebble's goroutine (see its doc).
//
// After Pebble's fatal reports (a failed WAL write or sync, a failed
// MANIFEST write) the log takes no more writes (ErrFailed until reopened;
// a full disk reopens Pebble in place), so nothing is acknowledged that
// Pebble did not sync.
func TestFaultInjection(t *testing.T) {
	for _, kind := range faultKinds {
		t.Run(kind.name, func(t *testing.T) {
			count := &faultAt{kind: kind, k: -1}
			faultRun(t, count) // a clean run: how many operations to fail
			n := count.n.Load()
			if n < 20 {
				t.Fatalf("only %d %s operations in the workload", n, kind.name)
			}
			hits := 0
			for k := int64(0); k < n; k++ {
				f := &faultAt{kind: kind, k: k}
				faultRun(t, f)
				if f.hit.Load() {
					hits++
				}
				if t.Failed() {
					t.Fatalf("failing %s", f)
				}
			}
			t.Logf("%s: %d operations, each failed once", kind.name, hits)
		})
	}
}

func faultRun(t *testing.T, inj *faultAt) {
	mem := vfs.NewCrashableMem()
	fs := errorfs.Wrap(mem, inj)
	opts := Options{FS: fs, SegmentRecords: 8, DisableBackgroundSeal: true, ReserveBytes: 4 << 10}
	acked := map[uint64][]byte{}
	attempted := map[string]bool{}
	deleted := map[uint64]bool{}     // deletions acknowledged
	deleteTried := map[uint64]bool{} // deletions attempted (a failed one may or may not hold)
	var crashed *vfs.MemFS
	func() {
		l, err := Open("db", opts)
		if err != nil {
			crashed = mem.CrashClone(vfs.CrashCloneCfg{})
			return
		}
		defer func() {
			crashed = mem.CrashClone(vfs.CrashCloneCfg{}) // the crash: before Close
			_ = l.Close()
		}()
		for i := 0; i < 12; i++ {
			batch := make([][]byte, 1+i%4)
			for j := range batch {
				batch[j] = fmt.Appendf(nil, "r%d-%d %s", i, j, bytes.Repeat([]byte{'a' + byte(i)}, 50+10*j))
				attempted[string(batch[j])] = true
			}
			first, err := l.AppendBatch(ctx, batch)
			if err != nil {
				if !errors.Is(err, ErrFailed) && !errors.Is(err, ErrDiskFull) && !errors.Is(err, syscall.EIO) {
					t.Errorf("%s: append error of an unexpected kind: %v", inj, err)
				}
				continue
			}
			for j, p := range batch {
				acked[first+uint64(j)] = p
			}
			if i == 5 || i == 9 {
				_ = l.Seal() // may fail; the records stay in the tail
			}
			if i == 7 {
				deleteTried[2], deleteTried[first] = true, true
				if err := l.Delete(ctx, []uint64{2, first}); err == nil {
					deleted[2], deleted[first] = true, true
				}
			}
		}
	}()

	l, err := Open("db", Options{FS: crashed, SegmentRecords: 8, DisableBackgroundSeal: true, ReserveBytes: 4 << 10})
	if err != nil {
		t.Errorf("%s: reopen after crash: %v", inj, err)
		return
	}
	defer l.Close()
	next := l.Next()
	for id, p := range acked {
		got, err := l.Get(id, nil)
		switch {
		case deleted[id]:
			if !errors.Is(err, ErrDeleted) {
				t.Errorf("%s: id %d deleted and acknowledged: %v", inj, id, err)
			}
		case deleteTried[id] && errors.Is(err, ErrDeleted):
		case err != nil:
			t.Errorf("%s: acknowledged id %d: %v (ids end at %d)", inj, id, err, next-1)
		case !bytes.Equal(got, p):
			t.Errorf("%s: acknowledged id %d: wrong payload", inj, id)
		}
	}
	count := uint64(0)
	err = l.Scan(1, next, func(id uint64, p []byte) error {
		count++
		if !attempted[string(p)] {
			return fmt.Errorf("id %d holds a payload nobody appended", id)
		}
		return nil
	})
	if err != nil {
		t.Errorf("%s: scan after crash: %v", inj, err)
	}
	var dead uint64
	for id := uint64(1); id < next; id++ {
		if _, err := l.Get(id, nil); errors.Is(err, ErrDeleted) {
			if !deleteTried[id] {
				t.Errorf("%s: id %d reads deleted; no one deleted it", inj, id)
			}
			dead++
		}
	}
	if count+dead != next-1 {
		t.Errorf("%s: %d live + %d deleted records, ids run to %d: not dense", inj, count, dead, next-1)
	}
	if _, err := l.Append(ctx, []byte("after")); err != nil {
		t.Errorf("%s: append after reopen: %v", inj, err)
	}
}
