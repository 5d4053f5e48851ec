package segment

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestDiskFullModel fills a modelled disk (diskModel: N bytes free, every
// write beyond them fails with ENOSPC) under a workload of appends, seals
// (background and explicit), deletes, a Compact (which forces a flush) and
// enough data for Pebble to rotate memtables, flush and compact on its own,
// then gives space back and closes. Two sweeps:
//   - at-op: the disk fills at the k-th space-taking operation, for every
//     k in turn (every 13th; every 41st with -short; LAZYMEM_FAULT_EVERY
//     sets the step), with no or some bytes left;
//   - capacity: the disk has N bytes, for N from less than the space
//     reserve to more than the workload needs.
//
// Every run: each append either succeeds, durably (a crash image taken
// before Close holds it), or fails with ErrDiskFull, never ErrFailed;
// Pebble never reaches a point where it stops the process (a panic would
// end this test binary; a parked goroutine is checked after every
// operation); once space returns, appends succeed on the same Log; Close
// succeeds; the crash image reopens with every acknowledged record and
// dense ids. This is what the space reserve and the log's checks of free
// space are for: unlike an I/O error (TestFaultInjectionFlushes), a full
// disk never reaches Pebble's stop points.
func TestDiskFullModel(t *testing.T) {
	step, capStep := int64(13), int64(256<<10)
	if testing.Short() || raceEnabled {
		step, capStep = 41, 768<<10
	}
	if v, err := strconv.ParseInt(os.Getenv("LAZYMEM_FAULT_EVERY"), 10, 64); err == nil && v > 0 {
		step = v
	}
	t.Run("at-op", func(t *testing.T) {
		r := modelRun(t, 1<<40, -1, 0)
		if r.refused != 0 || r.appendErrs != 0 {
			t.Fatalf("the clean run saw %d refused writes, %d failed appends", r.refused, r.appendErrs)
		}
		n := r.ops
		if n < 200 {
			t.Fatalf("only %d space-taking operations in the workload", n)
		}
		var hit, failedAppends int64
		from := int64(0)
		if v, err := strconv.ParseInt(os.Getenv("LAZYMEM_MODEL_FROM"), 10, 64); err == nil {
			from = v
		}
		for k := from; k < n; k += step {
			slack := int64(0)
			if k%2 == 1 {
				slack = int64(rand.New(rand.NewPCG(uint64(k), 1)).IntN(2 * modelReserve))
			}
			r := modelRun(t, 1<<40, k, slack)
			if r.refused > 0 {
				hit++
			}
			failedAppends += r.appendErrs
			if t.Failed() {
				t.Fatalf("disk full at operation %d (slack %d)", k, slack)
			}
		}
		if hit == 0 || failedAppends == 0 {
			t.Fatalf("no run refused a write (%d) or failed an append (%d): the full disk was not exercised", hit, failedAppends)
		}
		t.Logf("%d operations; %d runs refused writes, %d appends failed in all", n, hit, failedAppends)
	})
	t.Run("capacity", func(t *testing.T) {
		var failedAppends int64
		for c := int64(modelReserve / 2); c <= 6<<20; c += capStep {
			r := modelRun(t, c, -1, 0)
			failedAppends += r.appendErrs
			if t.Failed() {
				t.Fatalf("capacity %d", c)
			}
		}
		if failedAppends == 0 {
			t.Fatal("no append failed: the full disk was not exercised")
		}
	})
}

const modelReserve = 256 << 10

type modelResult struct {
	ops, refused int64
	appendErrs   int64
}

// modelRun runs the workload on a disk of capacity bytes that fills at
// operation full (< 0: never) with slack bytes left, and checks it.
func modelRun(t *testing.T, capacity, full, slack int64) modelResult {
	t.Helper()
	name := fmt.Sprintf("capacity %d, full at %d, slack %d", capacity, full, slack)
	mem := vfs.NewCrashableMem()
	d := newDiskModel(mem, capacity, full, slack)
	opts := Options{FS: d, SegmentRecords: 16, MemTableBytes: 1 << 20, ReserveBytes: modelReserve}
	if os.Getenv("LAZYMEM_MODEL_DEBUG") != "" {
		opts.Logf = func(format string, args ...any) { fmt.Fprintf(os.Stderr, "log: "+format+"\n", args...) }
		fmt.Fprintf(os.Stderr, "run: %s\n", name)
	}
	var res modelResult
	acked := map[uint64][]byte{}
	attempted := map[string]bool{}
	deleted := map[uint64]bool{}     // deletions acknowledged
	deleteTried := map[uint64]bool{} // a failed one may or may not hold
	rng := rand.New(rand.NewPCG(uint64(capacity), uint64(full)))
	stopped := func(l *Log, what string) bool {
		if err := l.fatalErr(); Parked(err) {
			t.Errorf("%s: %s: Pebble stopped: %v; reserve held %v, released %d times; the disk's last events:\n%s",
				name, what, err, l.reserveHeld.Load(), l.reserveReleases.Load(), d.lastEvents(60))
			return true
		}
		return false
	}
	makeBatch := func(i int) [][]byte {
		batch := make([][]byte, 1+i%4)
		for j := range batch {
			p := make([]byte, 3000+rng.IntN(2000))
			for k := range p {
				p[k] = 'a' + byte(rng.IntN(26))
			}
			batch[j] = fmt.Appendf(p[:0:0], "r%d-%d %s", i, j, p)
			attempted[string(batch[j])] = true
		}
		return batch
	}
	appendBatch := func(l *Log, batch [][]byte) error {
		first, err := l.AppendBatch(ctx, batch)
		if err != nil {
			return err
		}
		for j, p := range batch {
			acked[first+uint64(j)] = p
		}
		return nil
	}
	appendOne := func(l *Log, i int) error { return appendBatch(l, makeBatch(i)) }

	l, err := Open("db", opts)
	if err != nil {
		if !errors.Is(err, ErrDiskFull) {
			t.Errorf("%s: open: %v", name, err)
			return res
		}
		d.grow(1 << 40)
		if l, err = Open("db", opts); err != nil {
			t.Errorf("%s: open after space returned: %v", name, err)
			return res
		}
	}
	for i := 0; i < 160; i++ {
		err := appendOne(l, i)
		if err != nil {
			res.appendErrs++
			if !errors.Is(err, ErrDiskFull) {
				t.Errorf("%s: append %d: %v: want ErrDiskFull", name, i, err)
			}
		}
		if stopped(l, fmt.Sprintf("append %d", i)) {
			break
		}
		switch {
		case i%40 == 39:
			_ = l.Seal() // may fail on a full disk; the records stay in the tail
		case i%50 == 49:
			if id := l.Next() - 3; id > 0 {
				deleteTried[id] = true
				if err := l.Delete(ctx, []uint64{id}); err == nil {
					deleted[id] = true
				}
			}
		case i == 100:
			_ = l.Compact(ctx) // forces a flush and a compaction
		}
		if stopped(l, fmt.Sprintf("after append %d", i)) {
			break
		}
	}
	if t.Failed() {
		// A parked store cannot be closed; leave it.
		return res
	}
	// Space returns: appends work again on the same Log.
	d.grow(1 << 40)
	// One batch, tried until it is taken (a hang bound, not a measurement:
	// Pebble retries a failed flush after the listener's backoff, at most
	// 500 ms). A run that never recovers fails with the log's state
	// instead of running into the package's timeout.
	var aerr error
	batch := makeBatch(1000)
	for deadline := time.Now().Add(2 * time.Minute); ; waitBrief() {
		if aerr = appendBatch(l, batch); aerr == nil || !errors.Is(aerr, ErrDiskFull) || time.Now().After(deadline) {
			break
		}
	}
	if aerr != nil {
		var bgErr error
		if p := l.bgErr.Load(); p != nil {
			bgErr = *p
		}
		free, _ := l.avail()
		t.Errorf("%s: append after space returned: %v (failed flushes in a row %d, last %v; failed compactions in a row %d; reserve held %v; free %d bytes; refused writes %d)",
			name, aerr, l.bgFull.Load(), bgErr, l.compFull.Load(), l.reserveHeld.Load(), free, d.refused.Load())
	}
	crashed := mem.CrashClone(vfs.CrashCloneCfg{})
	if err := l.Close(); err != nil {
		t.Errorf("%s: close: %v", name, err)
	}
	res.ops, res.refused = d.ops.Load(), d.refused.Load()

	l, err = Open("db", Options{FS: crashed, SegmentRecords: 16, MemTableBytes: 1 << 20, ReserveBytes: modelReserve})
	if err != nil {
		t.Errorf("%s: reopen the crash image: %v", name, err)
		return res
	}
	defer l.Close()
	for id, p := range acked {
		got, err := l.Get(id, nil)
		switch {
		case deleted[id]:
			if !errors.Is(err, ErrDeleted) {
				t.Errorf("%s: id %d deleted: %v", name, id, err)
			}
		case deleteTried[id] && errors.Is(err, ErrDeleted):
		case err != nil:
			t.Errorf("%s: acknowledged id %d: %v (ids end at %d)", name, id, err, l.Next()-1)
		case !bytes.Equal(got, p):
			t.Errorf("%s: acknowledged id %d: wrong payload", name, id)
		}
	}
	var live, dead uint64
	err = l.Scan(1, l.Next(), func(id uint64, p []byte) error {
		live++
		if !attempted[string(p)] {
			return fmt.Errorf("id %d holds a payload nobody appended", id)
		}
		return nil
	})
	if err != nil {
		t.Errorf("%s: scan: %v", name, err)
	}
	for id := uint64(1); id < l.Next(); id++ {
		if _, err := l.Get(id, nil); errors.Is(err, ErrDeleted) {
			dead++
		}
	}
	if live+dead != l.Next()-1 {
		t.Errorf("%s: %d live + %d deleted, ids run to %d: not dense", name, live, dead, l.Next()-1)
	}
	return res
}
