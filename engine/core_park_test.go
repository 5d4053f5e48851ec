package engine

import (
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/lazymem/lazymem/internal/faultfs"
)

// TestCoreParkedDuringClose: a flush of the core store is parked by the
// logger (its MANIFEST sync fails) while the store's close waits in
// Pebble's Close for that flush. close returns the parked report instead
// of waiting for good (segment.ParkGuard). Without the guard, close
// checked for a parked goroutine first and then waited forever. It runs
// in a child process: the parked goroutine outlives the test.
func TestCoreParkedDuringClose(t *testing.T) {
	if !faultfs.Child(t) {
		return
	}
	hold := faultfs.NewManifestSyncHold()
	db, err := Open("db", Options{FS: errorfs.Wrap(vfs.NewMem(), hold)})
	if err != nil {
		t.Fatal(err)
	}
	cs := db.core
	if err := cs.pdb.Set(metaKey("park-test"), []byte("x"), pebble.NoSync); err != nil {
		t.Fatal(err)
	}
	if err := db.Stopped(); err != nil {
		t.Fatalf("Stopped before any park: %v", err)
	}
	closeWhileParked(t, hold, cs.pdb, func(f func()) { cs.beforeClose = f }, cs.close, db.Stopped)
}
