package eval

import (
	"context"
	"testing"

	"github.com/lazymem/lazymem/engine"
)

// BenchmarkRun times one whole evaluation (ingest of the 6 conversations
// into a fresh store, then every question) per embedder and mode, and
// reports R@10 and the texts embedded. The replay vectors are loaded once
// per iteration, inside the timing, as `lazymem eval locomo` would.
//
//	go test ./bench/eval -run '^$' -bench Run -benchtime 1x -count 3
func BenchmarkRun(b *testing.B) {
	dir := dataDir(b)
	for _, emb := range []struct{ name, spec string }{{"hash", "hash"}, {"replay", "replay:" + dir}} {
		for _, mode := range DefaultModes {
			b.Run("embedder="+emb.name+"/mode="+string(mode), func(b *testing.B) {
				b.ReportAllocs()
				var run *RunReport
				for b.Loop() {
					rep, err := Run(context.Background(), Config{DataDir: dir, Embedder: emb.spec, Modes: []engine.Mode{mode}})
					if err != nil {
						b.Fatal(err)
					}
					run = rep.Runs[0]
				}
				b.ReportMetric(run.Recall[10], "R@10")
				b.ReportMetric(float64(run.Embedded), "embedded")
				b.ReportMetric(float64(run.Questions), "questions")
			})
		}
	}
}
