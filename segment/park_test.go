package segment

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/lazymem/lazymem/internal/faultfs"
)

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
func parkingLog(t *testing.T) (*Log, *faultfs.ManifestSyncHold, map[uint64][]byte) {
	t.Helper()
	hold := faultfs.NewManifestSyncHold()
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
	hold.Armed.Store(true)
	if _, err := l.db.AsyncFlush(); err != nil {
		t.Fatal(err)
	}
	hold.WaitReached(t)
	return l, hold, acked
}

// TestParkedDuringClose: a flush is parked by QuietLogger after Close
// checked for a parked goroutine and while it waits in Pebble's Close
// for that flush. Close returns the parked report instead of waiting for
// good. This is the hang of a TestFaultInjectionFlushes child in CI
// (ENOSPC injected into a compaction's MANIFEST sync at the end of the
// workload, Close waiting in DB.Close for the compaction).
func TestParkedDuringClose(t *testing.T) {
	if !faultfs.Child(t) {
		return
	}
	l, hold, _ := parkingLog(t)
	l.beforeClose = func() { close(hold.Release) }
	var err error
	within(t, 30*time.Second, "Close with a flush parked meanwhile", func() { err = l.Close() })
	if !Parked(err) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Close: %v, want the parked report", err)
	}
	faultfs.Done(t)
}

// TestParkedDuringCommit: a flush is parked while an append commits a
// batch that needs Pebble's mutex (a batch over half the memtable takes
// it to queue itself as a memtable), after the append checked for a
// fatal report. The append fails with the parked report instead of
// waiting for good; later appends fail at once; reads go on; Close
// returns the report.
func TestParkedDuringCommit(t *testing.T) {
	if !faultfs.Child(t) {
		return
	}
	l, hold, acked := parkingLog(t)
	var once sync.Once
	l.beforeCommit = func() {
		once.Do(func() {
			close(hold.Release)
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
	faultfs.Done(t)
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

// TestParkGuardCalls checks the guard's workers: a call blocked in Pebble
// never holds up another call, a worker is reused for the next call, calls
// after Stop still run, and once the store is parked a blocked call
// returns the parked report while a finished one returns its own result.
func TestParkGuardCalls(t *testing.T) {
	var g ParkGuard
	release := make(chan struct{})
	blocked := make(chan error, 1)
	go func() { blocked <- g.Call(func() error { <-release; return errors.New("late") }) }()
	for i := range 100 {
		want := fmt.Errorf("call %d", i)
		within(t, 10*time.Second, "a call beside a blocked one", func() {
			if err := g.Call(func() error { return want }); err != want {
				t.Fatalf("call %d returned %v, want %v", i, err, want)
			}
		})
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = g.Call(func() error { return nil }) }); allocs > 1 {
		t.Errorf("a call with an idle worker allocates %.0f times, want at most 1 (the worker is reused)", allocs)
	}
	g.Stop()
	if err := g.Call(func() error { return errors.New("after stop") }); err == nil || err.Error() != "after stop" {
		t.Fatalf("call after Stop returned %v", err)
	}
	report := fatalError("MANIFEST sync failed in a compaction: %v", []any{syscall.ENOSPC})
	if !Parked(report) {
		t.Fatal("test report is not a parked one")
	}
	g.Note(report)
	within(t, 10*time.Second, "the blocked call after the park", func() {
		if err := <-blocked; !Parked(err) {
			t.Fatalf("blocked call returned %v, want the parked report", err)
		}
	})
	if err := g.Call(func() error { return nil }); !Parked(err) {
		t.Fatalf("call after the park returned %v, want the parked report", err)
	}
	close(release)
}
