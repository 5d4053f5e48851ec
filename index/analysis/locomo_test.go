package analysis

import (
	"math"
	"os"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/lazymem/lazymem/bench/locomo"
	"github.com/lazymem/lazymem/internal/testenv"
)

// TestLoCoMoRecall measures what the analysis choices do to retrieval: an
// exhaustive BM25 (k1 1.2, b 0.75) over each LoCoMo conversation's turns,
// evidence recall@10 over question categories 1-4, for several analyzer
// configurations and a plain lowercase/split baseline. It fails if the
// default analysis does worse than the baseline. Skipped with -short or
// without the data (LAZYMEM_LOCOMO, default ../../../shared/data/locomo).
func TestLoCoMoRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	dir := os.Getenv("LAZYMEM_LOCOMO")
	if dir == "" {
		dir = "../../../shared/data/locomo"
	}
	if _, err := os.Stat(dir); err != nil {
		testenv.Missing(t, "no LoCoMo data: %v", err)
	}
	convs, err := locomo.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	type config struct {
		name  string
		terms func(string) []string
		stop  map[string]struct{} // stopword list to use, nil: the package's
	}
	analyzer := func(o Options) func(string) []string {
		a := mustNew(t, o)
		return a.Terms
	}
	configs := []config{
		{"baseline(lower+split)", simpleTerms, nil},
		{"default", analyzer(DefaultOptions()), nil},
		{"no-stem", analyzer(Options{Stopwords: true, MaxTokenLen: DefaultMaxTokenLen}), nil},
		{"no-stopwords", analyzer(Options{Stem: true, MaxTokenLen: DefaultMaxTokenLen}), nil},
		{"lucene33-stopwords", analyzer(DefaultOptions()), lucene33},
	}
	results := map[string]float64{}
	for _, speaker := range []bool{false, true} {
		for _, c := range configs {
			saved := stopwords
			if c.stop != nil {
				stopwords = c.stop // the test does not run in parallel
			}
			var sum float64
			n := 0
			for _, conv := range convs {
				turns := conv.Turns()
				docs := make([][]string, len(turns))
				for i, tr := range turns {
					text := tr.Text
					if speaker {
						text = tr.Speaker + ": " + text
					}
					docs[i] = c.terms(text)
				}
				idx := newBM25(docs)
				pos := conv.TurnIndex()
				for _, qa := range conv.QA {
					if qa.Category < 1 || qa.Category > 4 || len(qa.Evidence) == 0 {
						continue
					}
					top := idx.top(c.terms(qa.Question), 10)
					hit := 0
					for _, ev := range qa.Evidence {
						if i, ok := pos[ev]; ok && top[i] {
							hit++
						}
					}
					sum += float64(hit) / float64(len(qa.Evidence))
					n++
				}
			}
			stopwords = saved
			r := sum / float64(n)
			name := c.name
			if speaker {
				name += "+speaker"
			}
			results[name] = r
			t.Logf("R@10 %-32s %.4f (%d questions, %d conversations)", name, r, n, len(convs))
		}
	}
	if len(lucene33) != 33 {
		t.Fatalf("lucene33 has %d words", len(lucene33))
	}
	if results["default"] < results["baseline(lower+split)"] {
		t.Errorf("default analysis R@10 %.4f below the lower+split baseline %.4f", results["default"], results["baseline(lower+split)"])
	}
}

// lucene33 is Lucene's classic English stop set, the alternative measured.
var lucene33 = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(`a an and are as at be but by for if in into is it no not of on or such
		that the their then there these they this to was will with`) {
		m[w] = struct{}{}
	}
	return m
}()

// simpleTerms lowercases and splits on anything that is not a letter or
// digit: the baseline.
func simpleTerms(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

type bm25 struct {
	docs  []map[string]int
	lens  []float64
	avgdl float64
	df    map[string]int
}

func newBM25(docs [][]string) *bm25 {
	x := &bm25{df: map[string]int{}}
	var total float64
	for _, d := range docs {
		tf := map[string]int{}
		for _, w := range d {
			tf[w]++
		}
		for w := range tf {
			x.df[w]++
		}
		x.docs = append(x.docs, tf)
		x.lens = append(x.lens, float64(len(d)))
		total += float64(len(d))
	}
	x.avgdl = total / float64(len(docs))
	return x
}

// top returns the set of the k best documents for the query terms (each
// distinct term once), ties broken by document order.
func (x *bm25) top(q []string, k int) map[int]bool {
	const k1, b = 1.2, 0.75
	seen := map[string]bool{}
	n := float64(len(x.docs))
	scores := make([]float64, len(x.docs))
	for _, w := range q {
		if seen[w] {
			continue
		}
		seen[w] = true
		df := float64(x.df[w])
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for i, d := range x.docs {
			if tf := float64(d[w]); tf > 0 {
				scores[i] += idf * tf * (k1 + 1) / (tf + k1*(1-b+b*x.lens[i]/x.avgdl))
			}
		}
	}
	ids := make([]int, len(scores))
	for i := range ids {
		ids[i] = i
	}
	sort.SliceStable(ids, func(a, b int) bool { return scores[ids[a]] > scores[ids[b]] })
	out := map[int]bool{}
	for _, i := range ids[:min(k, len(ids))] {
		if scores[i] > 0 {
			out[i] = true
		}
	}
	return out
}
