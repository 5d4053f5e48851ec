package workload

import (
	"strconv"
	"testing"
)

// BenchmarkGenerate measures records per second, planning included (the
// plan is part of the cost of a corpus). b.SetBytes uses the text bytes of
// one record on average, so MB/s is text throughput.
func BenchmarkGenerate(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run("records="+strconv.Itoa(n), func(b *testing.B) {
			if n > 100_000 && testing.Short() {
				b.Skip("short")
			}
			b.ReportAllocs()
			var bytes int64
			cpu0 := cpuNanos()
			for b.Loop() {
				g := New(Config{Seed: 1, Records: n})
				var r Record
				bytes = 0
				for g.Next(&r) {
					bytes += int64(len(r.Text))
				}
			}
			cpu := cpuNanos() - cpu0
			b.SetBytes(bytes)
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
			if cpu > 0 {
				b.ReportMetric(float64(cpu)/float64(n*b.N), "cpu-ns/record")
			}
		})
	}
}

func BenchmarkNext(b *testing.B) {
	g := New(Config{Seed: 1, Records: 1 << 24})
	var r Record
	b.ReportAllocs()
	for b.Loop() {
		g.Next(&r)
	}
}

func BenchmarkQueries(b *testing.B) {
	g := New(Config{Seed: 1, Records: 1_000_000})
	b.ReportAllocs()
	for b.Loop() {
		g.Queries(1000)
	}
}

func BenchmarkKeywordQueries(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		KeywordQueries(Config{}, 1000, 1)
	}
}
