package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/lazymem/lazymem/engine/embed"
	"github.com/lazymem/lazymem/segment"
)

// manifestSyncHold holds the next MANIFEST sync, once armed, until
// released, then fails it with ENOSPC: the flush installing its sstable
// is then parked by the logger, holding Pebble's mutex and its flush.
type manifestSyncHold struct {
	armed            atomic.Bool
	reached, release chan struct{}
}

func (h *manifestSyncHold) MaybeError(op errorfs.Op) error {
	if op.Kind != errorfs.OpFileSync || !strings.Contains(op.Path, "MANIFEST") || !h.armed.CompareAndSwap(true, false) {
		return nil
	}
	close(h.reached)
	<-h.release
	return &os.PathError{Op: "injected", Path: op.Path, Err: syscall.ENOSPC}
}

func (h *manifestSyncHold) String() string { return "MANIFEST sync held, then ENOSPC" }

// TestCacheParkedDuringClose: a flush of the embedding cache's disk tier
// is parked by the logger after close checked for a parked goroutine and
// while Pebble's Close waits for that flush. close returns the parked
// report instead of waiting for good (segment.ParkGuard). It runs in a
// child process: the parked goroutine outlives the test.
func TestCacheParkedDuringClose(t *testing.T) {
	if os.Getenv("LAZYMEM_PARK_CHILD") != t.Name() {
		runParkChild(t)
		return
	}
	hold := &manifestSyncHold{reached: make(chan struct{}), release: make(chan struct{})}
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
func closeWhileParked(t *testing.T, hold *manifestSyncHold, pdb *pebble.DB, setHook func(func()), closeStore func() error, stopped func() error) {
	t.Helper()
	hold.armed.Store(true)
	if _, err := pdb.AsyncFlush(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hold.reached:
	case <-time.After(time.Minute):
		t.Fatal("the flush did not reach the MANIFEST sync")
	}
	setHook(func() { close(hold.release) })
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
	if !t.Failed() {
		fmt.Println(parkChildOK)
		os.Exit(0) // before TestMain's goroutine-leak check: the parked goroutine stays
	}
}

const parkChildOK = "lazymem: park child passed"

// runParkChild runs the calling test alone in a child process, which
// prints its goroutines if it hangs, and fails if the child fails.
func runParkChild(t *testing.T) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run", "^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "LAZYMEM_PARK_CHILD="+t.Name())
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 20 * time.Second
	out, err := cmd.CombinedOutput()
	switch {
	case ctx.Err() != nil:
		t.Fatalf("the child hung; its goroutines when it was stopped:\n%s", out)
	case err != nil:
		t.Fatalf("child: %v\n%s", err, out)
	case !bytes.Contains(out, []byte(parkChildOK)):
		t.Fatalf("the child did not run the test:\n%s", out)
	}
}
