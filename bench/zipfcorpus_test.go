package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lazymem/lazymem/bench/zipf"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/index"
)

// TestZipfSideBySideSmall builds both engines over a small Zipf corpus and
// checks every class: hits honour every filter (session included), both
// engines answer, pruned equals exhaustive, the report has a row per cell;
// then that a second build with the same CacheKey reuses the indexes.
func TestZipfSideBySideSmall(t *testing.T) {
	cfg := zipf.Config{Seed: 3, Records: 4000, Agents: 8, CJKShare: 0.25}
	c, err := LoadZipf(cfg, 4, 11)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	opts := SideBySideOptions{Dir: dir, Corpus: c, BatchSize: 500, CacheKey: "small-1", Index: index.Options{SessionContext: true},
		Engine: &engine.Options{}}
	s, err := BuildSideBySide(opts)
	if err != nil {
		t.Fatal(err)
	}
	const k = 10
	nonEmpty := map[string][2]int{}
	for i := range c.Queries {
		q := &c.Queries[i]
		for j, e := range []Engine{s.Lazymem, s.Bleve} {
			h, err := e.Search(q, k, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range h {
				checkHit(t, c.Docs, e.Name(), q, x)
			}
			if len(h) > 0 {
				n := nonEmpty[q.Class]
				n[j]++
				nonEmpty[q.Class] = n
			}
		}
	}
	for _, cl := range zipf.Classes {
		for _, f := range zipf.Filters {
			name := string(cl) + "/" + string(f)
			// A session is ~20 records: mid and rare words rarely occur in
			// one of a corpus this small.
			if f == zipf.Session && cl != zipf.Common && cl != zipf.Long {
				continue
			}
			if n := nonEmpty[name]; n[0] == 0 || n[1] == 0 {
				t.Errorf("%s: non-empty answers lazymem %d, bleve %d", name, n[0], n[1])
			}
		}
	}
	r, err := s.RunClasses(k, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(zipf.Classes)*len(zipf.Filters) + 1; len(r.Rows) != want {
		t.Fatalf("%d rows, want %d", len(r.Rows), want)
	}
	for _, row := range r.Rows {
		if row.Exact != row.Queries || row.Lazymem.Queries != row.Queries {
			t.Errorf("%s: %d of %d queries exact, %d timed", row.Class, row.Exact, row.Queries, row.Lazymem.Queries)
		}
	}
	if all := r.Rows[len(r.Rows)-1]; all.Class != "all" || all.Queries != len(c.Queries) {
		t.Fatalf("last row %+v", all)
	}
	md := r.Markdown()
	if !strings.Contains(md, "| cjk/session | 4 |") {
		t.Fatalf("markdown lacks the cjk/session row:\n%s", md)
	}
	// The whole engine first (the headline), the index alone, Bleve, each
	// timed over every record, and a ratio for each lazymem row.
	ingest := s.Ingest
	if len(ingest) != 3 || ingest[0].Engine != IngestEngine+", session context on" ||
		ingest[1].Engine != IngestIndexOnly+", session context on" || ingest[2].Engine != "bleve" {
		t.Fatalf("ingest rows %+v", ingest)
	}
	for _, st := range ingest {
		if st.Records != len(c.Docs) || st.Durable < st.Apply || st.Apply <= 0 {
			t.Errorf("ingest %+v", st)
		}
	}
	if strings.Count(md, "Ingest ratio ") != 2 || !strings.Contains(md, "Ingest ratio "+IngestEngine) {
		t.Fatalf("markdown lacks the ingest ratios:\n%s", md)
	}
	if _, err := os.Stat(filepath.Join(dir, "lazymem-engine")); !os.IsNotExist(err) {
		t.Fatalf("the whole engine's store was left behind: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := BuildSideBySide(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(s2.Ingest) != 3 || s2.Ingest[0] != ingest[0] || s2.Ingest[1] != ingest[1] || s2.Ingest[2] != ingest[2] {
		t.Fatalf("cached build: ingest %+v, first build %+v", s2.Ingest, ingest)
	}
	if n := s2.Lazymem.Index().Metrics().Docs; n != uint64(len(c.Docs)) {
		t.Fatalf("cached lazymem has %d docs", n)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	opts.CacheKey = "small-2"
	s3, err := BuildSideBySide(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	if s3.Ingest[0] == ingest[0] {
		t.Fatal("another CacheKey reused the first build")
	}
}

// zipfN is the corpus size of the Zipf comparison: LAZYMEM_BENCH_N, default
// 200,000 records.
func zipfN() int { return envInt("LAZYMEM_BENCH_N", 200000) }

// Seeds of the Zipf comparison; LAZYMEM_ZIPF_SEED picks another corpus of
// the family (the held-out one).
const zipfQuerySeed = 17

func zipfSeed() int64 { return int64(envInt("LAZYMEM_ZIPF_SEED", 20261201)) }

var sharedZipf struct {
	once sync.Once
	s    *SideBySide
	err  error
}

// sharedZipfConfig is the corpus of sharedZipfSideBySide.
func sharedZipfConfig() zipf.Config { return zipf.Config{Seed: zipfSeed(), Records: zipfN()} }

// sharedZipfSideBySide builds (or, with LAZYMEM_BENCH_CACHE=DIR, reuses
// from DIR) both engines over the Zipf corpus once per process.
func sharedZipfSideBySide(tb testing.TB) *SideBySide {
	tb.Helper()
	sharedZipf.once.Do(func() {
		o := ZipfOptions{
			Corpus:         sharedZipfConfig(),
			PerClass:       envInt("LAZYMEM_BENCH_PER_CLASS", 100),
			QuerySeed:      zipfQuerySeed,
			Dir:            os.Getenv("LAZYMEM_BENCH_CACHE"),
			Cache:          true,
			SessionContext: os.Getenv("LAZYMEM_BENCH_SESSION_CONTEXT") != "",
			// LAZYMEM_BENCH_FILTER_CACHE=off: lazymem's index without its
			// filter cache (the cache's own measurement).
			FilterCacheBytes: map[bool]int64{true: -1}[os.Getenv("LAZYMEM_BENCH_FILTER_CACHE") == "off"],
		}
		if o.Dir == "" {
			d, err := os.MkdirTemp("", "lazymem-bench-zipf-")
			if err != nil {
				sharedZipf.err = err
				return
			}
			o.Dir, o.Cache = d, false
			cleanups = append(cleanups, func() { _ = os.RemoveAll(d) })
		}
		sharedZipf.s, sharedZipf.err = ZipfSideBySide(o)
		cleanups = append(cleanups, func() {
			if sharedZipf.s != nil {
				_ = sharedZipf.s.Close()
			}
		})
	})
	if sharedZipf.err != nil {
		tb.Fatal(sharedZipf.err)
	}
	return sharedZipf.s
}

// BenchmarkZipfBroad times the broad stage (top 10) of lazymem and of
// Bleve's filter formulation per class/filter cell of the Zipf corpus: one
// op is one pass over the cell's queries; p50-ns and p99-ns are per-query.
// Sub-benchmarks run one after the other: for ratios under a shared load,
// use TestZipfReport, which alternates the engines.
func BenchmarkZipfBroad(b *testing.B) {
	s := sharedZipfSideBySide(b)
	cells := map[string][]Query{}
	var order []string
	for _, q := range s.Corpus.Queries {
		if _, ok := cells[q.Class]; !ok {
			order = append(order, q.Class)
		}
		cells[q.Class] = append(cells[q.Class], q)
	}
	n := len(s.Corpus.Docs)
	for _, cell := range order {
		qs := cells[cell]
		cl, f, _ := strings.Cut(cell, "/")
		for _, e := range []Engine{s.Lazymem, s.Bleve.Formulation(false)} {
			b.Run(fmt.Sprintf("n=%d/class=%s/filter=%s/engine=%s", n, cl, f, e.Name()), func(b *testing.B) {
				if _, _, err := timeQueries(e, qs, 10, nil); err != nil { // warm-up
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				d := make([]time.Duration, 0, len(qs))
				hits := 0
				for i := 0; i < b.N; i++ {
					var h int
					var err error
					if d, h, err = timeQueries(e, qs, 10, d); err != nil {
						b.Fatal(err)
					}
					hits += h
				}
				b.StopTimer()
				l := Summarize(e.Name(), 10, d, hits)
				b.ReportMetric(float64(l.P50.Nanoseconds()), "p50-ns")
				b.ReportMetric(float64(l.P99.Nanoseconds()), "p99-ns")
				b.ReportMetric(l.MeanHits, "hits/query")
			})
		}
	}
}

// BenchmarkZipfMixed times lazymem's broad stage over every query of the
// Zipf report in the report's order: one op is one pass over all cells, so
// each query finds the CPU caches as the report's queries do (warmed by
// queries of other cells, not by itself), unlike BenchmarkZipfBroad, whose
// passes repeat one cell's queries. It logs each cell's p50 and reports the
// p50 of the cells named by LAZYMEM_BENCH_CELLS (default mid/none,
// rare/none, mid/agent, rare/agent, common/none, common/agent). For
// profiles of the fixed per-query cost.
func BenchmarkZipfMixed(b *testing.B) {
	s := sharedZipfSideBySide(b)
	qs := s.Corpus.Queries
	e := Engine(s.Lazymem)
	d := map[string][]time.Duration{}
	var dst []Hit
	ctx := context.Background()
	pass := func(record bool) {
		for i := range qs {
			var el time.Duration
			var err error
			// The cell label lets a profile focus on one cell:
			// go tool pprof -tagfocus cell=rare/none.
			pprof.Do(ctx, pprof.Labels("cell", qs[i].Class), func(context.Context) {
				t0 := time.Now()
				dst, err = e.Search(&qs[i], 10, dst[:0])
				el = time.Since(t0)
			})
			if err != nil {
				b.Fatal(err)
			}
			if record {
				d[qs[i].Class] = append(d[qs[i].Class], el)
			}
		}
	}
	pass(false) // warm-up
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pass(true)
	}
	b.StopTimer()
	cells := []string{"mid/none", "rare/none", "mid/agent", "rare/agent", "common/none", "common/agent"}
	if v := os.Getenv("LAZYMEM_BENCH_CELLS"); v != "" {
		cells = strings.Split(v, ",")
	}
	var keys []string
	for c := range d {
		keys = append(keys, c)
	}
	slices.Sort(keys)
	for _, c := range keys {
		l := Summarize(e.Name(), 10, d[c], 0)
		b.Logf("%-16s p50 %8v  p99 %8v", c, l.P50, l.P99)
	}
	for _, c := range cells {
		if ds, ok := d[c]; ok {
			b.ReportMetric(float64(Summarize(e.Name(), 10, ds, 0).P50.Nanoseconds()), strings.ReplaceAll(c, "/", "-")+"-p50-ns")
		}
	}
}
