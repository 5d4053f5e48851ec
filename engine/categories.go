package engine

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
	"unicode"
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
	hasCJK, hasLatin := false, false
	for _, r := range lower {
		switch {
		case analysis.IsCJK(r):
			hasCJK = true
		case r < utf8.RuneSelf && unicode.IsLetter(r):
			hasLatin = true
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, c := range cs {
		named := false
		for _, t := range c.triggers {
			if containsWord(lower, t) {
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
