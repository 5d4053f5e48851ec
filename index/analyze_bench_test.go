package index

import (
	"fmt"
	"testing"
)

// BenchmarkAnalyzeChunk times the per-chunk analysis step of Add (the
// analyzer plus per-document term-frequency counting) on the benchmark
// corpus, one goroutine, addChunk documents per op.
func BenchmarkAnalyzeChunk(b *testing.B) {
	n := min(benchN(), 20000)
	docs := ptrs(benchCorpus(b, n))
	x := &Index{opts: Options{}}
	x.opts.EnsureDefaults()
	var bytes int64
	for _, d := range docs[:addChunk] {
		bytes += int64(len(d.Text))
	}
	b.Run(fmt.Sprintf("docs=%d", addChunk), func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(bytes)
		bt := &batchTerms{}
		c := 0
		for b.Loop() {
			lo := c * addChunk % (len(docs) - addChunk)
			bt.terms, bt.tfs = bt.terms[:0], bt.tfs[:0]
			x.analyze(docs[lo:lo+addChunk], bt, nil, 0)
			c++
		}
	})
}
