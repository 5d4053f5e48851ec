package engine

import (
	"context"
	"errors"
	"fmt"
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

// TestCacheParkedDuringClose: a flush of the embedding cache's disk tier
// is parked by the logger after close checked for a parked goroutine and
// while Pebble's Close waits for that flush. close returns the parked
// report instead of waiting for good (segment.ParkGuard). It runs in a
// child process: the parked goroutine outlives the test.
func TestCacheParkedDuringClose(t *testing.T) {
	if !faultfs.Child(t) {
		return
	}
	hold := faultfs.NewManifestSyncHold()
	emb, err := embed.NewHash(embed.HashOptions{Dim: 32})
	if err != nil {
		t.Fatal(err)
	}
	c, err := newVecCache(cacheConfig{fs: errorfs.Wrap(vfs.NewMem(), hold), dir: "cache", emb: emb, memBytes: 1 << 20, timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, 20)
	ns := make([]string, len(texts))
	for i := range texts {
		texts[i], ns[i] = fmt.Sprintf("text %d about the deploy of service %d", i, i%7), "a"
	}
	if _, _, err := c.get(context.Background(), ns, texts, nil); err != nil {
		t.Fatal(err)
	}
	closeWhileParked(t, hold, c.disk, func(f func()) { c.beforeClose = f }, c.close, nil)
}

// closeWhileParked starts a flush of pdb that reaches hold's MANIFEST
// sync, then runs closeStore with the sync released just before Pebble's
// Close (setHook installs the store's beforeClose): the flush is parked
// while Close waits for it. closeStore must return the parked report, not
// hang. On success the child process exits at once: the parked
// goroutine stays. stopped, if not nil, must then return the parked
// report (the store's own account of it, as a readiness probe reads it).
func closeWhileParked(t *testing.T, hold *faultfs.ManifestSyncHold, pdb *pebble.DB, setHook func(func()), closeStore func() error, stopped func() error) {
	t.Helper()
	hold.Armed.Store(true)
	if _, err := pdb.AsyncFlush(); err != nil {
		t.Fatal(err)
	}
	hold.WaitReached(t)
	setHook(func() { close(hold.Release) })
	var err error
	done := make(chan struct{})
	go func() { defer close(done); err = closeStore() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("close with a flush parked meanwhile hung")
	}
	if !segment.Parked(err) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("close: %v, want the parked report", err)
	}
	if stopped != nil {
		if err := stopped(); !segment.Parked(err) || !errors.Is(err, segment.ErrStopped) {
			t.Fatalf("Stopped after the park: %v, want the parked report", err)
		}
	}
	faultfs.Done(t)
}
