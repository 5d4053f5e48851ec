package suite

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/engine/embed"
)

// The go test -bench comparisons of issue 6, at 10k records (seed 1):
//
//	go test ./bench/suite -run '^$' -bench . -benchtime 3x -count 3
//
// Every op of BenchmarkIngest and BenchmarkScenario starts from an empty
// system; BenchmarkRecall ingests once and times one query per op, rotating
// over the labelled and keyword queries (lazymem's embedding cache warms up
// over the ops: embed-texts/op shows how much it still embeds).

const (
	benchRecords  = 10_000
	benchScenario = 100 // queries per BenchmarkScenario op
)

var (
	benchOnce sync.Once
	benchW    *Workload
	benchCfg  Config
	benchErr  error
)

func benchWorkload(b *testing.B) (*Workload, Config, []workload.Query) {
	b.Helper()
	benchOnce.Do(func() {
		benchCfg = Config{Records: benchRecords, Seed: 1}
		benchCfg.EnsureDefaults()
		benchW, benchErr = NewWorkload(benchCfg)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchW, benchCfg, append(append([]workload.Query(nil), benchW.Labelled...), benchW.Keyword...)
}

func textBytes(recs []workload.Record) int64 {
	var n int64
	for i := range recs {
		n += int64(len(recs[i].Text))
	}
	return n
}

func benchEmbedder(b *testing.B) embed.Embedder {
	e, err := NewEmbedder()
	if err != nil {
		b.Fatal(err)
	}
	return e
}

func ingestAll(ctx context.Context, b *testing.B, s System, recs []workload.Record, batch int) {
	for i := 0; i < len(recs); i += batch {
		if err := s.Ingest(ctx, recs[i:min(i+batch, len(recs))]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkIngest(b *testing.B) {
	w, cfg, _ := benchWorkload(b)
	ctx := context.Background()
	for _, name := range Systems {
		b.Run(fmt.Sprintf("n=%d/system=%s", benchRecords, name), func(b *testing.B) {
			e := benchEmbedder(b)
			b.ReportAllocs()
			b.SetBytes(textBytes(w.Records))
			var texts, api int64
			for b.Loop() {
				s, err := Open(name, cfg, e, b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				ingestAll(ctx, b, s, w.Records, cfg.Batch)
				b.StopTimer()
				u := s.Usage()
				texts, api = texts+u.Texts, api+u.APICalls
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(texts)/float64(b.N), "embed-texts/op")
			b.ReportMetric(float64(api)/float64(b.N), "api-req/op")
			b.ReportMetric(float64(benchRecords)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

func BenchmarkRecall(b *testing.B) {
	w, cfg, qs := benchWorkload(b)
	ctx := context.Background()
	for _, name := range Systems {
		b.Run(fmt.Sprintf("n=%d/system=%s", benchRecords, name), func(b *testing.B) {
			s, err := Open(name, cfg, benchEmbedder(b), b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			ingestAll(ctx, b, s, w.Records, cfg.Batch)
			u0 := s.Usage()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := s.Query(ctx, qs[i%len(qs)], cfg.K); err != nil {
					b.Fatal(err)
				}
				i++
			}
			u := s.Usage().Sub(u0)
			b.ReportMetric(float64(u.Texts)/float64(b.N), "embed-texts/op")
			b.ReportMetric(float64(u.APICalls)/float64(b.N), "api-req/op")
		})
	}
}

func BenchmarkScenario(b *testing.B) {
	w, cfg, qs := benchWorkload(b)
	qs = qs[:min(benchScenario, len(qs))]
	ctx := context.Background()
	for _, name := range Systems {
		b.Run(fmt.Sprintf("n=%d/q=%d/system=%s", benchRecords, len(qs), name), func(b *testing.B) {
			e := benchEmbedder(b)
			b.ReportAllocs()
			var texts, api int64
			for b.Loop() {
				s, err := Open(name, cfg, e, b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				ingestAll(ctx, b, s, w.Records, cfg.Batch)
				for _, q := range qs {
					if _, err := s.Query(ctx, q, cfg.K); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				u := s.Usage()
				texts, api = texts+u.Texts, api+u.APICalls
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(texts)/float64(b.N), "embed-texts/op")
			b.ReportMetric(float64(api)/float64(b.N), "api-req/op")
		})
	}
}
