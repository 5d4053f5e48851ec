package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/index"
)

// Seeds of the comparison: explicit, fixed, quoted in docs/benchmarks/bleve.md.
const (
	benchSeed      = 20260101
	benchQuerySeed = 7
)

// envInt reads a positive integer knob from the environment.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// benchN is the corpus size of the benchmarks: LAZYMEM_BENCH_N, default 100k
// so that `go test -bench` stays short; the write-up runs 1M.
func benchN() int { return envInt("LAZYMEM_BENCH_N", 100000) }

var shared struct {
	once sync.Once
	s    *SideBySide
	err  error
}

// sharedSideBySide builds both indexes once per process, in a scratch
// directory removed by TestMain.
func sharedSideBySide(tb testing.TB) *SideBySide {
	tb.Helper()
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "lazymem-bench-bleve-")
		if err != nil {
			shared.err = err
			return
		}
		cleanups = append(cleanups, func() {
			if shared.s != nil {
				_ = shared.s.Close()
			}
			_ = os.RemoveAll(dir)
		})
		shared.s, shared.err = BuildSideBySide(SideBySideOptions{
			Dir:       dir,
			Workload:  workload.Config{Seed: benchSeed, Records: benchN()},
			Queries:   envInt("LAZYMEM_BENCH_QUERIES", 1000),
			QuerySeed: benchQuerySeed,
			// The engine indexes with session context by default; the
			// index package does not. LAZYMEM_BENCH_SESSION_CONTEXT=1
			// measures lazymem as the engine runs it.
			Index: index.Options{SessionContext: os.Getenv("LAZYMEM_BENCH_SESSION_CONTEXT") != ""},
		})
	})
	if shared.err != nil {
		tb.Fatal(shared.err)
	}
	return shared.s
}

// checkHit fails when h is outside q's filter.
func checkHit(t *testing.T, docs []Doc, engine string, q *Query, h Hit) {
	t.Helper()
	if h.ID == 0 || h.ID > uint64(len(docs)) {
		t.Fatalf("%s: hit id %d outside the corpus", engine, h.ID)
	}
	d := &docs[h.ID-1]
	if q.Agent != "" && d.Agent != q.Agent {
		t.Fatalf("%s: hit %d has agent %q, query asked %q", engine, h.ID, d.Agent, q.Agent)
	}
	if q.Session != "" && d.Session != q.Session {
		t.Fatalf("%s: hit %d has session %q, query asked %q", engine, h.ID, d.Session, q.Session)
	}
	if (q.Since != 0 && d.Time < q.Since) || (q.Until != 0 && d.Time >= q.Until) {
		t.Fatalf("%s: hit %d at %d outside [%d, %d)", engine, h.ID, d.Time, q.Since, q.Until)
	}
}

