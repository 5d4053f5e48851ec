package segment

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/lazymem/lazymem/internal/faultfs"
)

// failFiles fails every operation of a kind on the files whose path holds
// path, for good: a disk whose MANIFEST (or sstable) writes always fail.
type failFiles struct {
	path string
	kind faultKind
}

func (f failFiles) MaybeError(op errorfs.Op) error {
	if strings.Contains(op.Path, f.path) && f.kind.match(op.Kind) {
		return &os.PathError{Op: "injected", Path: op.Path, Err: f.kind.err}
	}
	return nil
}

func (f failFiles) String() string { return f.kind.name + " on " + f.path }

// TestOpenStuckFlush: a log left with records in its WAL (a crash, or a
// Close that did not flush) opens on a disk that fails every MANIFEST
// write, every MANIFEST sync, or every sstable write. Pebble's Open
// replays the WAL and waits for its flush, which can never record its
// result: before openstuck.go, Open hung there, retrying the flush without
// end (each subtest failed at its 20-second bound, "Open ... hung").
// Now Open returns an error naming the cause, wrapping ErrFailed and
// ErrStopped (the abandoned Open keeps the store locked until the process
// exits: the test runs in a child process), and the disk's crash image,
// reopened on a healthy filesystem, holds every acknowledged record.
func TestOpenStuckFlush(t *testing.T) {
	if !faultfs.Child(t) {
		return
	}
	mem := vfs.NewCrashableMem()
	opts := Options{SegmentRecords: 1000, DisableBackgroundSeal: true, ReserveBytes: 64 << 10}
	l := openMem(t, mem, opts)
	acked := map[uint64][]byte{}
	for i := range 30 {
		batch := [][]byte{payload(i), bytes.Repeat([]byte{'a' + byte(i%26)}, 200)}
		first, err := l.AppendBatch(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		for j, p := range batch {
			acked[first+uint64(j)] = p
		}
	}
	// The crash: the WAL is left to replay.
	img := mem.CrashClone(vfs.CrashCloneCfg{})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []failFiles{
		{"MANIFEST", faultKind{"write", isWriteOp, syscall.EIO}},
		{"MANIFEST", faultKind{"sync", isSyncOp, syscall.EIO}},
		{"MANIFEST", faultKind{"enospc", isWriteOp, syscall.ENOSPC}},
		{".sst", faultKind{"write", isWriteOp, syscall.EIO}},
	} {
		t.Run(f.String(), func(t *testing.T) {
			disk := img.CrashClone(vfs.CrashCloneCfg{})
			o := opts
			o.FS = errorfs.Wrap(disk, f)
			var err error
			within(t, 20*time.Second, "Open on "+f.String(), func() { _, err = Open("db", o) })
			if err == nil || !errors.Is(err, ErrStopped) || !errors.Is(err, ErrFailed) || !errors.Is(err, f.kind.err) {
				t.Fatalf("Open: %v, want an error wrapping ErrStopped, ErrFailed and %v", err, f.kind.err)
			}
			t.Logf("Open: %v", err)
			if f.path == "MANIFEST" && !strings.Contains(err.Error(), "MANIFEST") {
				t.Errorf("Open: %v, want the MANIFEST named", err)
			}
			// The disk as the failed Open left it, synced data only, on a
			// healthy filesystem: every acknowledged record is there.
			o.FS = disk.CrashClone(vfs.CrashCloneCfg{})
			l, err := Open("db", o)
			if err != nil {
				t.Fatalf("reopen on a healthy disk: %v", err)
			}
			defer l.Close()
			if got, want := l.Next(), uint64(len(acked)+1); got != want {
				t.Errorf("reopened: next id %d, want %d", got, want)
			}
			for id, p := range acked {
				if got, err := l.Get(id, nil); err != nil || !bytes.Equal(got, p) {
					t.Errorf("reopened: id %d: %q, %v", id, got, err)
				}
			}
			if _, err := l.Append(ctx, []byte(fmt.Sprintf("after %s", f))); err != nil {
				t.Errorf("append after the reopen: %v", err)
			}
		})
	}
	faultfs.Done(t)
}
