package index

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/lazymem/lazymem/bench/workload"
)

// Benchmarks run on a bench/workload corpus of LAZYMEM_BENCH_N records
// (default 20000, 5000 with -short; the documented figures use 1000000).

const benchSeed = 42

func benchN() int {
	if v, err := strconv.Atoi(os.Getenv("LAZYMEM_BENCH_N")); err == nil && v > 0 {
		return v
	}
	if testing.Short() {
		return 5000
	}
	return 20000
}

func benchConfig(n int) workload.Config {
	return workload.Config{Seed: benchSeed, Records: n}
}

var corpusCache = map[int][]Doc{}
var corpusMu sync.Mutex

// benchCorpus generates (once per size) the corpus as index docs, ids from 1.
func benchCorpus(tb testing.TB, n int) []Doc {
	corpusMu.Lock()
	defer corpusMu.Unlock()
	if d, ok := corpusCache[n]; ok {
		return d
	}
	g := workload.New(benchConfig(n))
	docs := make([]Doc, 0, n)
	var r workload.Record
	for g.Next(&r) {
		d := Doc{ID: uint64(len(docs) + 1), Time: r.Time.UnixNano(), Agent: r.Agent, Session: r.Session, Role: r.Role, Text: r.Text}
		keys := make([]string, 0, len(r.Meta))
		for k := range r.Meta {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			d.Meta = append(d.Meta, Field{Key: k, Values: r.Meta[k]})
		}
		docs = append(docs, d)
	}
	if err := g.Err(); err != nil {
		tb.Fatal(err)
	}
	corpusCache[n] = docs
	return docs
}

func ptrs(docs []Doc) []*Doc {
	p := make([]*Doc, len(docs))
	for i := range docs {
		p[i] = &docs[i]
	}
	return p
}

// BenchmarkIndexing measures batched indexing throughput (records/s) and
// the heap retained per record. The timed region runs from Open to Close:
// every Add, the automatic flushes (to segment files for store=disk), the
// final Flush and any background merge in progress at Close.
func BenchmarkIndexing(b *testing.B) {
	n := benchN()
	docs := benchCorpus(b, n)
	p := ptrs(docs)
	var textBytes int64
	for i := range docs {
		textBytes += int64(len(docs[i].Text))
	}
	for _, store := range []string{"mem", "disk"} {
		b.Run(fmt.Sprintf("n=%d/batch=1000/store=%s", n, store), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(textBytes)
			var perRec float64
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				runtime.GC()
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				dir := ""
				if store == "disk" {
					dir = b.TempDir()
				}
				b.StartTimer()
				c0 := processCPU()
				x, err := Open(dir, Options{}, nil)
				if err != nil {
					b.Fatal(err)
				}
				for lo := 0; lo < len(p); lo += 1000 {
					if err := x.Add(p[lo:min(lo+1000, len(p))]); err != nil {
						b.Fatal(err)
					}
				}
				// Count the whole cost: the last flush, and (in Close) the
				// background merge in progress, if any.
				if err := x.Flush(); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				runtime.GC()
				var after runtime.MemStats
				runtime.ReadMemStats(&after)
				perRec = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(n)
				b.StartTimer()
				x.Close()
				b.StopTimer()
				cpu += processCPU() - c0
				b.StartTimer()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
			b.ReportMetric(perRec, "heapB/record")
			// Process CPU (all threads) per record: what the work costs,
			// independent of how busy the shared machine is.
			b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(n*b.N), "cpu-us/record")
		})
	}
}

var searchIdx = map[int]*Index{}

