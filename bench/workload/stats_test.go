package workload

import (
	"slices"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// textStats measures what docs/benchmarks/workload.md reports: the text
// length distribution and the zstd ratio of the raw text in 64 KiB blocks.
type textStats struct {
	n                            int
	mean                         float64
	p10, p50, p90, p99, min, max int
	zstdRatio                    float64 // compressed/raw, level 3 (SpeedDefault)
}

func measure(t testing.TB, cfg Config) textStats {
	t.Helper()
	g := New(cfg)
	var r Record
	var lens []int
	var raw, comp int
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	block := make([]byte, 0, 64<<10)
	var dst []byte
	flush := func() {
		if len(block) == 0 {
			return
		}
		dst = enc.EncodeAll(block, dst[:0])
		raw += len(block)
		comp += len(dst)
		block = block[:0]
	}
	for g.Next(&r) {
		lens = append(lens, len(r.Text))
		if len(block)+len(r.Text)+1 > 64<<10 {
			flush()
		}
		block = append(block, r.Text...)
		block = append(block, '\n')
	}
	flush()
	slices.Sort(lens)
	var s textStats
	s.n = len(lens)
	sum := 0
	for _, l := range lens {
		sum += l
	}
	s.mean = float64(sum) / float64(len(lens))
	q := func(p float64) int { return lens[int(p*float64(len(lens)-1))] }
	s.p10, s.p50, s.p90, s.p99 = q(0.10), q(0.50), q(0.90), q(0.99)
	s.min, s.max = lens[0], lens[len(lens)-1]
	s.zstdRatio = float64(comp) / float64(raw)
	return s
}

// TestTextStats keeps the corpus chat-like: mean length near 200 bytes and
// a zstd ratio like real chat logs (0.25-0.4), not like random letters
// (~0.6+) nor like a repeated template (<0.1).
func TestTextStats(t *testing.T) {
	n := 100000
	if testing.Short() {
		n = 20000
	}
	s := measure(t, Config{Seed: 1, Records: n})
	t.Logf("records=%d mean=%.1f p10=%d p50=%d p90=%d p99=%d min=%d max=%d zstd3/64KiB=%.3f",
		s.n, s.mean, s.p10, s.p50, s.p90, s.p99, s.min, s.max, s.zstdRatio)
	if s.mean < 150 || s.mean > 260 {
		t.Errorf("mean text length %.1f, want about 200", s.mean)
	}
	if s.zstdRatio < 0.22 || s.zstdRatio > 0.42 {
		t.Errorf("zstd ratio %.3f, want 0.25-0.4", s.zstdRatio)
	}
}
