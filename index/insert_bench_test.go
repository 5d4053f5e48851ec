package index

import (
	"fmt"
	"testing"
	"time"

	"github.com/lazymem/lazymem/bench/zipf"
)

// BenchmarkInsertZipf times the serial part of indexing alone: AddAnalyzed
// (session context, the insert into the mutable segment) of issue 16's
// Zipf corpus in batches of 1000, each batch analysed before the timer
// starts, into one mutable segment, then its seal (Flush, in memory).
// cpu-us/record is the process CPU over the inserts (both insert
// goroutines), seal-cpu-us/record over the seal.
//
//	go test ./index -run '^$' -bench InsertZipf -benchtime 2x
func BenchmarkInsertZipf(b *testing.B) {
	const records = 131072
	recs, err := zipf.Generate(zipf.Config{Seed: 1, Records: records})
	if err != nil {
		b.Fatal(err)
	}
	docs := make([]Doc, len(recs))
	for i, r := range recs {
		docs[i] = Doc{ID: uint64(i + 1), Time: r.Time.UnixNano(), Agent: r.Agent, Session: r.Session, Text: r.Text}
	}
	p := ptrs(docs)
	b.Run(fmt.Sprintf("records=%d", records), func(b *testing.B) {
		b.ReportAllocs()
		var ins, cpu, seal time.Duration
		for b.Loop() {
			b.StopTimer()
			x, err := Open("", Options{SessionContext: true, FlushDocs: 1 << 30, DisableBackgroundMerge: true}, nil)
			if err != nil {
				b.Fatal(err)
			}
			as := make([]*Analyzed, 0, records/1000+1)
			for lo := 0; lo < len(p); lo += 1000 {
				a := x.Analyze(p[lo:min(lo+1000, len(p))])
				a.wg.Wait()
				as = append(as, a)
			}
			b.StartTimer()
			t0, c0 := time.Now(), processCPU()
			for i, a := range as {
				lo := i * 1000
				if err := x.AddAnalyzed(p[lo:min(lo+1000, len(p))], a); err != nil {
					b.Fatal(err)
				}
			}
			ins += time.Since(t0)
			cpu += processCPU() - c0
			c0 = processCPU()
			if err := x.Flush(); err != nil {
				b.Fatal(err)
			}
			seal += processCPU() - c0
			b.StopTimer()
			if err := x.Close(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(records*b.N), "cpu-us/record")
		b.ReportMetric(float64(ins.Nanoseconds())/1e3/float64(records*b.N), "wall-us/record")
		b.ReportMetric(float64(seal.Nanoseconds())/1e3/float64(records*b.N), "seal-cpu-us/record")
	})
}
