package analysis

import (
	"fmt"
	"testing"

	"github.com/lazymem/lazymem/bench/workload"
)

// BenchmarkAnalyzeWorkload analyzes the project's synthetic chat corpus
// (bench/workload: Zipf vocabulary, 3% Chinese, tool turns) record by
// record, as indexing does. A fresh analyzer per iteration, so cache misses
// (the stemmer) are included: this is the cost of indexing, not a warm
// loop. cache=off shows what the snowball stemmer alone would cost.
func BenchmarkAnalyzeWorkload(b *testing.B) {
	const records = 20_000
	g := workload.New(workload.Config{Seed: 1, Records: records})
	var r workload.Record
	texts := make([]string, 0, records)
	size := 0
	for g.Next(&r) {
		texts = append(texts, r.Text)
		size += len(r.Text)
	}
	if err := g.Err(); err != nil {
		b.Fatal(err)
	}
	for _, cache := range []string{"cold", "warm", "off"} {
		b.Run(fmt.Sprintf("records=%d/cache=%s", records, cache), func(b *testing.B) {
			o := DefaultOptions()
			if cache == "off" {
				o.CacheSize = -1
			}
			warm := mustNew(b, o)
			for _, s := range texts {
				warm.AppendTokens(nil, s)
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			tokens := 0
			cpu0 := processCPU()
			for b.Loop() {
				a := warm
				if cache != "warm" {
					a = mustNew(b, o)
				}
				var dst []Token
				for _, s := range texts {
					dst = a.AppendTokens(dst[:0], s)
					tokens += len(dst)
				}
			}
			cpu := processCPU() - cpu0
			reportCPU(b, cpu, float64(size), float64(tokens))
			b.ReportMetric(float64(records*b.N)/b.Elapsed().Seconds(), "records/s")
			if cpu > 0 {
				b.ReportMetric(float64(records*b.N)/cpu.Seconds(), "cpu-records/s")
			}
		})
	}
}
