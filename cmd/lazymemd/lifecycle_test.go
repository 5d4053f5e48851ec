package main

import (
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lazymem/lazymem/internal/logbuf"
	"github.com/lazymem/lazymem/internal/testenv"

	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/segment"
)

// TestLifecycleGate: before the store is open only the liveness probe
// answers 200, everything else 503 (the append writes nothing); once open
// everything is served; once shutdown starts, 503 again.
func TestLifecycleGate(t *testing.T) {
	db, err := engine.Open(t.TempDir(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := newServer(nil, defaultLimits())
	ts := httptest.NewServer(s.routes())
	defer ts.Close()
	check := func(phase string, want map[string]int, code string) {
		t.Helper()
		for path, st := range want {
			method, body := "GET", ""
			if path == "/v1/records" {
				method, body = "POST", `{"agent":"a","text":"x"}`
			}
			var e errorReply
			if got := call(t, method, ts.URL+path, body, &e); got != st {
				t.Errorf("%s: %s %s: %d, want %d", phase, method, path, got, st)
			} else if st == 503 && path == "/v1/records" && e.Error.Code != code {
				t.Errorf("%s: %s: code %q, want %q", phase, path, e.Error.Code, code)
			}
		}
	}
	check("opening", map[string]int{"/v1/live": 200, "/v1/ready": 503, "/v1/health": 503, "/v1/records": 503, "/v1/stats": 503, "/v1/records/1": 503}, "starting")
	s.open(db)
	check("open", map[string]int{"/v1/live": 200, "/v1/ready": 200, "/v1/health": 200, "/v1/records": 200, "/v1/stats": 200}, "")
	if db.Metrics().Log.Next != 2 {
		t.Fatalf("one append went through; next id %d", db.Metrics().Log.Next)
	}
	// A store whose storage engine stopped (engine's DB.Stopped, proven
	// by the engine's and segment's park tests) is not ready: only a
	// restart brings it back.
	st := newServer(db, defaultLimits())
	st.stopped = func() error { return fmt.Errorf("log: %w", segment.ErrStopped) }
	tst := httptest.NewServer(st.routes())
	defer tst.Close()
	for _, path := range []string{"/v1/ready", "/v1/health"} {
		var ready map[string]string
		if code := call(t, "GET", tst.URL+path, "", &ready); code != 503 || ready["status"] != "stopped" || !strings.Contains(ready["error"], "restart") {
			t.Errorf("%s with the storage engine stopped: %d %v, want 503 status stopped naming the restart", path, code, ready)
		}
	}
	s.state.Store(stateClosing)
	check("closing", map[string]int{"/v1/live": 200, "/v1/ready": 503, "/v1/records": 503}, "closed")
}

// TestCloseWithin: a close that does not finish within the timeout is
// reported, not waited for.
func TestCloseWithin(t *testing.T) {
	if err := closeWithin(time.Minute, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if err := closeWithin(time.Minute, func() error { return boom }); err != boom {
		t.Fatal(err)
	}
	release := make(chan struct{})
	done := make(chan struct{})
	err := closeWithin(time.Millisecond, func() error { <-release; close(done); return nil })
	if !errors.Is(err, errCloseTimeout) {
		t.Fatalf("blocked close: %v", err)
	}
	close(release)
	<-done
}

// TestSignalDuringOpen runs the daemon on a store whose open blocks (its
// index MANIFEST is a FIFO nobody writes: reading it waits forever): the
// daemon listens, says it is live but not ready, refuses requests with
// 503, and exits cleanly (status 0) on SIGTERM instead of hanging in the
// open. The store opens normally afterwards.
func TestSignalDuringOpen(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a daemon process")
	}
	dir := t.TempDir()
	db, err := engine.Open(dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Append(t.Context(), engine.Record{Agent: "a", Text: "written before the slow open"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "index", "MANIFEST")
	if err := os.Remove(manifest); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(manifest, 0o600); err != nil {
		testenv.Missing(t, "no FIFOs here: %v", err)
	}
	cmd := exec.Command(os.Args[0], "--db", dir, "--addr", "127.0.0.1:0", "--shutdown-timeout", "1s")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var log logbuf.Buffer
	url := daemonURL(t, stderr, &log)

	if st := call(t, "GET", url+"/v1/live", "", nil); st != 200 {
		t.Fatalf("live while opening: %d", st)
	}
	var ready map[string]string
	if st := call(t, "GET", url+"/v1/ready", "", &ready); st != 503 || ready["status"] != "opening" {
		t.Fatalf("ready while opening: %d %v (is the open really blocked?)\n%s", st, ready, log.String())
	}
	var e errorReply
	if st := call(t, "POST", url+"/v1/records", `{"agent":"a","text":"too early"}`, &e); st != 503 || e.Error.Code != "starting" {
		t.Fatalf("append while opening: %d %+v", st, e.Error)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// Process.Wait, not cmd.Wait: cmd.Wait closes the stderr pipe, and the
	// goroutine copying it into log could lose the daemon's last lines.
	exited := make(chan error, 1)
	go func() {
		st, err := cmd.Process.Wait()
		if err == nil && !st.Success() {
			err = fmt.Errorf("%s", st)
		}
		exited <- err
	}()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit after SIGTERM during open: %v\n%s", err, log.String())
		}
	case <-time.After(60 * time.Second): // a safety net: the daemon hangs in the open
		t.Fatalf("SIGTERM during a blocked open was not honoured\n%s", log.String())
	}
	// The copy of stderr ends at the pipe's end of file, just after the exit.
	waitFor(t, "the daemon's last log lines", func() bool { return strings.Contains(log.String(), "still opening") })
	// The store is intact: with the FIFO gone it opens and holds the record.
	if err := os.Remove(manifest); err != nil {
		t.Fatal(err)
	}
	db, err = engine.Open(dir, engine.Options{})
	if err != nil {
		t.Fatalf("open after the abandoned open: %v", err)
	}
	defer db.Close()
	if r, err := db.Get(t.Context(), 1); err != nil || r.Text != "written before the slow open" {
		t.Fatalf("record 1: %+v %v", r, err)
	}
}
