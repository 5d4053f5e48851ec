package porter2

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/kljensen/snowball/english"
)

// check fails t for every word whose stem differs from the library's,
// with stop words stemmed and not.
func check(t *testing.T, words []string) {
	t.Helper()
	bad := 0
	for _, w := range words {
		for _, stop := range []bool{true, false} {
			if got, want := Stem(w, stop), english.Stem(w, stop); got != want {
				if bad++; bad <= 20 {
					t.Errorf("Stem(%q, %v) = %q, the library's %q", w, stop, got, want)
				}
			}
		}
	}
	if bad > 20 {
		t.Errorf("%d words differ in all", bad)
	}
}

// TestStemShortWords: every word of one to four letters.
func TestStemShortWords(t *testing.T) {
	var words []string
	var rec func(prefix []byte)
	rec = func(prefix []byte) {
		if len(prefix) > 0 {
			words = append(words, string(prefix))
		}
		if len(prefix) == 4 {
			return
		}
		for c := byte('a'); c <= 'z'; c++ {
			rec(append(prefix, c))
		}
	}
	rec(nil)
	if testing.Short() {
		words = words[:len(words)/20]
	}
	check(t, words)
}

// suffixes are every suffix the algorithm tests, and the endings its
// conditions look at (e, l, y, doubles, a vowel before them).
var suffixes = func() []string {
	all := []string{"e", "l", "ll", "y", "Y", "ly", "le", "ee", "eed", "ied", "ies", "yes", "ying", "s'", "'s",
		"at", "bl", "iz", "bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt", "w", "x", "ogi", "logi",
		"sion", "tion", "gener", "commun", "arsen"}
	for _, l := range [][]string{step1aList, step1bList, step1bAfter, step2List, step3List, step4List} {
		all = append(all, l...)
	}
	return all
}()

// TestStemSuffixWords: random stems with one to three of the algorithm's
// suffixes, so that every step and its conditions (the regions, a short
// syllable, a vowel before the suffix) meet.
func TestStemSuffixWords(t *testing.T) {
	r := rand.New(rand.NewPCG(20261204, 1))
	const letters = "aaeeiioouuybcdfghjklmnpqrstvwxyz"
	n := 300_000
	if testing.Short() {
		n = 20_000
	}
	words := make([]string, 0, n)
	for range n {
		var b strings.Builder
		if r.IntN(8) == 0 {
			b.WriteString(suffixes[r.IntN(len(suffixes))]) // a prefix that is one too
		}
		for range r.IntN(7) {
			b.WriteByte(letters[r.IntN(len(letters))])
		}
		for range 1 + r.IntN(3) {
			b.WriteString(suffixes[r.IntN(len(suffixes))])
		}
		words = append(words, b.String())
	}
	check(t, words)
}

// TestStemSpecialAndText: the table of exceptions, words from the
// repository's English texts (the scenario suite), and words the fast
// path hands to the library (capitals, apostrophes, digits, non-ASCII,
// spaces, longer than maxFast).
func TestStemSpecialAndText(t *testing.T) {
	var words []string
	for w := range special {
		words = append(words, w, w+"s", w+"ly", strings.ToUpper(w))
	}
	for _, name := range []string{"../../../engine/testdata/scenarios/records.jsonl", "../../../engine/testdata/scenarios/questions.jsonl", "../../../README.md", "../../../docs/API.md"} {
		b, err := os.ReadFile(filepath.FromSlash(name))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range strings.FieldsFunc(string(b), func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }) {
			words = append(words, f, strings.ToLower(f))
		}
	}
	words = append(words, "Running", "don't", "o'clock", "'tis", "abc123", "naïve", "café", " running ",
		"running\t", "ab", "a", "", "sky's", "yyy", "yay", "ayyy", "bye", "eye", "generously", "communication",
		"arsenal", "generate", strings.Repeat("ab", maxFast/2+1)+"ing", strings.Repeat("x", maxFast-3)+"ing")
	check(t, words)
}

// FuzzStem: any string stems as the library stems it.
func FuzzStem(f *testing.F) {
	for _, s := range []string{"running", "generously", "skies", "ied", "bled", "hopping", "Y", "yes", "caresses", "ly"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, w string) {
		for _, stop := range []bool{true, false} {
			if got, want := Stem(w, stop), english.Stem(w, stop); got != want {
				t.Fatalf("Stem(%q, %v) = %q, the library's %q", w, stop, got, want)
			}
		}
	})
}

// BenchmarkStem: the words of TestStemSuffixWords, here and in the
// library.
func BenchmarkStem(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	words := make([]string, 4096)
	for i := range words {
		words[i] = "reb" + suffixes[r.IntN(len(suffixes))] + suffixes[r.IntN(len(suffixes))]
		words[i] = strings.ToLower(strings.ReplaceAll(words[i], "'", ""))
	}
	for _, impl := range []struct {
		name string
		f    func(string, bool) string
	}{{"porter2", Stem}, {"library", english.Stem}} {
		b.Run(impl.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				impl.f(words[i&4095], true)
			}
		})
	}
}
