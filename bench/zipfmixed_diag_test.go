//go:build diag

// lazymem's broad stage alone over a built Zipf store, for profiles and
// for alternating two commits' binaries on one store without Bleve in the
// process (Bleve's store is locked by the process that holds it open):
//
//	go test -tags diag -c -o zipf.test ./bench
//	LAZYMEM_BENCH_N=1000000 LAZYMEM_BENCH_PER_CLASS=50 LAZYMEM_BENCH_SESSION_CONTEXT=1 \
//	    LAZYMEM_DIAG_LAZYMEM_DIR=DIR ./zipf.test -test.run '^$' -test.bench ZipfLazymemMixed \
//	    -test.benchtime 4x -test.cpuprofile cpu.out
//
// DIR is a copy of the lazymem directory of a cached Zipf side-by-side
// build (LAZYMEM_BENCH_CACHE/zipf-seed…/lazymem) over the same corpus.

package bench

import (
	"context"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lazymem/lazymem/bench/zipf"
	"github.com/lazymem/lazymem/index"
	"golang.org/x/sys/unix"
)

// threadCPU is the calling thread's CPU time: under the shared machine's
// load a query's wall time holds the time it waited for a core, its CPU
// time does not.
func threadCPU() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}

// evictSink keeps the eviction's reads.
var evictSink byte

// BenchmarkZipfLazymemMixed is BenchmarkZipfMixed over a lazymem store
// opened alone: every query of the report in the report's order, one op
// one pass, each cell's p50 logged and the cells of LAZYMEM_BENCH_CELLS
// reported. Queries carry the pprof label cell=CLASS/FILTER.
func BenchmarkZipfLazymemMixed(b *testing.B) {
	dir := os.Getenv("LAZYMEM_DIAG_LAZYMEM_DIR")
	if dir == "" {
		b.Fatal("set LAZYMEM_DIAG_LAZYMEM_DIR to a copy of a built Zipf store's lazymem directory")
	}
	c, err := LoadZipf(zipf.Config{Seed: zipfSeed(), Records: zipfN()}, envInt("LAZYMEM_BENCH_PER_CLASS", 100), zipfQuerySeed)
	if err != nil {
		b.Fatal(err)
	}
	l, err := OpenLazymem(dir, c.Docs, index.Options{
		SessionContext:         os.Getenv("LAZYMEM_BENCH_SESSION_CONTEXT") != "",
		DisableBackgroundMerge: true,
		FilterCacheBytes:       map[bool]int64{true: -1}[os.Getenv("LAZYMEM_BENCH_FILTER_CACHE") == "off"],
	})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	qs := c.Queries
	if v := os.Getenv("LAZYMEM_DIAG_ONLY"); v != "" {
		// Only these cells' queries (for a profile with enough samples of
		// light cells; their caches then differ from the report's).
		only := strings.Split(v, ",")
		qs = slices.DeleteFunc(slices.Clone(qs), func(q Query) bool { return !slices.Contains(only, q.Class) })
	}
	d := map[string][]time.Duration{}
	cpu := map[string][]time.Duration{}
	var dst []Hit
	ctx := context.Background()
	// LAZYMEM_DIAG_EVICT_MB=N writes and reads N MiB before each pass, as
	// the report's Bleve passes do between lazymem's: the CPU's caches then
	// hold none of the previous pass's index (the report's regime).
	var evict []byte
	if mb := envInt("LAZYMEM_DIAG_EVICT_MB", 0); mb > 0 {
		evict = make([]byte, mb<<20)
	}
	pass := func(record bool) {
		var sum byte
		for i := 0; i < len(evict); i += 64 {
			evict[i]++
			sum += evict[(i*7919)%len(evict)]
		}
		evictSink = sum
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if n := envInt("LAZYMEM_DIAG_CPU", -1); n >= 0 {
			// The pass on one CPU (is one of the machine's CPUs slower?);
			// the thread gets its CPUs back before it is unlocked.
			var was, set unix.CPUSet
			if err := unix.SchedGetaffinity(0, &was); err != nil {
				b.Fatal(err)
			}
			set.Set(n)
			if err := unix.SchedSetaffinity(0, &set); err != nil {
				b.Fatal(err)
			}
			defer func() { _ = unix.SchedSetaffinity(0, &was) }()
		}
		for i := range qs {
			var el, ec time.Duration
			var err error
			pprof.Do(ctx, pprof.Labels("cell", qs[i].Class), func(context.Context) {
				c0, t0 := threadCPU(), time.Now()
				dst, err = l.Search(&qs[i], 10, dst[:0])
				el, ec = time.Since(t0), threadCPU()-c0
			})
			if err != nil {
				b.Fatal(err)
			}
			if record {
				d[qs[i].Class] = append(d[qs[i].Class], el)
				cpu[qs[i].Class] = append(cpu[qs[i].Class], ec)
			}
		}
	}
	pass(false)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pass(true)
	}
	b.StopTimer()
	if m := l.x.Metrics(); m.FilterCacheEntries > 0 {
		b.Logf("filter cache: %d entries, %.1f MiB", m.FilterCacheEntries, float64(m.FilterCacheBytes)/(1<<20))
	}
	cells := []string{"mid/none", "rare/none", "mid/agent", "rare/agent", "common/none", "cjk/agent"}
	if v := os.Getenv("LAZYMEM_BENCH_CELLS"); v != "" {
		cells = strings.Split(v, ",")
	}
	var keys []string
	for k := range d {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s, c := Summarize("lazymem", 10, d[k], 0), Summarize("lazymem", 10, cpu[k], 0)
		b.Logf("%-16s p50 %8v  p99 %8v  cpu p50 %8v  p99 %8v", k, s.P50, s.P99, c.P50, c.P99)
	}
	for _, k := range cells {
		if ds, ok := d[k]; ok {
			b.ReportMetric(float64(Summarize("lazymem", 10, ds, 0).P50.Nanoseconds()), strings.ReplaceAll(k, "/", "-")+"-p50-ns")
			b.ReportMetric(float64(Summarize("lazymem", 10, cpu[k], 0).P50.Nanoseconds()), strings.ReplaceAll(k, "/", "-")+"-cpu-p50-ns")
		}
	}
}

