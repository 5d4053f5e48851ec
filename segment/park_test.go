package segment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// manifestSyncHold holds the next sync of a MANIFEST, once armed, until
// released, then fails it with ENOSPC: a flush installing its sstable
// then has QuietLogger park its goroutine, with Pebble's DB mutex held
// and the flush never ending (see park.go).
type manifestSyncHold struct {
	armed   atomic.Bool
	reached chan struct{}
	release chan struct{}
}

func newManifestSyncHold() *manifestSyncHold {
	return &manifestSyncHold{reached: make(chan struct{}), release: make(chan struct{})}
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

// within runs fn and fails the test if it has not returned after d (a
// hang, not a measurement: fn is left running).
func within(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s hung (no return after %v)", what, d)
	}
}

// parkingLog opens a log over a held MANIFEST sync, appends a few records,
// and starts a flush that reaches the held sync: QuietLogger parks the
// flush once the hold is released.
func parkingLog(t *testing.T) (*Log, *manifestSyncHold, map[uint64][]byte) {
	t.Helper()
	hold := newManifestSyncHold()
	l, err := Open("db", Options{FS: errorfs.Wrap(vfs.NewMem(), hold), SegmentRecords: 16, MemTableBytes: 1 << 20,
		ReserveBytes: 64 << 10, DisableBackgroundSeal: true})
	if err != nil {
		t.Fatal(err)
	}
	acked := map[uint64][]byte{}
	for i := range 5 {
		p := fmt.Appendf(nil, "record %d %s", i, bytes.Repeat([]byte{'x'}, 100))
		id, err := l.Append(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		acked[id] = p
	}
	hold.armed.Store(true)
	if _, err := l.db.AsyncFlush(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-hold.reached:
	case <-time.After(time.Minute):
		t.Fatal("the flush did not reach the MANIFEST sync")
	}
	return l, hold, acked
}

// TestParkedDuringClose: a flush is parked by QuietLogger after Close
// checked for a parked goroutine and while it waits in Pebble's Close
// for that flush. Close returns the parked report instead of waiting for
// good. This is the hang of a TestFaultInjectionFlushes child in CI
// (ENOSPC injected into a compaction's MANIFEST sync at the end of the
// workload, Close waiting in DB.Close for the compaction).
func TestParkedDuringClose(t *testing.T) {
	if !parkChild(t) {
		return
	}
	l, hold, _ := parkingLog(t)
	l.beforeClose = func() { close(hold.release) }
	var err error
	within(t, 30*time.Second, "Close with a flush parked meanwhile", func() { err = l.Close() })
	if !Parked(err) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Close: %v, want the parked report", err)
	}
	parkChildDone(t)
}

// TestParkedDuringCommit: a flush is parked while an append commits a
// batch that needs Pebble's mutex (a batch over half the memtable takes
// it to queue itself as a memtable), after the append checked for a
// fatal report. The append fails with the parked report instead of
// waiting for good; later appends fail at once; reads go on; Close
// returns the report.
func TestParkedDuringCommit(t *testing.T) {
	if !parkChild(t) {
		return
	}
	l, hold, acked := parkingLog(t)
	var once sync.Once
	l.beforeCommit = func() {
		once.Do(func() {
			close(hold.release)
			for deadline := time.Now().Add(time.Minute); l.park.Err() == nil && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
		})
	}
	big := make([][]byte, 3)
	for i := range big {
		big[i] = bytes.Repeat([]byte{'a' + byte(i)}, 200<<10)
	}
	var err error
	within(t, 30*time.Second, "an append with a flush parked meanwhile", func() { _, err = l.AppendBatch(ctx, big) })
	if !Parked(err) || !errors.Is(err, ErrFailed) {
		t.Fatalf("append: %v, want the parked report", err)
	}
	if err := l.Stopped(); !Parked(err) || !errors.Is(err, ErrStopped) {
		t.Fatalf("Stopped after the park: %v, want the parked report", err)
	}
	within(t, 30*time.Second, "an append after the park", func() { _, err = l.Append(ctx, []byte("after")) })
	if !Parked(err) {
		t.Fatalf("append after the park: %v, want the parked report", err)
	}
	within(t, 30*time.Second, "reads after the park", func() {
		for id, p := range acked {
			got, err := l.Get(id, nil)
			if err != nil || !bytes.Equal(got, p) {
				t.Errorf("Get(%d) after the park: %q, %v", id, got, err)
			}
		}
		_ = l.Metrics()
	})
	within(t, 30*time.Second, "Close after the park", func() { err = l.Close() })
	if !Parked(err) {
		t.Fatalf("Close: %v, want the parked report", err)
	}
	parkChildDone(t)
}

// parkChild runs the calling test in a child process and reports false,
// or, in that child, reports true: the test runs there. A parked Pebble
// goroutine and what it holds stay for the life of the process, which
// must end without the goroutine-leak check of TestMain (parkChildDone).
func parkChild(t *testing.T) bool {
	t.Helper()
	if os.Getenv("LAZYMEM_PARK_CHILD") == t.Name() {
		return true
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run", "^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "LAZYMEM_PARK_CHILD="+t.Name())
	quitOnCancel(cmd)
	out, err := cmd.CombinedOutput()
	switch {
	case ctx.Err() != nil:
		t.Fatalf("the child hung; its goroutines when it was stopped:\n%s", out)
	case err != nil:
		t.Fatalf("child: %v\n%s", err, out)
	case !bytes.Contains(out, []byte(parkChildOK)):
		t.Fatalf("the child did not run the test:\n%s", out)
	}
	return false
}

const parkChildOK = "lazymem: park child passed"

// parkChildDone ends a passing child of parkChild.
func parkChildDone(t *testing.T) {
	if t.Failed() {
		return
	}
	fmt.Println(parkChildOK)
	os.Exit(0)
}

// quitOnCancel makes a child that outlives its context explain itself:
// SIGQUIT has the Go runtime print every goroutine's stack to stderr
// before it exits; SIGKILL only if it has not exited 20 s later.
func quitOnCancel(cmd *exec.Cmd) {
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 20 * time.Second
}

// TestFatalErrorStopped: a fatal report after which QuietLogger parks
// wraps ErrStopped (the daemon answers it 503 "stopped": only a restart
// helps), besides ErrFailed and its cause; one after which Pebble stops
// safely by itself does not.
func TestFatalErrorStopped(t *testing.T) {
	parked := fatalError("MANIFEST write failed: %v", []any{syscall.ENOSPC})
	if !Parked(parked) || !errors.Is(parked, ErrStopped) || !errors.Is(parked, ErrFailed) || !errors.Is(parked, syscall.ENOSPC) {
		t.Fatalf("parked report %v: Parked %v, ErrStopped %v, ErrFailed %v, ENOSPC %v", parked, Parked(parked),
			errors.Is(parked, ErrStopped), errors.Is(parked, ErrFailed), errors.Is(parked, syscall.ENOSPC))
	}
	safe := fatalError("pebble: fatal commit error: %v", []any{syscall.ENOSPC})
	if Parked(safe) || errors.Is(safe, ErrStopped) || !errors.Is(safe, ErrFailed) {
		t.Fatalf("commit error %v: Parked %v, ErrStopped %v", safe, Parked(safe), errors.Is(safe, ErrStopped))
	}
}
