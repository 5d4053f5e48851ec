package embed

import (
	"context"
	"testing"

	"github.com/lazymem/lazymem/bench/zipf"
)

// BenchmarkHashZipf embeds batches of 51 records of the bench/zipf corpus
// (a cold recall's candidates and its query, under an agent filter) on
// one worker: memo=cold with a new embedder a batch (empty stem memos, as
// in a new process), memo=warm with one embedder whose memos fill (the
// corpus's 50,000 words exceed them, as a long-running process's do).
func BenchmarkHashZipf(b *testing.B) {
	cfg := zipf.Config{Seed: 1, Records: 20_000}
	cfg.EnsureDefaults()
	recs, err := zipf.Generate(cfg)
	if err != nil {
		b.Fatal(err)
	}
	for _, memo := range []string{"cold", "warm"} {
		b.Run("batch=51/memo="+memo, func(b *testing.B) {
			h := newHash(b, HashOptions{Workers: 1})
			texts := make([]string, 51)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				for j := range texts {
					texts[j] = recs[(i*len(texts)+j)%len(recs)].Text
				}
				if memo == "cold" {
					h = newHash(b, HashOptions{Workers: 1})
				}
				if _, err := h.Embed(context.Background(), texts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
