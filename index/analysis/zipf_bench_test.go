package analysis

import (
	"fmt"
	"testing"

	"github.com/lazymem/lazymem/bench/zipf"
)

// BenchmarkAnalyzeZipf analyzes issue 16's Zipf corpus (Zipf(1.1) over
// 50,000 Latin words, a tenth of the agents writing Chinese script) record
// by record with AppendTerms, as indexing does, one long-lived analyzer
// over the whole corpus per op (a fresh one each op: the process-wide
// analyzer of an ingest sees each word first once, then its cache churns
// with the corpus's tail of rare words and CJK bigrams).
//
//	go test ./index/analysis -run '^$' -bench AnalyzeZipf -benchtime 3x
func BenchmarkAnalyzeZipf(b *testing.B) {
	const records = 200_000
	recs, err := zipf.Generate(zipf.Config{Seed: 1, Records: records})
	if err != nil {
		b.Fatal(err)
	}
	texts := make([]string, len(recs))
	size := 0
	for i := range recs {
		texts[i] = recs[i].Text
		size += len(texts[i])
	}
	b.Run(fmt.Sprintf("records=%d", records), func(b *testing.B) {
		b.SetBytes(int64(size))
		b.ReportAllocs()
		tokens := 0
		cpu0 := processCPU()
		var dst []string
		for b.Loop() {
			a := mustNew(b, DefaultOptions())
			for _, s := range texts {
				dst = a.AppendTerms(dst[:0], s)
				tokens += len(dst)
			}
		}
		cpu := processCPU() - cpu0
		reportCPU(b, cpu, float64(size), float64(tokens))
		if cpu > 0 {
			b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(records*b.N), "cpu-us/record")
		}
	})
}
