package engine

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/lazymem/lazymem/index/analysis"
)

// The category lexicon (categories.txt, embedded): a question that names
// a category ("What pets does she have?", "你有什么爱好？") is answered by
// a record that names an instance ("my dog Luna", "周末去钓鱼了"), and the
// two share no word. The header of categories.txt says how it was built.
//
//go:embed categories.txt
var categoriesText string

// category is one line of the category lexicon.
type category struct {
	triggers  []string // lowercased
	instances []string // lowercased single words
}

var builtinCategories = sync.OnceValues(func() ([]category, error) { return parseCategories(categoriesText) })

// theCategories returns the built-in category lexicon. Like theLexicon, an
// error is a build defect (a test parses the file): recall then runs
// without it.
func theCategories() []category {
	cs, err := builtinCategories()
	if err != nil {
		return nil
	}
	return cs
}

func parseCategories(src string) ([]category, error) {
	var out []category
	split := func(s string, n int) ([]string, error) {
		var ts []string
		for _, t := range strings.Split(s, ",") {
			t = strings.ToLower(strings.Join(strings.Fields(t), " "))
			if t == "" {
				return nil, fmt.Errorf("%w: category lexicon line %d: empty term", ErrInvalid, n)
			}
			ts = append(ts, t)
		}
		return ts, nil
	}
	for n, line := range strings.Split(src, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		head, tail, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("%w: category lexicon line %d: no \":\" between the categories and their instances", ErrInvalid, n+1)
		}
		var c category
		var err error
		if c.triggers, err = split(head, n+1); err != nil {
			return nil, err
		}
		if c.instances, err = split(tail, n+1); err != nil {
			return nil, err
		}
		for _, t := range c.instances {
			if strings.IndexFunc(t, func(r rune) bool { return !analysis.IsWordRune(r) }) >= 0 {
				return nil, fmt.Errorf("%w: category lexicon line %d: instance %q is not a single word", ErrInvalid, n+1, t)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// categoryInstances returns the instances of every category text names,
// those of the text's own script (an English question's English words, a
// Chinese question's Chinese ones), each once, none the text holds
// already.
func categoryInstances(cs []category, text string) []string {
	lower := strings.ToLower(text)
	hasCJK, hasLatin := scripts(lower)
	var out []string
	seen := map[string]bool{}
	for _, c := range cs {
		named := false
		for _, t := range c.triggers {
			if i := indexWord(lower, t); i >= 0 && (!categoryAsked || asksFor(lower, i, i+len(t))) {
				named = true
				break
			}
		}
		if !named {
			continue
		}
		for _, t := range c.instances {
			r, _ := utf8.DecodeRuneInString(t)
			if cjk := analysis.IsCJK(r); (cjk && !hasCJK) || (!cjk && !hasLatin) {
				continue
			}
			if !seen[t] && !containsWord(lower, t) {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// categoryAsked restricts the expansion to questions that ask for a
// category's members (asksFor): "What pets does she have?", not "How did
// the pets react?". A variable only so that a diagnostic build can
// compare the two.
var categoryAsked = true

// asksFor reports whether the category word at lower[i:j] is what the
// question asks for: in English "what" or "which" (or "how many") at most
// six words before it in its clause, or "kind/type/sort of" or
// "favorite" right before it; in Chinese 什么, 哪, 啥 or 几 at most six
// characters before it or four after it ("你有什么爱好", "爱好是什么").
func asksFor(lower string, i, j int) bool {
	if r, _ := utf8.DecodeRuneInString(lower[i:]); analysis.IsCJK(r) {
		before := []rune(lower[:i])
		before = before[max(0, len(before)-6):]
		after := []rune(lower[j:])
		after = after[:min(len(after), 4)]
		has := func(rs []rune) bool {
			s := string(rs)
			for _, w := range []string{"什么", "哪", "啥", "几种", "几样", "几个", "几只"} {
				if strings.Contains(s, w) {
					return true
				}
			}
			return false
		}
		return has(before) || has(after)
	}
	start := i
	for k := i - 1; k >= 0; k-- {
		if clauseEnd(rune(lower[k])) {
			break
		}
		start = k
	}
	words := strings.FieldsFunc(lower[start:i], func(r rune) bool { return !analysis.IsWordRune(r) })
	n := len(words)
	for k := max(0, n-6); k < n; k++ {
		switch words[k] {
		case "what", "which":
			return true
		case "many":
			if k > 0 && words[k-1] == "how" {
				return true
			}
		}
	}
	if n >= 1 && (words[n-1] == "favorite" || words[n-1] == "favourite") {
		return true
	}
	for k := max(0, n-3); k+1 < n; k++ {
		switch words[k] {
		case "kind", "kinds", "type", "types", "sort", "sorts":
			if words[k+1] == "of" {
				return true
			}
		}
	}
	return false
}
