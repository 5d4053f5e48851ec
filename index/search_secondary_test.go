package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

func TestCoverCJK(t *testing.T) {
	for _, tc := range []struct {
		query string
		sec   []string
	}{
		{"数据库", []string{"库", "据", "数"}},
		{"猫", nil},                         // a lone character: no bigram covers it
		{"数据 猫", []string{"据", "数"}},       // 猫 is its own word
		{"cat 数据", []string{"据", "数"}},     // Latin terms are never secondary
		{"database", nil},                  // no CJK
		{"数据 据库", []string{"库", "据", "数"}}, // 据 covered twice, counted once
	} {
		x, err := Open("", Options{DisableBackgroundMerge: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := &searcher{}
		x.analyzeQuery(s, tc.query)
		var sec []string
		for _, q := range s.terms {
			if q.sec {
				sec = append(sec, q.text)
			}
		}
		slices.Sort(sec)
		want := slices.Clone(tc.sec)
		slices.Sort(want)
		if !slices.Equal(sec, want) {
			t.Errorf("%q: secondary %q, want %q (terms %v)", tc.query, sec, want, s.terms)
		}
		x.Close()
	}
}

// cjkCorpus writes CJK records of two-character words (first characters
// from a small set, as in a real script, so characters are shared by
// many words) and a share of Latin records.
func cjkCorpus(rng *rand.Rand, n, vocab int) []*Doc {
	z := rand.NewZipf(rng, 1.1, 2, uint64(vocab-1))
	docs := make([]*Doc, n)
	t := int64(1_700_000_000_000_000_000)
	for i := range docs {
		t += int64(1+rng.IntN(1000)) * 1e6
		var b strings.Builder
		latin := rng.IntN(4) == 0
		for j := 0; j < 1+rng.IntN(24); j++ {
			if latin {
				fmt.Fprintf(&b, "w%d ", z.Uint64())
				continue
			}
			if j > 0 && rng.IntN(8) == 0 {
				b.WriteString("，")
			}
			b.WriteString(cjkWord(int(z.Uint64())))
		}
		docs[i] = &Doc{ID: uint64(i), Time: t, Agent: fmt.Sprintf("a%d", rng.IntN(4)),
			Session: fmt.Sprintf("s%d", rng.IntN(10)), Role: "user", Text: b.String()}
	}
	return docs
}

func cjkWord(r int) string { return string([]rune{rune(0x4e00 + r/32), rune(0x4f00 + r%32)}) }

// TestSecondaryRule: the records holding a primary term are ranked when
// there are at least k of them; otherwise every matching record is.
func TestSecondaryRule(t *testing.T) {
	x, err := Open("", Options{DisableBackgroundMerge: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	docs := []*Doc{
		{ID: 0, Agent: "a", Text: "数据，" + strings.Repeat("天气很好，", 8)}, // holds the bigram 数据, long
		{ID: 1, Agent: "a", Text: "数数数数，据据据据，数据"},                     // the characters often, and the bigram
		{ID: 2, Agent: "a", Text: "数数数数，据据据据"},                        // the characters only
		{ID: 3, Agent: "a", Text: "天气很好"},
	}
	if err := x.Add(docs); err != nil {
		t.Fatal(err)
	}
	ids := func(k int) []uint64 {
		hs, err := x.Search("数据", nil, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []uint64
		for _, h := range hs {
			out = append(out, h.ID)
		}
		return out
	}
	if got := ids(2); !slices.Equal(got, []uint64{1, 0}) {
		t.Errorf("k=2: %v, want [1 0]: the records holding 数据", got)
	}
	if ex, err := x.SearchExhaustive("数据", nil, 2); err != nil || len(ex) != 2 || ex[1].ID != 0 {
		t.Errorf("SearchExhaustive k=2: %v, %v, want [1 0]", ex, err)
	}
	if got := ids(3); len(got) != 3 || !slices.Contains(got, 2) {
		t.Errorf("k=3: %v, want record 2 too (two records hold 数据)", got)
	}
	// Without the rule record 2 (characters only) outranks record 0.
	if got := ids(10); !slices.Equal(got, []uint64{1, 2, 0}) {
		t.Errorf("k=10: %v, want [1 2 0]", got)
	}
}

// TestSecondaryEqualsExhaustive checks the search of queries with
// secondary terms (CJK characters their bigrams cover) against the
// exhaustive reference, over segments, deletions and filters of every
// strategy, and that both branches of the rule ran.
func TestSecondaryEqualsExhaustive(t *testing.T) {
	seeds := 6
	if testing.Short() {
		seeds = 2
	}
	var ruled, fellBack int
	for seed := 1; seed <= seeds; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 11))
			vocab := 30 + rng.IntN(400)
			ratio := []float64{0.001, 2, 1e6}[seed%3]
			x, err := Open("idx", Options{FS: vfs.NewMem(), FlushDocs: -1, DisableBackgroundMerge: true,
				MergeFactor: 3, MergeMinDocs: 50, FilterDrivenRatio: ratio}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			x.searched = func(s *searcher) {
				switch {
				case s.fellBack:
					fellBack++
				case s.hasSec:
					ruled++
				}
			}
			docs := cjkCorpus(rng, 500+rng.IntN(2000), vocab)
			for i := 0; i < len(docs); {
				n := min(1+rng.IntN(300), len(docs)-i)
				if err := x.Add(docs[i : i+n]); err != nil {
					t.Fatal(err)
				}
				i += n
				switch rng.IntN(4) {
				case 0:
					if err := x.Flush(); err != nil {
						t.Fatal(err)
					}
				case 1:
					del := []uint64{docs[rng.IntN(i)].ID, docs[rng.IntN(i)].ID}
					if err := x.Delete(del); err != nil {
						t.Fatal(err)
					}
				}
			}
			var dst []Hit
			for q := 0; q < 200; q++ {
				var b strings.Builder
				for j := 0; j < 1+rng.IntN(4); j++ {
					switch rng.IntN(8) {
					case 0:
						b.WriteString(string(rune(0x4e00 + rng.IntN(vocab/32+1)))) // one character
					case 1:
						fmt.Fprintf(&b, "w%d", rng.IntN(vocab))
					default:
						b.WriteString(cjkWord(int(float64(vocab) * rng.Float64() * rng.Float64())))
					}
					if rng.IntN(2) == 0 {
						b.WriteByte(' ')
					}
				}
				query := b.String()
				k := []int{1, 3, 10, 50}[rng.IntN(4)]
				var filter *roaring.Bitmap
				switch rng.IntN(3) {
				case 1:
					if filter, err = x.Filter(&Filter{Agents: []string{fmt.Sprintf("a%d", rng.IntN(4))}}); err != nil {
						t.Fatal(err)
					}
				case 2:
					filter = roaring.New()
					for j := 0; j < 1+rng.IntN(len(docs)/4); j++ {
						filter.Add(uint32(docs[rng.IntN(len(docs))].ID))
					}
				}
				got, err := x.Search(query, filter, k, dst)
				if err != nil {
					t.Fatal(err)
				}
				dst = got
				want, err := x.SearchExhaustive(query, filter, k)
				if err != nil {
					t.Fatal(err)
				}
				sameHits(t, fmt.Sprintf("query %q k=%d filter=%v", query, k, filter != nil), got, want, 0)
			}
		})
	}
	t.Logf("queries with secondary terms: %d ranked by the rule, %d fell back", ruled, fellBack)
	if ruled == 0 || fellBack == 0 {
		t.Errorf("ruled %d, fell back %d: want both", ruled, fellBack)
	}
}
