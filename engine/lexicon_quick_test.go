package engine

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/bench/workload"
)

// TestPleasantClauseQuick checks pleasantClause (with foreignWord's quick
// answer) against onlyPleasantries (the replacements alone) on clauses
// built from the pleasantries' words and pieces, other words, CJK,
// punctuation, case changes and runes whose lowercase is ASCII.
func TestPleasantClauseQuick(t *testing.T) {
	lx := theLexicon()
	if len(lx.pleasantries) == 0 {
		t.Fatal("the built-in lexicon has no pleasantries")
	}
	var words []string
	for w := range lx.pleasantWords {
		words = append(words, w)
	}
	other := []string{"pool", "ok-ish", "thanksgiving", "好好学习", "预算", "50", "é", "\u212a", "İ", "th", "you'", "\u0301", "👍"}
	seps := []string{" ", ", ", "!", "。", "，", "-", "'", "", "  ", "~"}
	rng := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	pleasant, quick := 0, 0
	for n := 0; n < 200_000; n++ {
		b.Reset()
		for k := rng.IntN(5) + 1; k > 0; k-- {
			var w string
			switch r := rng.IntN(10); {
			case r < 4:
				w = lx.pleasantries[rng.IntN(len(lx.pleasantries))]
			case r < 7:
				w = words[rng.IntN(len(words))]
			case r < 9:
				w = other[rng.IntN(len(other))]
			default:
				p := lx.pleasantries[rng.IntN(len(lx.pleasantries))]
				w = p[:rng.IntN(len(p)+1)] // a piece, maybe cut inside a rune
			}
			if rng.IntN(4) == 0 {
				w = strings.ToUpper(w)
			}
			b.WriteString(w)
			b.WriteString(seps[rng.IntN(len(seps))])
		}
		c := b.String()
		want := lx.onlyPleasantries(strings.ToLower(c))
		if got := lx.pleasantClause(c); got != want {
			t.Fatalf("pleasantClause(%q) = %v, the replacements alone say %v", c, got, want)
		}
		if want {
			pleasant++
		}
		if lx.foreignWord(strings.ToLower(c)) {
			quick++
		}
	}
	// The draw exercises both answers and the quick one.
	if pleasant < 1000 || quick < 1000 {
		t.Fatalf("%d pleasant clauses and %d quick answers in the draw", pleasant, quick)
	}
}

// BenchmarkPleasantClause is the pleasantries check of a candidate's text
// (its first clause) with and without foreignWord's quick answer, over
// workload records.
func BenchmarkPleasantClause(b *testing.B) {
	lx := theLexicon()
	g := workload.New(workload.Config{Seed: 1, Records: 256})
	var texts []string
	var r workload.Record
	for g.Next(&r) {
		texts = append(texts, clauses(r.Text)[0])
	}
	for _, impl := range []string{"quick", "replace"} {
		b.Run("impl="+impl, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				c := texts[i%len(texts)]
				if impl == "quick" {
					lx.pleasantClause(c)
				} else {
					lx.onlyPleasantries(strings.ToLower(c))
				}
			}
		})
	}
}
