package engine

import (
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lazymem/lazymem/index/analysis"
)

// The words of a question as the speaker and name rules read them.

// latinName reports whether w may be a word of a Latin-script name: two
// letters or more, none a digit or CJK.
func latinName(w string) bool {
	if len(w) < 2 {
		return false
	}
	for _, r := range w {
		if !unicode.IsLetter(r) || analysis.IsCJK(r) {
			return false
		}
	}
	return true
}

// cjkSubstrings calls fn with each run of 2 to most characters of the
// words that begin with a CJK character, the longer runs of a word first:
// rs[i:i+n] of the word's runes rs. The name rules look up a question's
// Chinese runs this way (chineseNames, suffixNamed).
func cjkSubstrings(words []string, most int, fn func(rs []rune, i, n int)) {
	for _, w := range words {
		rs := []rune(w)
		if len(rs) < 2 || !analysis.IsCJK(rs[0]) {
			continue
		}
		for n := min(most, len(rs)); n >= 2; n-- {
			for i := 0; i+n <= len(rs); i++ {
				fn(rs, i, n)
			}
		}
	}
}

// capitalize is w with its first letter upper case and the rest lower.
func capitalize(w string) string {
	r, n := utf8.DecodeRuneInString(w)
	return string(unicode.ToUpper(r)) + strings.ToLower(w[n:])
}

// appendScriptRuns appends w to words cut where it changes between CJK
// and other scripts: Chinese is written without spaces, so a Latin name
// in a Chinese question ("Emily说了什么") is glued to the words after it.
func appendScriptRuns(words []string, w string) []string {
	start, cjk := 0, false
	for i, r := range w {
		if c := analysis.IsCJK(r); i == 0 {
			cjk = c
		} else if c != cjk {
			words = append(words, w[start:i])
			start, cjk = i, c
		}
	}
	return append(words, w[start:])
}

// stripWords removes every whole-word, case-insensitive occurrence of ws
// from text; a CJK name is removed wherever it occurs (CJK text has no
// spaces to mark a word).
func stripWords(text string, ws []string) string {
	drop := map[string]bool{}
	for _, w := range ws {
		if r, _ := utf8.DecodeRuneInString(w); analysis.IsCJK(r) {
			text = strings.ReplaceAll(text, w, " ")
			continue
		}
		for _, p := range strings.Fields(w) { // a two-word name: both words
			drop[strings.ToLower(p)] = true
		}
	}
	var b strings.Builder
	start := -1
	flush := func(end int) {
		if start >= 0 {
			if !drop[strings.ToLower(text[start:end])] {
				b.WriteString(text[start:end])
			}
			start = -1
		}
	}
	cjk := false // the script of the word from start
	for i, r := range text {
		if analysis.IsWordRune(r) {
			if start >= 0 && analysis.IsCJK(r) != cjk {
				flush(i) // "Emily说了": a name ends where the script changes
			}
			if start < 0 {
				start, cjk = i, analysis.IsCJK(r)
			}
			continue
		}
		flush(i)
		b.WriteRune(r)
	}
	flush(len(text))
	return b.String()
}

// expandSynonyms appends to text the values of every synonym key found in
// it (case-insensitive, on word boundaries), in sorted key order.
func expandSynonyms(text string, syn map[string][]string) string {
	if len(syn) == 0 || text == "" {
		return text
	}
	lower := strings.ToLower(text)
	var b strings.Builder
	b.WriteString(text)
	for _, k := range slices.Sorted(maps.Keys(syn)) {
		if containsWord(lower, strings.ToLower(strings.TrimSpace(k))) {
			for _, v := range syn[k] {
				b.WriteByte(' ')
				b.WriteString(v)
			}
		}
	}
	return b.String()
}

// containsWord reports whether w occurs in s on word boundaries as the
// tokenizer draws them (analysis.IsWordRune). CJK text has no spaces: a
// CJK key matches anywhere.
func containsWord(s, w string) bool { return indexWord(s, w) >= 0 }

// indexWord is the offset of the first occurrence of w in s on word
// boundaries, or -1.
func indexWord(s, w string) int {
	if w == "" {
		return -1
	}
	for off := 0; off <= len(s)-len(w); {
		i := strings.Index(s[off:], w)
		if i < 0 {
			return -1
		}
		i += off
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[i+len(w):])
		first, _ := utf8.DecodeRuneInString(w)
		last, _ := utf8.DecodeLastRuneInString(w)
		okB := i == 0 || !analysis.IsWordRune(before) || analysis.IsCJK(first) || !analysis.IsWordRune(first)
		okA := i+len(w) == len(s) || !analysis.IsWordRune(after) || analysis.IsCJK(last) || !analysis.IsWordRune(last)
		if okB && okA {
			return i
		}
		_, sz := utf8.DecodeRuneInString(s[i:])
		off = i + sz
	}
	return -1
}
