package engine

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/lazymem/lazymem/bench/zipf"
)

// BenchmarkRecallZipfSparse is the engine's broad stage alone on the
// bench/zipf corpus: Recall in ModeSparse, K = Candidates = 10 (the index
// report's cells, through the engine: query preparation, the filter
// bitmap, BM25, the session chain and assembly), per filter kind (agent,
// session, window, none: no agent named) and query class, caches warm.
// Reports p50/p99 and the filter and broad stages' medians.
func BenchmarkRecallZipfSparse(b *testing.B) {
	n := benchN(b)
	for _, filter := range []zipf.FilterKind{zipf.Agent, zipf.Session, zipf.Window, zipf.None} {
		for _, class := range []zipf.Class{zipf.Rare, zipf.Mid, zipf.CJK} {
			b.Run(fmt.Sprintf("n=%d/filter=%s/class=%s", n, filter, class), func(b *testing.B) {
				benchRecallZipfSparse(b, n, filter, class)
			})
		}
	}
}

func benchRecallZipfSparse(b *testing.B, n int, filter zipf.FilterKind, class zipf.Class) {
	s, cfg, recs := getZipfStore(b, n)
	all, err := zipf.Queries(cfg, recs, 20, 42)
	if err != nil {
		b.Fatal(err)
	}
	var qs []Query
	for _, zq := range all {
		if zq.Filter != filter || zq.Class != class {
			continue
		}
		q := Query{Text: zq.Text, Agent: zq.Agent, Since: zq.Since, Until: zq.Until, Mode: ModeSparse, K: 10, Candidates: 10}
		if zq.Session != "" {
			q.Sessions = []string{zq.Session}
		}
		qs = append(qs, q)
	}
	if len(qs) == 0 {
		b.Skip("no queries of this cell")
	}
	ctx := context.Background()
	for _, q := range qs {
		if _, err := s.db.Recall(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, 0, b.N)
	var stages [2][]time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		res, err := s.db.Recall(ctx, qs[i%len(qs)])
		lat = append(lat, time.Since(t))
		if err != nil {
			b.Fatal(err)
		}
		stages[0] = append(stages[0], res.Stats.Durations.Filter)
		stages[1] = append(stages[1], res.Stats.Durations.Broad)
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-us")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-us")
	for j, name := range []string{"filter", "broad"} {
		slices.Sort(stages[j])
		b.ReportMetric(float64(stages[j][len(stages[j])/2].Nanoseconds())/1e3, name+"-p50-us")
	}
}
