package segment

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSealAssistBoundsTail holds the background sealer back and appends
// far more than the tail's bound: each append seals segments itself, so
// the tail never grows past sealAssistSegments segments and one batch,
// the seals come from the mirror and show in Metrics, and every record
// reads back.
func TestSealAssistBoundsTail(t *testing.T) {
	const segRecs, batch, batches = 8, 20, 200
	l, err := Open(t.TempDir(), Options{SegmentRecords: segRecs})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.pauseSealer.Store(true)
	bound := int64(sealAssistSegments*segRecs + batch)
	var want [][]byte
	for i := range batches {
		var ps [][]byte
		for j := range batch {
			ps = append(ps, fmt.Appendf(nil, "record %d of batch %d", j, i))
		}
		if _, err := l.AppendBatch(ctx, ps); err != nil {
			t.Fatal(err)
		}
		want = append(want, ps...)
		if m := l.Metrics(); m.TailRecords > bound {
			t.Fatalf("after batch %d the tail holds %d records, want at most %d", i, m.TailRecords, bound)
		}
	}
	if n := l.Metrics().SealAssists; n == 0 || n != l.sealAssists.Load() {
		t.Fatalf("Metrics().SealAssists = %d, want the appends' seals (%d, more than 0)", n, l.sealAssists.Load())
	}
	l.sealMu.Lock()
	mirrored := l.mirrorSeals
	l.sealMu.Unlock()
	if mirrored == 0 {
		t.Fatal("no seal read the tail mirror")
	}
	for i, p := range want {
		got, err := l.Get(uint64(i+1), nil)
		if err != nil || !bytes.Equal(got, p) {
			t.Fatalf("record %d: %q, %v; want %q", i+1, got, err, p)
		}
	}
}

// TestSealAssistOff: with background sealing off (a caller that seals
// itself) an append seals nothing, whatever the tail's length.
func TestSealAssistOff(t *testing.T) {
	l, err := Open(t.TempDir(), Options{SegmentRecords: 4, DisableBackgroundSeal: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := range 100 {
		if _, err := l.AppendBatch(ctx, [][]byte{fmt.Appendf(nil, "r%d", i), []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	if m := l.Metrics(); m.TailRecords != 200 || m.SealAssists != 0 || m.AssistTimeouts != 0 {
		t.Fatalf("tail %d records, %d assisted seals, %d waits given up; want 200, 0 and 0", m.TailRecords, m.SealAssists, m.AssistTimeouts)
	}
}

// TestSealAssistDuringClose closes the log while appenders are sealing
// for the held-back sealer: no seal reaches the closed Pebble (which
// would panic), every append either succeeds or fails with ErrClosed,
// and each acknowledged record is there after a reopen.
func TestSealAssistDuringClose(t *testing.T) {
	dir := t.TempDir()
	l := openPaused(t, dir)
	var mu sync.Mutex
	acked := map[uint64][]byte{}
	var wg sync.WaitGroup
	var running atomic.Int32
	start := make(chan struct{})
	for w := range 4 {
		wg.Add(1)
		running.Add(1)
		go func() {
			defer wg.Done()
			defer running.Add(-1)
			<-start
			for i := 0; ; i++ {
				p := fmt.Appendf(nil, "writer %d record %d", w, i)
				id, err := l.AppendBatch(ctx, [][]byte{p})
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("append: %v", err)
					return
				}
				mu.Lock()
				acked[id] = p
				mu.Unlock()
			}
		}()
	}
	close(start)
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 400 || running.Load() == 0 {
			break
		}
		waitBrief()
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	checkReopened(t, dir, acked)
}

// TestSealAssistAfterClose: an appender about to seal for the tail when
// Close runs to its end seals nothing afterwards (Pebble is closed then;
// a seal into it would panic), and its acknowledged batch is there after
// a reopen.
func TestSealAssistAfterClose(t *testing.T) {
	dir := t.TempDir()
	l := openPaused(t, dir)
	reached, closed := make(chan struct{}), make(chan struct{})
	var once sync.Once
	l.beforeAssist = func() {
		once.Do(func() {
			close(reached)
			<-closed
		})
	}
	ps := overBound()
	done := make(chan error, 1)
	go func() {
		_, err := l.AppendBatch(ctx, ps)
		done <- err
	}()
	<-reached
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	close(closed)
	if err := <-done; err != nil {
		t.Fatalf("the acknowledged append: %v", err)
	}
	if n := l.sealAssists.Load(); n != 0 {
		t.Fatalf("%d seals after Close", n)
	}
	want := map[uint64][]byte{}
	for i, p := range ps {
		want[uint64(i+1)] = p
	}
	checkReopened(t, dir, want)
}

// TestSealAssistNotHeldByCompact: while another holder keeps sealMu (as
// Compact does for as long as it rewrites segments), an append over the
// tail's bound waits for it only up to assistMaxWait, then returns: its
// batch is acknowledged, Metrics counts the wait given up, and the tail
// keeps growing until sealMu is free.
func TestSealAssistNotHeldByCompact(t *testing.T) {
	l := openPaused(t, t.TempDir())
	defer l.Close()
	ps := overBound()
	l.sealMu.Lock()
	done := make(chan error, 1)
	go func() {
		_, err := l.AppendBatch(ctx, ps)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("append: %v", err)
		}
	case <-time.After(time.Minute):
		l.sealMu.Unlock()
		t.Fatal("the append waited for sealMu for a minute")
	}
	l.sealMu.Unlock()
	if m := l.Metrics(); m.AssistTimeouts != 1 || m.SealAssists != 0 {
		t.Fatalf("%d waits given up and %d seals; want 1 and 0", m.AssistTimeouts, m.SealAssists)
	}
	// With sealMu free the next append seals the tail down to the bound.
	if _, err := l.AppendBatch(ctx, [][]byte{[]byte("one more")}); err != nil {
		t.Fatal(err)
	}
	if m := l.Metrics(); m.TailRecords > int64(sealAssistSegments*4) {
		t.Fatalf("tail %d records after the lock was freed, want at most %d", m.TailRecords, sealAssistSegments*4)
	}
}

// openPaused opens a log of 4-record segments in dir whose background
// sealer seals nothing: only appends seal.
func openPaused(t *testing.T, dir string) *Log {
	t.Helper()
	l, err := Open(dir, Options{SegmentRecords: 4})
	if err != nil {
		t.Fatal(err)
	}
	l.pauseSealer.Store(true)
	return l
}

// overBound is one batch that leaves an empty tail of 4-record segments
// longer than sealAssistSegments segments.
func overBound() [][]byte {
	var ps [][]byte
	for i := range 4*sealAssistSegments + 1 {
		ps = append(ps, fmt.Appendf(nil, "record %d", i))
	}
	return ps
}

// checkReopened reopens the log in dir and checks that it holds want.
func checkReopened(t *testing.T, dir string, want map[uint64][]byte) {
	t.Helper()
	l, err := Open(dir, Options{SegmentRecords: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for id, p := range want {
		got, err := l.Get(id, nil)
		if err != nil || !bytes.Equal(got, p) {
			t.Fatalf("record %d after reopen: %q, %v; want %q", id, got, err, p)
		}
	}
}
