package engine

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/lazymem/lazymem/segment"
)

// TestCoreParkedDuringClose: a flush of the core store is parked by the
// logger (its MANIFEST sync fails) while the store's close waits in
// Pebble's Close for that flush. close returns the parked report instead
// of waiting for good (segment.ParkGuard). Without the guard, close
// checked for a parked goroutine first and then waited forever. It runs
// in a child process: the parked goroutine outlives the test.
func TestCoreParkedDuringClose(t *testing.T) {
	if os.Getenv("LAZYMEM_PARK_CHILD") != t.Name() {
		runParkChild(t)
		return
	}
	hold := &manifestSyncHold{reached: make(chan struct{}), release: make(chan struct{})}
	db, err := Open("db", Options{FS: errorfs.Wrap(vfs.NewMem(), hold)})
	if err != nil {
		t.Fatal(err)
	}
	cs := db.core
	if err := cs.pdb.Set(metaKey("park-test"), []byte("x"), pebble.NoSync); err != nil {
		t.Fatal(err)
	}
	hold.armed.Store(true)
	if _, err := cs.pdb.AsyncFlush(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hold.reached:
	case <-time.After(time.Minute):
		t.Fatal("the flush did not reach the MANIFEST sync")
	}
	cs.beforeClose = func() { close(hold.release) }
	done := make(chan struct{})
	go func() { defer close(done); err = cs.close() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("close with a flush parked meanwhile hung")
	}
	if !segment.Parked(err) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("close: %v, want the parked report", err)
	}
	if !t.Failed() {
		fmt.Println(parkChildOK)
		os.Exit(0) // before TestMain's goroutine-leak check: the parked goroutine stays
	}
}
