//go:build diag

package bench

import (
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestZipfReportLazymemDiag opens the Zipf side-by-side as the report does
// (both engines in the process, from LAZYMEM_BENCH_CACHE) and times
// lazymem's passes alone, with the report's habits switched one at a time,
// to find which of them changes lazymem's figures:
//
//	LAZYMEM_DIAG_BLEVE=1  Bleve's two passes between lazymem's (the report)
//	LAZYMEM_DIAG_GC=1     runtime.GC() before each pass (the report)
//	LAZYMEM_DIAG_LOCK=1   the pass on a locked OS thread (the diagnostic);
//	                      then also each cell's thread CPU time, page
//	                      faults and kernel time a query
//	LAZYMEM_DIAG_SLEEP=ms a pause before each lazymem pass
//
//	LAZYMEM_BENCH_N=1000000 LAZYMEM_BENCH_SESSION_CONTEXT=1 LAZYMEM_BENCH_CACHE=DIR \
//	    go test -tags diag ./bench -run TestZipfReportLazymemDiag -v -timeout 1h
func TestZipfReportLazymemDiag(t *testing.T) {
	if os.Getenv("LAZYMEM_BENCH_CACHE") == "" {
		t.Skip("set LAZYMEM_BENCH_CACHE (and LAZYMEM_BENCH_N) to a cached Zipf side-by-side build")
	}
	s := sharedZipfSideBySide(t)
	qs := s.Corpus.Queries
	bleve := os.Getenv("LAZYMEM_DIAG_BLEVE") != ""
	gc := os.Getenv("LAZYMEM_DIAG_GC") != ""
	lock := os.Getenv("LAZYMEM_DIAG_LOCK") != ""
	others := []Engine{s.Bleve.Formulation(false), s.Bleve.Formulation(true)}
	// LAZYMEM_DIAG_SLEEP=ms: a pause before each lazymem pass (Bleve's
	// background goroutines, if any, finish their work first).
	pause := time.Duration(envInt("LAZYMEM_DIAG_SLEEP", 0)) * time.Millisecond
	d := map[string][]time.Duration{}
	cpu := map[string][]time.Duration{}
	// With the thread locked, its page faults and kernel time per query
	// (getrusage RUSAGE_THREAD), summed per cell.
	faults := map[string]int64{}
	sys := map[string]time.Duration{}
	var dst []Hit
	pass := func(record bool) {
		if gc {
			runtime.GC()
		}
		time.Sleep(pause)
		if lock {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
		}
		for i := range qs {
			var c0 time.Duration
			var ru0, ru1 unix.Rusage
			if lock {
				c0 = threadCPU() // the thread's CPU time: only with the thread locked
				_ = unix.Getrusage(unix.RUSAGE_THREAD, &ru0)
			}
			t0 := time.Now()
			var err error
			dst, err = s.Lazymem.Search(&qs[i], 10, dst[:0])
			el := time.Since(t0)
			if err != nil {
				t.Fatal(err)
			}
			if record {
				d[qs[i].Class] = append(d[qs[i].Class], el)
				if lock {
					cpu[qs[i].Class] = append(cpu[qs[i].Class], threadCPU()-c0)
					_ = unix.Getrusage(unix.RUSAGE_THREAD, &ru1)
					faults[qs[i].Class] += ru1.Minflt - ru0.Minflt + ru1.Majflt - ru0.Majflt
					sys[qs[i].Class] += time.Duration(ru1.Stime.Nano() - ru0.Stime.Nano())
				}
			}
		}
	}
	for round := 0; round < 1+envInt("LAZYMEM_BENCH_ROUNDS", 2); round++ {
		pass(round > 0)
		if bleve {
			for _, e := range others {
				if _, _, err := timeQueries(e, qs, 10, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	var keys []string
	for k := range d {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		sm := Summarize("lazymem", 10, d[k], 0)
		t.Logf("bleve=%v gc=%v lock=%v sleep=%v %-16s p50 %8v p99 %8v", bleve, gc, lock, pause, k, sm.P50, sm.P99)
		if c := cpu[k]; len(c) > 0 {
			sc := Summarize("lazymem", 10, c, 0)
			t.Logf("  its thread's CPU p50 %8v p99 %8v; page faults %.2f, kernel time %v a query",
				sc.P50, sc.P99, float64(faults[k])/float64(len(c)), sys[k]/time.Duration(len(c)))
		}
	}
	if m := s.Lazymem.Index().Metrics(); m.FilterCacheEntries > 0 {
		t.Logf("filter cache: %d entries, %.1f MiB", m.FilterCacheEntries, float64(m.FilterCacheBytes)/(1<<20))
	}
}
