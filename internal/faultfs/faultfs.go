package faultfs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
)

// ManifestSyncHold is an errorfs.Injector that holds the next sync of a
// MANIFEST, once Armed, until Release is closed, then fails it with
// ENOSPC: a flush installing its sstable is then parked by the store's
// QuietLogger, with Pebble's DB mutex held and the flush never ending.
// Reached is closed when the sync is held.
type ManifestSyncHold struct {
	Armed            atomic.Bool
	Reached, Release chan struct{}
}

// NewManifestSyncHold returns a hold, not armed.
func NewManifestSyncHold() *ManifestSyncHold {
	return &ManifestSyncHold{Reached: make(chan struct{}), Release: make(chan struct{})}
}

// MaybeError implements errorfs.Injector.
func (h *ManifestSyncHold) MaybeError(op errorfs.Op) error {
	if op.Kind != errorfs.OpFileSync || !strings.Contains(op.Path, "MANIFEST") || !h.Armed.CompareAndSwap(true, false) {
		return nil
	}
	close(h.Reached)
	<-h.Release
	return &os.PathError{Op: "injected", Path: op.Path, Err: syscall.ENOSPC}
}

func (h *ManifestSyncHold) String() string { return "MANIFEST sync held, then ENOSPC" }

// WaitReached fails the test if the held sync is not reached within a
// minute (a hang bound).
func (h *ManifestSyncHold) WaitReached(t testing.TB) {
	t.Helper()
	select {
	case <-h.Reached:
	case <-time.After(time.Minute):
		t.Fatal("the flush did not reach the MANIFEST sync")
	}
}

// childEnv names the test a child process runs.
const childEnv = "LAZYMEM_PARK_CHILD"

// childOK is what a passing child prints last.
const childOK = "lazymem: park child passed"

// Child runs the calling test alone in a child process and reports false
// (the parent: it has checked the child's result), or, in that child,
// reports true: the test runs there and ends with Done. A child that
// hangs for 2 minutes is stopped with SIGQUIT, and its goroutines are in
// the failure.
func Child(t *testing.T) bool {
	t.Helper()
	if os.Getenv(childEnv) == t.Name() {
		return true
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run", "^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+t.Name())
	QuitOnCancel(cmd)
	out, err := cmd.CombinedOutput()
	switch {
	case ctx.Err() != nil:
		t.Fatalf("the child hung; its goroutines when it was stopped:\n%s", out)
	case err != nil:
		t.Fatalf("child: %v\n%s", err, out)
	case !bytes.Contains(out, []byte(childOK)):
		t.Fatalf("the child did not run the test:\n%s", out)
	}
	return false
}

// Done ends a passing child of Child at once, before its TestMain's
// goroutine-leak check (the parked goroutine stays for the life of the
// process). A failed child returns, and its test reports the failure.
func Done(t *testing.T) {
	if t.Failed() {
		return
	}
	fmt.Println(childOK)
	os.Exit(0)
}

// QuitOnCancel makes cmd's context stop it with SIGQUIT, so that a Go
// child prints its goroutines, and waits 20 s for that output.
func QuitOnCancel(cmd *exec.Cmd) {
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 20 * time.Second
}

// FullDisk is an errorfs.Injector that fails every operation taking space
// (creating, writing, preallocating, syncing) with ENOSPC while On;
// removals and reads go on, as on a real full disk.
type FullDisk struct{ On atomic.Bool }

// MaybeError implements errorfs.Injector.
func (d *FullDisk) MaybeError(op errorfs.Op) error {
	if !d.On.Load() {
		return nil
	}
	switch op.Kind {
	case errorfs.OpCreate, errorfs.OpLink, errorfs.OpMkdirAll, errorfs.OpReuseForWrite,
		errorfs.OpFilePreallocate, errorfs.OpFileWrite, errorfs.OpFileWriteAt,
		errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo, errorfs.OpFileFlush:
		return &os.PathError{Op: "write", Path: op.Path, Err: syscall.ENOSPC}
	}
	return nil
}

func (d *FullDisk) String() string { return "full disk" }