// TestSideBySideSmall builds both engines over a 2k-record workload and
// checks that both answer, that every hit honours the agent and time filter,
// that the overlap figures match a recomputation from the raw hits, and that
// lazymem's pruned top-k equals its exhaustive top-k.
func TestSideBySideSmall(t *testing.T) {
	s, err := BuildSideBySide(SideBySideOptions{
		Dir:       t.TempDir(),
		Workload:  workload.Config{Seed: 1, Records: 2000, Agents: 5},
		Queries:   60,
		QuerySeed: 3,
		BatchSize: 300,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(s.Corpus.Docs) != 2000 || len(s.Corpus.Queries) != 60 {
		t.Fatalf("corpus: %d docs, %d queries", len(s.Corpus.Docs), len(s.Corpus.Queries))
	}
	for _, st := range s.Ingest {
		if st.Records != 2000 {
			t.Fatalf("ingest %+v", st)
		}
	}
	const k = 10
	var nonEmpty [2]int
	sum := 0.0
	for i := range s.Corpus.Queries {
		q := &s.Corpus.Queries[i]
		lh, err := s.Lazymem.Search(q, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		bh, err := s.Bleve.Search(q, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range lh {
			checkHit(t, s.Corpus.Docs, "lazymem", q, h)
		}
		for _, h := range bh {
			checkHit(t, s.Corpus.Docs, "bleve", q, h)
		}
		if len(lh) > k || len(bh) > k {
			t.Fatalf("query %d: more than k hits: %d / %d", i, len(lh), len(bh))
		}
		if len(lh) > 0 {
			nonEmpty[0]++
		}
		if len(bh) > 0 {
			nonEmpty[1]++
		}
		// recompute the overlap by hand: |A ∩ B| / max(|A|, |B|)
		in := map[uint64]bool{}
		for _, h := range lh {
			in[h.ID] = true
		}
		common := 0
		for _, h := range bh {
			if in[h.ID] {
				common++
			}
		}
		want := 1.0
		if n := max(len(lh), len(bh)); n > 0 {
			want = float64(common) / float64(n)
		}
		if got := Overlap(bh, lh, k); got != want {
			t.Fatalf("query %d: Overlap %v, by hand %v", i, got, want)
		}
		sum += want
	}
	if nonEmpty[0] == 0 || nonEmpty[1] == 0 {
		t.Fatalf("non-empty answers: lazymem %d, bleve %d of %d", nonEmpty[0], nonEmpty[1], len(s.Corpus.Queries))
	}
	r, err := s.Run([]int{k}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Latency) != 3 || len(r.Agreement) < 3 {
		t.Fatalf("report: %d latencies, %d agreements", len(r.Latency), len(r.Agreement))
	}
	bl := r.Agreement[0]
	if bl.A != "bleve" || bl.B != "lazymem" || bl.MeanOverlap != sum/float64(len(s.Corpus.Queries)) {
		t.Fatalf("bleve agreement %+v, by hand mean %v", bl, sum/float64(len(s.Corpus.Queries)))
	}
	// Both Bleve formulations score alike, so they agree with lazymem about
	// equally; ties at the k-th place may be broken differently.
	if cj := r.Agreement[1]; cj.A != "bleve-conj" || cj.MeanOverlap < bl.MeanOverlap-0.05 {
		t.Fatalf("conjunction agreement %v vs filter clause %v", cj, bl)
	}
	if ex := r.Agreement[2]; ex.Identical != ex.Queries {
		t.Fatalf("pruned Search differs from SearchExhaustive: %v", ex)
	}
	t.Logf("nonempty lazymem %d bleve %d of %d; %v", nonEmpty[0], nonEmpty[1], len(s.Corpus.Queries), bl)
	if md := r.Markdown(); !strings.Contains(md, "| bleve vs lazymem | all | 10 |") {
		t.Fatalf("markdown lacks the agreement row:\n%s", md)
	}
}

// TestSideBySideReport runs the full comparison at LAZYMEM_BENCH_N records
// when LAZYMEM_BENCH_REPORT is set, prints the tables of
// docs/benchmarks/bleve.md, and checks that lazymem's pruned top-k equals
// its exhaustive top-k on every query at every k.
func TestSideBySideReport(t *testing.T) {
	if os.Getenv("LAZYMEM_BENCH_REPORT") == "" {
		t.Skip("set LAZYMEM_BENCH_REPORT=1 (and LAZYMEM_BENCH_N) to run the side-by-side report")
	}
	s := sharedSideBySide(t)
	r, err := s.Run([]int{10, 100}, envInt("LAZYMEM_BENCH_ROUNDS", 3))
	if err != nil {
		t.Fatal(err)
	}
	md := r.Markdown()
	fmt.Fprintf(os.Stdout, "corpus generated in %v\n\n%s\n", s.GenTime.Round(time.Millisecond), md)
	if out := os.Getenv("LAZYMEM_BENCH_REPORT_OUT"); out != "" {
		if err := os.WriteFile(filepath.Clean(out), []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range r.Agreement {
		if g.A == "lazymem-exhaustive" && g.Identical != g.Queries {
			t.Errorf("pruned Search differs from SearchExhaustive: %v", g)
		}
	}
}

// BenchmarkBroad times the broad stage of both engines over the shared
// corpus: one op is one pass over the query set; p50-ns and p99-ns are the
// per-query percentiles over all passes, ns/query the mean. The overlap
// metric (outside the timer) is Bleve's top-k against lazymem's, and
// lazymem's pruned top-k against its exhaustive one.
func BenchmarkBroad(b *testing.B) {
	s := sharedSideBySide(b)
	qs := s.Corpus.Queries
	n := len(s.Corpus.Docs)
	for _, e := range []Engine{s.Lazymem, s.Bleve.Formulation(false), s.Bleve.Formulation(true)} {
		for _, k := range []int{10, 100} {
			b.Run(fmt.Sprintf("n=%d/engine=%s/k=%d", n, e.Name(), k), func(b *testing.B) {
				peer := s.Lazymem.Exhaustive()
				if e.Name() != "lazymem" {
					peer = e
				}
				g, err := Compare(peer, s.Lazymem, qs, k)
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := timeQueries(e, qs, k, nil); err != nil { // warm-up
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				d := make([]time.Duration, 0, len(qs))
				hits := 0
				for i := 0; i < b.N; i++ {
					var h int
					if d, h, err = timeQueries(e, qs, k, d); err != nil {
						b.Fatal(err)
					}
					hits += h
				}
				b.StopTimer()
				l := Summarize(e.Name(), k, d, hits)
				b.ReportMetric(float64(l.P50.Nanoseconds()), "p50-ns")
				b.ReportMetric(float64(l.P99.Nanoseconds()), "p99-ns")
				b.ReportMetric(float64(l.Mean.Nanoseconds()), "ns/query")
				b.ReportMetric(l.MeanHits, "hits/query")
				if e.Name() == "lazymem" {
					b.ReportMetric(g.MeanOverlap, "overlap-vs-exhaustive")
				} else {
					b.ReportMetric(g.MeanOverlap, "overlap-vs-lazymem")
				}
			})
		}
	}
}

// BenchmarkIngest loads the shared corpus into a fresh index of each engine
// per op, in batches of 1000, timed until the data is on disk (Bleve: its
// persister and merger idle; lazymem: Flush returned).
func BenchmarkIngest(b *testing.B) {
	s := sharedSideBySide(b)
	docs := s.Corpus.Docs
	for _, engine := range []string{"lazymem", "bleve"} {
		b.Run(fmt.Sprintf("n=%d/engine=%s", len(docs), engine), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(s.Corpus.TextBytes())
			var total time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				dir := filepath.Join(b.TempDir(), strconv.Itoa(i))
				b.StartTimer()
				var st IngestStats
				var err error
				switch engine {
				case "lazymem":
					var l *Lazymem
					l, st, err = BuildLazymem(dir, docs, 1000, s.Opts.Index)
					if err == nil {
						b.StopTimer()
						err = l.Close()
					}
				case "bleve":
					var bl *Bleve
					bl, st, err = BuildBleve(dir, docs, s.Opts.Bleve)
					if err == nil {
						b.StopTimer()
						err = bl.Close()
					}
				}
				if err != nil {
					b.Fatal(err)
				}
				total += st.Durable
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(float64(len(docs))*float64(b.N)/total.Seconds(), "records/s")
		})
	}
}
