package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/lazymem/lazymem/engine/embed"
	"github.com/lazymem/lazymem/internal/faultfs"
	"github.com/lazymem/lazymem/segment"
)

// failLogManifest fails every write and sync of the log's MANIFEST files.
type failLogManifest struct{}

func (failLogManifest) MaybeError(op errorfs.Op) error {
	if !strings.Contains(op.Path, "log/MANIFEST") {
		return nil
	}
	switch op.Kind {
	case errorfs.OpCreate, errorfs.OpFileWrite, errorfs.OpFileWriteAt, errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo:
		return &os.PathError{Op: "injected", Path: op.Path, Err: syscall.EIO}
	}
	return nil
}

func (failLogManifest) String() string { return "the log's MANIFEST writes fail" }

// TestOpenStuckLogFlush: a store whose log holds records in its WAL (a
// crash) opened on a disk failing the log's MANIFEST writes. Open returns
// an error wrapping segment.ErrStopped and the cause, naming the
// MANIFEST, within its bound (it hung before: segment's
// TestOpenStuckFlush); the crash image reopened on a healthy disk holds
// every record. A child process: the abandoned Open stays parked.
func TestOpenStuckLogFlush(t *testing.T) {
	if !faultfs.Child(t) {
		return
	}
	mem := vfs.NewCrashableMem()
	db, err := Open("db", Options{FS: mem})
	if err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for i := range 20 {
		id, err := db.Append(context.Background(), Record{Agent: "a", Text: fmt.Sprintf("record %d about the stuck open", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	img := mem.CrashClone(vfs.CrashCloneCfg{})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	openFailsStopped(t, Options{FS: errorfs.Wrap(img, failLogManifest{})})
	db, err = Open("db", Options{FS: img.CrashClone(vfs.CrashCloneCfg{})})
	if err != nil {
		t.Fatalf("reopen on a healthy disk: %v", err)
	}
	defer db.Close()
	for _, id := range ids {
		if _, err := db.Get(context.Background(), id); err != nil {
			t.Errorf("record %d after the reopen: %v", id, err)
		}
	}
	faultfs.Done(t)
}

// openFailsStopped opens the store "db" with opts on a disk whose MANIFEST
// writes fail and fails t unless Open returns within 20 s an error wrapping
// segment.ErrStopped and EIO that names the MANIFEST. The Open runs on a
// goroutine: one that hangs stays parked (the tests run in child processes).
func openFailsStopped(t *testing.T, opts Options) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		db, err := Open("db", opts)
		if err == nil {
			db.Close()
		}
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Open hung (no return after 20s)")
	}
	if !errors.Is(err, segment.ErrStopped) || !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "MANIFEST") {
		t.Fatalf("Open: %v, want an error wrapping segment.ErrStopped and EIO, naming the MANIFEST", err)
	}
	t.Logf("Open: %v", err)
}

// failManifestOf fails every write and sync of the MANIFEST files under
// one of the store's directories.
type failManifestOf string

func (d failManifestOf) MaybeError(op errorfs.Op) error {
	return failManifest(op, string(d)+"/MANIFEST")
}

func (d failManifestOf) String() string { return "the MANIFEST writes of " + string(d) + " fail" }

// failManifest fails op with EIO when it writes or syncs a file whose path
// contains marker.
func failManifest(op errorfs.Op, marker string) error {
	if !strings.Contains(op.Path, marker) {
		return nil
	}
	switch op.Kind {
	case errorfs.OpCreate, errorfs.OpFileWrite, errorfs.OpFileWriteAt, errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo:
		return &os.PathError{Op: "injected", Path: op.Path, Err: syscall.EIO}
	}
	return nil
}

// TestOpenStuckCoreFlush and TestOpenStuckCacheFlush: the engine's core
// store and the embedding cache's disk tier replay their WAL at Open as
// the log does; opened on a disk failing their MANIFEST writes with
// entries in the WAL (a crash), Open returns an error wrapping
// segment.ErrStopped and the cause within its bound (pebble.Open alone
// would retry the flush for good); the image reopened on a healthy disk
// holds the entries. Child processes: the abandoned Open stays parked.
func TestOpenStuckCoreFlush(t *testing.T) {
	if !faultfs.Child(t) {
		return
	}
	openStuckStore(t, "core", func(db *DB) *pebble.DB { return db.core.pdb })
	faultfs.Done(t)
}

func TestOpenStuckCacheFlush(t *testing.T) {
	if !faultfs.Child(t) {
		return
	}
	openStuckStore(t, "cache", func(db *DB) *pebble.DB { return db.cache.disk })
	faultfs.Done(t)
}

func openStuckStore(t *testing.T, sub string, store func(*DB) *pebble.DB) {
	h, err := embed.NewHash(embed.HashOptions{Dim: 32})
	if err != nil {
		t.Fatal(err)
	}
	mem := vfs.NewCrashableMem()
	db, err := Open("db", Options{FS: mem, Embedder: h})
	if err != nil {
		t.Fatal(err)
	}
	pdb := store(db)
	if pdb == nil {
		t.Fatalf("no %s store", sub)
	}
	// Entries in the WAL, synced, not flushed: what a crash leaves.
	for i := range 20 {
		if err := pdb.Set(fmt.Appendf(nil, "zz-openstuck-%02d", i), []byte("x"), pebble.Sync); err != nil {
			t.Fatal(err)
		}
	}
	img := mem.CrashClone(vfs.CrashCloneCfg{})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	openFailsStopped(t, Options{FS: errorfs.Wrap(img, failManifestOf("db/"+sub)), Embedder: h})
	db, err = Open("db", Options{FS: img.CrashClone(vfs.CrashCloneCfg{}), Embedder: h})
	if err != nil {
		t.Fatalf("reopen on a healthy disk: %v", err)
	}
	defer db.Close()
	for i := range 20 {
		if _, closer, err := store(db).Get(fmt.Appendf(nil, "zz-openstuck-%02d", i)); err != nil {
			t.Errorf("entry %d after the reopen: %v", i, err)
		} else {
			closer.Close()
		}
	}
}
