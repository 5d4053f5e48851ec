//go:build diag

package bench

import (
	"os"
	"runtime"
	"slices"
	"testing"
	"time"
)

// TestZipfReportLazymemDiag opens the Zipf side-by-side as the report does
// (both engines in the process, from LAZYMEM_BENCH_CACHE) and times
// lazymem's passes alone, with the report's habits switched one at a time,
// to find which of them changes lazymem's figures:
//
//	LAZYMEM_DIAG_BLEVE=1  Bleve's two passes between lazymem's (the report)
//	LAZYMEM_DIAG_GC=1     runtime.GC() before each pass (the report)
//	LAZYMEM_DIAG_LOCK=1   the pass on a locked OS thread (the diagnostic)
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
	d := map[string][]time.Duration{}
	var dst []Hit
	pass := func(record bool) {
		if gc {
			runtime.GC()
		}
		if lock {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
		}
		for i := range qs {
			t0 := time.Now()
			var err error
			dst, err = s.Lazymem.Search(&qs[i], 10, dst[:0])
			el := time.Since(t0)
			if err != nil {
				t.Fatal(err)
			}
			if record {
				d[qs[i].Class] = append(d[qs[i].Class], el)
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
		t.Logf("bleve=%v gc=%v lock=%v %-16s p50 %8v p99 %8v", bleve, gc, lock, k, sm.P50, sm.P99)
	}
	if m := s.Lazymem.Index().Metrics(); m.FilterCacheEntries > 0 {
		t.Logf("filter cache: %d entries, %.1f MiB", m.FilterCacheEntries, float64(m.FilterCacheBytes)/(1<<20))
	}
}
