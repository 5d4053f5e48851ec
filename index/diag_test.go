//go:build diag

// Diagnostics, not checks: built only with the diag tag so that they are
// never skipped tests (go test -tags diag ./index -run TestDiag -v, with
// LAZYMEM_DIAG_DIR or LAZYMEM_DIAG_MERGE_DIR set).

package index

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/lazymem/lazymem/bench/workload"
)

// TestDiagSlowQueries prints the slowest benchmark queries (set
// LAZYMEM_DIAG_DIR to a scratch dir; the index is built there once).
func TestDiagSlowQueries(t *testing.T) {
	dir := os.Getenv("LAZYMEM_DIAG_DIR")
	if dir == "" {
		t.Skip("set LAZYMEM_DIAG_DIR")
	}
	n := benchN()
	t0 := time.Now()
	x, err := Open(dir, Options{DisableBackgroundMerge: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	t.Logf("Open: %v", time.Since(t0))
	if x.Metrics().Docs == 0 {
		docs := benchCorpus(t, n)
		p := ptrs(docs)
		for lo := 0; lo < len(p); lo += 1000 {
			if err := x.Add(p[lo:min(lo+1000, len(p))]); err != nil {
				t.Fatal(err)
			}
		}
		if err := x.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("metrics %+v", x.Metrics())
	runtime.LockOSThread() // thread CPU clocks are per OS thread
	defer runtime.UnlockOSThread()
	qs := workload.KeywordQueries(benchConfig(n), 1000, benchSeed)
	type res struct {
		q        string
		cpu      time.Duration
		card     uint64
		filtered bool
	}
	for _, k := range []int{100} {
		for _, filtered := range []bool{true, false} {
			var rs []res
			var dst []Hit
			for i := range qs {
				q := &qs[i]
				t0 := threadCPU()
				var card uint64
				if filtered {
					f, _ := x.Filter(&Filter{Agents: []string{q.Agent}, Since: q.Since.UnixNano(), Until: q.Until.UnixNano()})
					card = f.GetCardinality()
					dst, _ = x.Search(q.Text, f, k, dst)
				} else {
					dst, _ = x.Search(q.Text, nil, k, dst)
				}
				rs = append(rs, res{q.Text, threadCPU() - t0, card, filtered})
			}
			slices.SortFunc(rs, func(a, b res) int { return int(a.cpu - b.cpu) })
			t.Logf("k=%d filtered=%v cpu p50 %v p90 %v p99 %v max %v", k, filtered, rs[len(rs)/2].cpu, rs[len(rs)*9/10].cpu, rs[len(rs)*99/100].cpu, rs[len(rs)-1].cpu)
			for _, r := range rs[len(rs)-5:] {
				s := x.getSearcher()
				x.analyzeQuery(s, r.q)
				var dfs []string
				for _, qt := range s.terms {
					var df uint32
					for _, seg := range x.allSegs() {
						if seg.term(qt.text, &s.ti) {
							df += s.ti.df
						}
					}
					dfs = append(dfs, fmt.Sprintf("%s:%d", qt.text, df))
				}
				t.Logf("  %v card=%d %q %v", r.cpu, r.card, r.q, dfs)
			}
		}
	}
}

// TestDiagMerge times a full merge of the index in LAZYMEM_DIAG_MERGE_DIR
// (it rewrites that directory).
func TestDiagMerge(t *testing.T) {
	dir := os.Getenv("LAZYMEM_DIAG_MERGE_DIR")
	if dir == "" {
		t.Skip("set LAZYMEM_DIAG_MERGE_DIR")
	}
	// A store built with session context (LAZYMEM_BENCH_SESSION_CONTEXT
	// set, as the Zipf stores are) must be opened with it, or Open
	// rebuilds it from a source this test does not have.
	ctx := os.Getenv("LAZYMEM_BENCH_SESSION_CONTEXT") != ""
	x, err := Open(dir, Options{DisableBackgroundMerge: true, SessionContext: ctx}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	m0 := x.Metrics()
	t0, c0 := time.Now(), processCPU()
	if err := x.Merge(); err != nil {
		t.Fatal(err)
	}
	t.Logf("merge of %d segments, %d docs: wall %v, cpu %v", m0.Segments, m0.Docs, time.Since(t0), processCPU()-c0)
}
