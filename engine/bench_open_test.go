package engine

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// BenchmarkOpen is the Open of a persisted store (the log's recovery, the
// index's segments read whole, checksummed and their field postings and
// time index rebuilt, the embedding cache's disk tier), the time a new
// process waits before its first recall: corpus=workload is
// BenchmarkRecall's store, corpus=zipf BenchmarkRecallZipf's (the same
// LAZYMEM_BENCH_N and LAZYMEM_BENCH_DIR). Each op closes the DB (untimed)
// and opens it again; reports the median and slowest Open.
func BenchmarkOpen(b *testing.B) {
	n := benchN(b)
	for _, corpus := range []string{"workload", "zipf"} {
		b.Run(fmt.Sprintf("n=%d/corpus=%s", n, corpus), func(b *testing.B) {
			var s *benchStore
			if corpus == "zipf" {
				s, _, _ = getZipfStore(b, n)
			} else {
				s = getBenchStore(b, n)
			}
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				if err := s.db.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				t := time.Now()
				db, err := Open(s.dir, benchOptions(0))
				lat = append(lat, time.Since(t))
				if err != nil {
					b.Fatal(err)
				}
				s.db = db
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
		})
	}
}