// TestZipfLazymemBuildDiag builds lazymem alone over the Zipf corpus into
// LAZYMEM_DIAG_BUILD_DIR (one writer, batches of 1000, as the report does),
// with LAZYMEM_DIAG_MERGE_FACTOR when set, waits for background merges to
// settle, and prints the ingest rate, the process CPU and the segments:
//
//	LAZYMEM_BENCH_N=1000000 LAZYMEM_BENCH_SESSION_CONTEXT=1 LAZYMEM_DIAG_BUILD_DIR=DIR \
//	    go test -tags diag ./bench -run TestZipfLazymemBuildDiag -v -timeout 1h
func TestZipfLazymemBuildDiag(t *testing.T) {
	dir := os.Getenv("LAZYMEM_DIAG_BUILD_DIR")
	if dir == "" {
		t.Fatal("set LAZYMEM_DIAG_BUILD_DIR to an empty directory")
	}
	c, err := LoadZipf(zipf.Config{Seed: zipfSeed(), Records: zipfN()}, 1, zipfQuerySeed)
	if err != nil {
		t.Fatal(err)
	}
	opts := index.Options{SessionContext: os.Getenv("LAZYMEM_BENCH_SESSION_CONTEXT") != "",
		MergeFactor: envInt("LAZYMEM_DIAG_MERGE_FACTOR", 0)}
	c0 := processCPU()
	l, st, err := BuildLazymem(dir, c.Docs, 1000, opts)
	if err != nil {
		t.Fatal(err)
	}
	cpu := processCPU() - c0
	// Background merges the last flush started: settled once no merge has
	// ended for 30 s (a merge of 1M records takes ~8 s at load 17).
	t0 := time.Now()
	for prev := -1; ; {
		time.Sleep(30 * time.Second)
		m := l.Index().Metrics()
		if int(m.Merges) == prev {
			break
		}
		prev = int(m.Merges)
	}
	m := l.Index().Metrics()
	t.Logf("%d records: durable %v (%.0f rec/s), CPU to durable %v; settled after %v more, CPU %v; %d segments, %d merges",
		st.Records, st.Durable, float64(st.Records)/st.Durable.Seconds(), cpu, time.Since(t0), processCPU()-c0, m.Segments, m.Merges)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}
