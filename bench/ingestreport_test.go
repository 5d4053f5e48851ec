//go:build report

package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/bench/zipf"
	"github.com/lazymem/lazymem/engine"
)

// TestIngestReport loads LAZYMEM_BENCH_N records of the Zipf corpus (or,
// with LAZYMEM_BENCH_CORPUS=workload, of bench/workload's chat) into the
// full lazymem engine (log and index, session context on, one writer,
// batches of 1000) and into Bleve, one after the other in one process,
// and prints docs/benchmarks/ingest-context.md's tables: records/s, the
// stores' allocated blocks during the load, after Close and after a
// reopen, and their heap. LAZYMEM_BENCH_CACHE is the scratch directory
// (removed at the end unless LAZYMEM_BENCH_KEEP is set). With
// LAZYMEM_BENCH_LAZYMEM_ONLY set it loads lazymem alone and prints its
// rate and heap (the store open and loaded, per million records), and
// with LAZYMEM_BENCH_HEAPPROFILE=file writes that heap's profile.
//
//	LAZYMEM_BENCH_REPORT=1 LAZYMEM_BENCH_N=200000 LAZYMEM_BENCH_CACHE=/tmp/ingest-200k \
//	    go test -tags report ./bench -run TestIngestReport -v -timeout 2h
func TestIngestReport(t *testing.T) {
	if os.Getenv("LAZYMEM_BENCH_REPORT") == "" {
		t.Skip("set LAZYMEM_BENCH_REPORT=1 (and LAZYMEM_BENCH_N, LAZYMEM_BENCH_CACHE) to run the ingest report")
	}
	n := envInt("LAZYMEM_BENCH_N", 200000)
	var c *Corpus
	var err error
	corpus := os.Getenv("LAZYMEM_BENCH_CORPUS")
	t0 := time.Now()
	switch corpus {
	case "", "zipf":
		corpus = "zipf"
		c, err = LoadZipf(zipf.Config{Seed: zipfSeed(), Records: n}, 1, zipfQuerySeed)
	case "workload":
		c, err = Load(workload.Config{Seed: 1, Records: n}, 1, 1)
	default:
		t.Fatalf("LAZYMEM_BENCH_CORPUS=%q: want zipf or workload", corpus)
	}
	if err != nil {
		t.Fatal(err)
	}
	gen := time.Since(t0)
	dir := os.Getenv("LAZYMEM_BENCH_CACHE")
	if dir == "" {
		dir = t.TempDir()
	} else if os.Getenv("LAZYMEM_BENCH_KEEP") == "" {
		defer os.RemoveAll(filepath.Join(dir, "lazymem"))
		defer os.RemoveAll(filepath.Join(dir, "bleve"))
	}
	load := func() string {
		b, _ := os.ReadFile("/proc/loadavg")
		return string(b)
	}
	before := load()
	start := time.Now().UTC()
	if os.Getenv("LAZYMEM_BENCH_LAZYMEM_ONLY") != "" {
		// The lazymem rows alone (a 1M-record heap without Bleve's hour).
		recs := EngineRecords(c.Docs)
		ldir := filepath.Join(dir, "lazymem")
		_ = os.RemoveAll(ldir)
		base := liveHeap()
		db, st, err := LoadEngine(ldir, recs, 1000, engine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		heap := liveHeap() - base
		if f := os.Getenv("LAZYMEM_BENCH_HEAPPROFILE"); f != "" { // the loaded store's heap
			w, err := os.Create(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := pprof.WriteHeapProfile(w); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		}
		t1 := time.Now()
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		st.Durable += time.Since(t1)
		fmt.Printf("Run %s on %s/%s, %d CPUs, %s: %d %s records, lazymem only.\n\nLoad average before: %safter: %s\n"+
			"| ingest | records | applied | durable | records/s (durable) | heap MB per 1M records |\n|---|---:|---:|---:|---:|---:|\n"+
			"| %s | %d | %v | %v | %.0f | %.0f |\n",
			start.Format(time.RFC3339), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), n, corpus,
			before, load(), st.Engine, st.Records, st.Apply.Round(time.Millisecond), st.Durable.Round(time.Millisecond),
			st.RecordsPerSec(), float64(heap)/float64(n))
		runtime.KeepAlive(recs)
		return
	}
	r, err := RunIngest(dir, c.Docs, 1000, engine.Options{}, BleveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("Run %s on %s/%s, %d CPUs, %s: %d %s records, %.1f MB of text (generated in %v); one writer, batches of 1000, session context on.\n\nLoad average before: %safter: %s\n%s\n",
		start.Format(time.RFC3339), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version(), n, corpus,
		float64(c.TextBytes())/1e6, gen.Round(time.Millisecond), before, load(), r.Markdown())
}
