package index

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/lazymem/lazymem/bench/zipf"
)

// BenchmarkSegmentVersion runs the Zipf corpus's unfiltered queries of
// each class against indexes of the same records written as segment
// versions 3, 4 and 5 (session context on, merged to one segment), and reports the thread CPU time per query (on a loaded
// machine wall percentiles mostly measure the scheduler). -count repeats
// each sub-benchmark in a row: to alternate the versions, run -count 1 in
// a loop. LAZYMEM_BENCH_N sets the records (benchN: default 20000).
func BenchmarkSegmentVersion(b *testing.B) {
	n := benchN()
	cfg := zipf.Config{Seed: 20261201, Records: n}
	cfg.EnsureDefaults()
	recs, err := zipf.Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	qs, err := zipf.Queries(cfg, recs, 100, 17)
	if err != nil {
		b.Fatal(err)
	}
	docs := make([]Doc, len(recs))
	for i := range recs {
		r := &recs[i]
		docs[i] = Doc{ID: uint64(i + 1), Time: r.Time.UnixNano(), Agent: r.Agent, Session: r.Session, Role: r.Role, Text: r.Text}
	}
	idx := map[uint32]*Index{}
	for _, ver := range []uint32{segVersion3, segVersion4, segVersion5} {
		restore := writeVersion(ver)
		x, err := Open("", Options{SessionContext: true, FlushDocs: -1, DisableBackgroundMerge: true}, nil)
		if err != nil {
			b.Fatal(err)
		}
		p := ptrs(docs)
		for lo := 0; lo < len(p); lo += 1000 {
			if err := x.Add(p[lo:min(lo+1000, len(p))]); err != nil {
				b.Fatal(err)
			}
		}
		if err := x.Flush(); err != nil {
			b.Fatal(err)
		}
		restore()
		defer x.Close()
		idx[ver] = x
	}
	for _, class := range []zipf.Class{zipf.Rare, zipf.Mid, zipf.Common} {
		var texts []string
		for _, q := range qs {
			if q.Class == class && q.Filter == zipf.None {
				texts = append(texts, q.Text)
			}
		}
		for _, ver := range []uint32{segVersion3, segVersion4, segVersion5} {
			x := idx[ver]
			b.Run(fmt.Sprintf("n=%d/class=%s/version=%d", n, class, ver), func(b *testing.B) {
				b.ReportAllocs()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				cpu := make([]time.Duration, 0, b.N)
				var dst []Hit
				for i := 0; b.Loop(); i++ {
					c0 := threadCPU()
					if dst, err = x.Search(texts[i%len(texts)], nil, 10, dst); err != nil {
						b.Fatal(err)
					}
					cpu = append(cpu, threadCPU()-c0)
				}
				b.ReportMetric(float64(percentile(cpu, 0.50).Nanoseconds())/1e3, "cpu-p50-us")
			})
		}
	}
}
