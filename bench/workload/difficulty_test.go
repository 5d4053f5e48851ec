package workload

import (
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestQueryDifficulty reports how hard the planted-fact queries are for a
// plain lexical baseline: exhaustive BM25 (k1 1.2, b 0.75, lowercase
// letter/digit tokens, no stemming) over the query's agent's records (and
// window), recall@10 of the relevant records, per kind. It only describes
// the workload; the labels come from the generator. It checks that
// paraphrases are harder than direct questions, which is what they are for.
// LAZYMEM_WORKLOAD_N sets the corpus size (default 20000).
func TestQueryDifficulty(t *testing.T) {
	n := 20000
	if v := os.Getenv("LAZYMEM_WORKLOAD_N"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			t.Fatalf("LAZYMEM_WORKLOAD_N=%q: want an integer >= 1000", v)
		}
	}
	cfg := Config{Seed: 11, Records: n}
	recs := generate(t, cfg)
	g := New(cfg)
	qs := g.Queries(1000)

	tokens := func(s string) []string {
		return strings.FieldsFunc(strings.ToLower(s), func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) })
	}
	type doc struct {
		tf  map[string]int
		len int
	}
	byAgent := map[string][]int{}
	docs := make([]doc, len(recs))
	for i, r := range recs {
		byAgent[r.Agent] = append(byAgent[r.Agent], i)
		d := doc{tf: map[string]int{}}
		for _, w := range tokens(r.Text) {
			d.tf[w]++
			d.len++
		}
		docs[i] = d
	}
	hits := map[string]float64{}
	count := map[string]int{}
	for _, q := range qs {
		var cand []int
		for _, o := range byAgent[q.Agent] {
			if q.Since.IsZero() || !recs[o].Time.Before(q.Since) && recs[o].Time.Before(q.Until) {
				cand = append(cand, o)
			}
		}
		var avg float64
		df := map[string]int{}
		terms := tokens(q.Text)
		for _, o := range cand {
			avg += float64(docs[o].len)
			for _, w := range terms {
				if docs[o].tf[w] > 0 {
					df[w]++
				}
			}
		}
		avg /= float64(len(cand))
		type scored struct {
			o int
			s float64
		}
		var ss []scored
		for _, o := range cand {
			var s float64
			for _, w := range terms {
				tf := float64(docs[o].tf[w])
				if tf == 0 {
					continue
				}
				idf := math.Log(1 + (float64(len(cand))-float64(df[w])+0.5)/(float64(df[w])+0.5))
				s += idf * tf * 2.2 / (tf + 1.2*(0.25+0.75*float64(docs[o].len)/avg))
			}
			if s > 0 {
				ss = append(ss, scored{o, s})
			}
		}
		slices.SortFunc(ss, func(a, b scored) int {
			if a.s != b.s {
				if a.s > b.s {
					return -1
				}
				return 1
			}
			return a.o - b.o
		})
		top := map[int]bool{}
		for i := 0; i < len(ss) && i < 10; i++ {
			top[ss[i].o] = true
		}
		got := 0
		for _, o := range q.Relevant {
			if top[o] {
				got++
			}
		}
		hits[q.Kind] += float64(got) / float64(len(q.Relevant))
		count[q.Kind]++
	}
	r := map[string]float64{}
	for k := range count {
		r[k] = hits[k] / float64(count[k])
	}
	t.Logf("records=%d queries=%v BM25 recall@10: planted %.3f, paraphrase %.3f, temporal %.3f", n, count, r["planted"], r["paraphrase"], r["temporal"])
	if !(r["paraphrase"] < r["planted"]) {
		t.Errorf("paraphrases (%.3f) are not harder than direct questions (%.3f)", r["paraphrase"], r["planted"])
	}
}
