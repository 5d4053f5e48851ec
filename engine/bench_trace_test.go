package engine

import (
	"fmt"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"syscall"
	"testing"
	"time"
)

// recallTrace writes one line per timed recall of BenchmarkRecallZipf to
// the file named by LAZYMEM_BENCH_TRACE (appended; nothing without it):
// the cell, the recall's number and query, its wall time and stages, what
// the process did meanwhile (CPU of all threads, page faults, GC cycles
// ended), its start and end (Unix ns), and the end times of the last GC
// cycles (gcend=N:ns,...: cycle N's mark termination). With GODEBUG=gctrace=1
// (each cycle's wall time, "gc N @... a+b+c ms clock") the two say which
// recalls ran while a cycle marked. A recall whose process CPU is well
// above its wall time shared the machine with the process's own background
// work; one whose CPU is well below it waited (scheduled out, or blocked).
// Whether the same queries are slow in every pass over the query set says
// whether a tail is the query's work or the moment's.
type recallTrace struct {
	f    *os.File
	cell string
	s    []metrics.Sample
	ru   syscall.Rusage
	gc   uint64
	gcs  debug.GCStats
}

func newRecallTrace(b *testing.B) *recallTrace {
	name := os.Getenv("LAZYMEM_BENCH_TRACE")
	if name == "" {
		return nil
	}
	f, err := os.OpenFile(name, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return &recallTrace{f: f, cell: b.Name(), s: []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}}
}

func (t *recallTrace) start() {
	if t == nil {
		return
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &t.ru)
	metrics.Read(t.s)
	t.gc = t.s[0].Value.Uint64()
}

// done writes the line of recall i (query q, of class class), which began
// at start and took wall.
func (t *recallTrace) done(i, q int, class string, start time.Time, wall time.Duration, st *RecallStats) {
	if t == nil {
		return
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	metrics.Read(t.s)
	cpu := time.Duration(ru.Utime.Nano()+ru.Stime.Nano()) - time.Duration(t.ru.Utime.Nano()+t.ru.Stime.Nano())
	d := &st.Durations
	fmt.Fprintf(t.f, "%s i=%d q=%d class=%s wall-us=%d cpu-us=%d minflt=%d majflt=%d gc=%d filter-us=%d broad-us=%d fetch-us=%d embed-us=%d score-us=%d start=%d end=%d gcend=",
		t.cell, i, q, class, wall.Microseconds(), cpu.Microseconds(), ru.Minflt-t.ru.Minflt, ru.Majflt-t.ru.Majflt,
		t.s[0].Value.Uint64()-t.gc, d.Filter.Microseconds(), d.Broad.Microseconds(), d.Fetch.Microseconds(), d.Embed.Microseconds(), d.Score.Microseconds(),
		start.UnixNano(), start.Add(wall).UnixNano())
	debug.ReadGCStats(&t.gcs)
	for k := 0; k < min(4, len(t.gcs.PauseEnd)); k++ {
		fmt.Fprintf(t.f, "%d:%d,", t.gcs.NumGC-int64(k), t.gcs.PauseEnd[k].UnixNano())
	}
	fmt.Fprintln(t.f)
}
