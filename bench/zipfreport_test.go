//go:build report

// The Zipf report of docs/benchmarks/zipf.md, built only with the report
// tag so that it is never a skipped test:
//
//	LAZYMEM_BENCH_REPORT=1 LAZYMEM_BENCH_N=200k go test -tags report ./bench -run TestZipfReport -v

package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestZipfReport runs the per-class comparison at LAZYMEM_BENCH_N records
// when LAZYMEM_BENCH_REPORT is set, prints the table of
// docs/benchmarks/zipf.md and checks pruned = exhaustive on every query.
func TestZipfReport(t *testing.T) {
	if os.Getenv("LAZYMEM_BENCH_REPORT") == "" {
		t.Skip("set LAZYMEM_BENCH_REPORT=1 (and LAZYMEM_BENCH_N, LAZYMEM_BENCH_CACHE) to run the Zipf report")
	}
	s := sharedZipfSideBySide(t)
	r, err := s.RunClasses(10, envInt("LAZYMEM_BENCH_ROUNDS", 3))
	if err != nil {
		t.Fatal(err)
	}
	r.Corpus = sharedZipfConfig().Describe()
	md := r.Markdown()
	fmt.Fprintf(os.Stdout, "corpus generated in %v\n\n%s\n", s.GenTime.Round(time.Millisecond), md)
	if out := os.Getenv("LAZYMEM_BENCH_REPORT_OUT"); out != "" {
		if err := os.WriteFile(filepath.Clean(out), []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, row := range r.Rows {
		if row.Exact != row.Queries {
			t.Errorf("%s: pruned Search differs from SearchExhaustive on %d of %d queries", row.Class, row.Queries-row.Exact, row.Queries)
		}
	}
}