func benchIndex(b *testing.B, n int) *Index {
	corpusMu.Lock()
	x := searchIdx[n]
	corpusMu.Unlock()
	if x != nil {
		return x
	}
	docs := benchCorpus(b, n)
	p := ptrs(docs)
	x, err := Open("", Options{DisableBackgroundMerge: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for lo := 0; lo < len(p); lo += 1000 {
		if err := x.Add(p[lo:min(lo+1000, len(p))]); err != nil {
			b.Fatal(err)
		}
	}
	if err := x.Flush(); err != nil {
		b.Fatal(err)
	}
	// Leave several segments, as a live index has between merges.
	corpusMu.Lock()
	searchIdx[n] = x
	corpusMu.Unlock()
	return x
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// BenchmarkSearch: 2-4 term BM25 top-k queries (bench/workload
// KeywordQueries) with an agent filter and a 7-day time filter; the
// filter=agent+7d case includes building the filter bitmap. Reports p50 and
// p99 latency per query.
func BenchmarkSearch(b *testing.B) {
	n := benchN()
	x := benchIndex(b, n)
	qs := workload.KeywordQueries(benchConfig(n), 1000, benchSeed)
	for _, k := range []int{10, 100} {
		for _, mode := range []string{"agent+7d", "none", "exhaustive/agent+7d"} {
			b.Run(fmt.Sprintf("n=%d/k=%d/filter=%s", n, k, mode), func(b *testing.B) {
				b.ReportAllocs()
				// Thread CPU time per query too: on a shared, overloaded machine
				// wall-clock percentiles mostly measure the scheduler.
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				lat := make([]time.Duration, 0, b.N)
				cpu := make([]time.Duration, 0, b.N)
				var dst []Hit
				hits := 0
				for i := 0; i < b.N; i++ {
					q := &qs[i%len(qs)]
					t0, c0 := time.Now(), threadCPU()
					var err error
					switch mode {
					case "none":
						dst, err = x.Search(q.Text, nil, k, dst)
					default:
						f, ferr := x.Filter(&Filter{Agents: []string{q.Agent}, Since: q.Since.UnixNano(), Until: q.Until.UnixNano()})
						if ferr != nil {
							b.Fatal(ferr)
						}
						if mode == "agent+7d" {
							dst, err = x.Search(q.Text, f, k, dst)
						} else {
							dst, err = x.SearchExhaustive(q.Text, f, k)
						}
					}
					if err != nil {
						b.Fatal(err)
					}
					hits += len(dst)
					lat = append(lat, time.Since(t0))
					cpu = append(cpu, threadCPU()-c0)
				}
				b.ReportMetric(float64(percentile(lat, 0.50).Nanoseconds())/1e3, "p50-us")
				b.ReportMetric(float64(percentile(lat, 0.99).Nanoseconds())/1e3, "p99-us")
				b.ReportMetric(float64(percentile(cpu, 0.50).Nanoseconds())/1e3, "cpu-p50-us")
				b.ReportMetric(float64(percentile(cpu, 0.99).Nanoseconds())/1e3, "cpu-p99-us")
				b.ReportMetric(float64(hits)/float64(b.N), "hits/op")
			})
		}
	}
}

// BenchmarkFilter measures building the agent + 7-day filter bitmap alone.
func BenchmarkFilter(b *testing.B) {
	n := benchN()
	x := benchIndex(b, n)
	qs := workload.KeywordQueries(benchConfig(n), 1000, benchSeed)
	b.Run(fmt.Sprintf("n=%d/filter=agent+7d", n), func(b *testing.B) {
		b.ReportAllocs()
		card := uint64(0)
		for i := 0; i < b.N; i++ {
			q := &qs[i%len(qs)]
			f, err := x.Filter(&Filter{Agents: []string{q.Agent}, Since: q.Since.UnixNano(), Until: q.Until.UnixNano()})
			if err != nil {
				b.Fatal(err)
			}
			card += f.GetCardinality()
		}
		b.ReportMetric(float64(card)/float64(b.N), "ids/op")
	})
}

// BenchmarkOpen measures opening a persisted index (segment files read
// whole and checksummed, field postings and time index rebuilt) with no
// tail to re-index.
func BenchmarkOpen(b *testing.B) {
	n := benchN()
	docs := benchCorpus(b, n)
	p := ptrs(docs)
	dir := b.TempDir()
	x, err := Open(dir, Options{DisableBackgroundMerge: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for lo := 0; lo < len(p); lo += 1000 {
		if err := x.Add(p[lo:min(lo+1000, len(p))]); err != nil {
			b.Fatal(err)
		}
	}
	if err := x.Flush(); err != nil {
		b.Fatal(err)
	}
	m := x.Metrics()
	x.Close()
	b.Run(fmt.Sprintf("n=%d/segments=%d", n, m.Segments), func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(m.SegmentBytes)
		for i := 0; i < b.N; i++ {
			y, err := Open(dir, Options{DisableBackgroundMerge: true}, nil)
			if err != nil {
				b.Fatal(err)
			}
			if y.Metrics().Docs != uint64(n) {
				b.Fatal("docs lost")
			}
			y.Close()
		}
	})
}
