package gloss

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func realDir(b *testing.B) string {
	dir := os.Getenv("LAZYMEM_CEDICT_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", DefaultDir)
	}
	if _, err := os.Stat(filepath.Join(dir, DictFile)); err != nil {
		b.Skipf("CC-CEDICT absent in %s (make cedict): %v", dir, err)
	}
	return dir
}

// BenchmarkLoadDict: reading and parsing CC-CEDICT (11 MB), once per
// process that opens the gloss embedder; retained-MB is the heap the
// loaded dictionary keeps.
func BenchmarkLoadDict(b *testing.B) {
	dir := realDir(b)
	b.ReportAllocs()
	var d *Dict
	for b.Loop() {
		d = nil
		var err error
		if d, err = LoadDict(dir); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	var alive, freed runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&alive)
	runtime.KeepAlive(d)
	runtime.GC()
	runtime.ReadMemStats(&freed)
	b.ReportMetric(float64(alive.HeapAlloc-freed.HeapAlloc)/(1<<20), "retained-MB")
}

// BenchmarkGloss: glossing one chat turn of 46 characters, the work the
// gloss embedder adds before USE-lite (about 5 ms per turn,
// docs/benchmarks/use.md).
func BenchmarkGloss(b *testing.B) {
	d, err := LoadDict(realDir(b))
	if err != nil {
		b.Fatal(err)
	}
	const turn = "对了提醒你一下，我对虾过敏，吃海鲜的时候要避开虾，螃蟹倒是没问题。我们关于产品上线时间达成了共识。"
	b.SetBytes(int64(len(turn)))
	b.ReportAllocs()
	for b.Loop() {
		_ = d.Gloss(turn, DefaultSenses)
	}
}
