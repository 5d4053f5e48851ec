package wire

import (
	"testing"

	"github.com/lazymem/lazymem/bench/workload"
)

// BenchmarkParseRecords decodes the body of one POST /v1/records with 1000
// workload records.
//
//	go test ./cmd/internal/wire -run XXX -bench ParseRecords
func BenchmarkParseRecords(b *testing.B) {
	recs, err := workload.Records(workload.Config{Seed: 5, Records: 1000})
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"records":[`)
	for i := range recs {
		if i > 0 {
			body = append(body, ',')
		}
		body = workload.AppendJSON(body, &recs[i])
	}
	body = append(body, "]}"...)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		got, err := ParseRecords(body, now)
		if err != nil || len(got) != len(recs) {
			b.Fatal(len(got), err)
		}
	}
	b.ReportMetric(float64(b.N)*float64(len(recs))/b.Elapsed().Seconds(), "records/s")
}
