package workload

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/klauspost/compress/zstd"
)

// textStats measures what docs/benchmarks/workload.md reports: the text
// length distribution and the zstd ratio of the raw text in 64 KiB blocks.
type textStats struct {
	n                            int
	mean                         float64
	p10, p50, p90, p99, min, max int
	zstdRatio                    float64 // compressed/raw, level 3 (SpeedDefault)
	roles                        map[string]int
	cjk                          int            // records with Han characters
	words                        map[string]int // lowercased word counts
	tokens                       int
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
	s := textStats{roles: map[string]int{}, words: map[string]int{}}
	for g.Next(&r) {
		lens = append(lens, len(r.Text))
		s.roles[r.Role]++
		han := false
		for _, w := range strings.FieldsFunc(r.Text, func(c rune) bool {
			if unicode.Is(unicode.Han, c) {
				han = true
			}
			return !unicode.IsLetter(c) && !unicode.IsDigit(c) && c != '_'
		}) {
			s.words[strings.ToLower(w)]++
			s.tokens++
		}
		if han {
			s.cjk++
		}
		if len(block)+len(r.Text)+1 > 64<<10 {
			flush()
		}
		block = append(block, r.Text...)
		block = append(block, '\n')
	}
	flush()
	slices.Sort(lens)
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
//
// LAZYMEM_WORKLOAD_N sets the corpus size (default 50000; the write-up in
// docs/benchmarks/workload.md uses 1000000).
func TestTextStats(t *testing.T) {
	n := 50000
	if testing.Short() {
		n = 20000
	}
	if v := os.Getenv("LAZYMEM_WORKLOAD_N"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			t.Fatalf("LAZYMEM_WORKLOAD_N=%q: want an integer >= 1000", v)
		}
	}
	s := measure(t, Config{Seed: 1, Records: n})
	t.Logf("records=%d mean=%.1f p10=%d p50=%d p90=%d p99=%d min=%d max=%d zstd3/64KiB=%.3f",
		s.n, s.mean, s.p10, s.p50, s.p90, s.p99, s.min, s.max, s.zstdRatio)
	type wc struct {
		w string
		c int
	}
	var ws []wc
	hapax := 0
	for w, c := range s.words {
		ws = append(ws, wc{w, c})
		if c == 1 {
			hapax++
		}
	}
	slices.SortFunc(ws, func(a, b wc) int { return b.c - a.c })
	var top strings.Builder
	for _, x := range ws[:min(15, len(ws))] {
		top.WriteString(x.w + ":" + strconv.FormatFloat(100*float64(x.c)/float64(s.tokens), 'f', 2, 64) + "% ")
	}
	t.Logf("roles=%v cjk=%.2f%% tokens=%d distinct=%d hapax=%d", s.roles, 100*float64(s.cjk)/float64(s.n), s.tokens, len(s.words), hapax)
	t.Logf("top words: %s", top.String())
	if s.mean < 150 || s.mean > 260 {
		t.Errorf("mean text length %.1f, want about 200", s.mean)
	}
	if s.zstdRatio < 0.22 || s.zstdRatio > 0.42 {
		t.Errorf("zstd ratio %.3f, want 0.25-0.4", s.zstdRatio)
	}
}
