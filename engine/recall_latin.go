package engine

import (
	_ "embed"
	"fmt"
	"strings"
	"sync"
	"unicode"
)

// A speaker whose role is written in Latin letters is often named in
// Chinese by a Chinese question: a Western name by its usual
// transliteration ("丹尼尔" for the role "Daniel Price", "格林老师" for "Ms.
// Green"; translit.txt), a Chinese name written in pinyin by its
// characters ("周航" for the role "Zhou Hang"). latinNamed finds such
// names among the words of 2-5 characters of the question's Chinese runs
// and returns each Latin role of the agents one of them fits alone.

//go:embed translit.txt
var translitText string

// theTranslit maps a transliteration to the Latin names it writes.
var theTranslit = sync.OnceValue(func() map[string][]string {
	m := map[string][]string{}
	for line := range strings.Lines(translitText) {
		line = strings.TrimRight(line, "\n")
		if line == "" || line[0] == '#' {
			continue
		}
		name, forms, ok := strings.Cut(line, "\t")
		if !ok || name == "" {
			panic(fmt.Sprintf("lazymem: engine: translit.txt: bad line %q", line))
		}
		for _, f := range strings.Fields(forms) {
			m[f] = append(m[f], name)
		}
	}
	return m
})

// chineseName is a word of a Chinese run that may name a Latin role.
type chineseName struct {
	written string   // as the question writes it
	latin   []string // the Western names it transliterates, or
	chars   []rune   // a Chinese name, its characters spelled in pinyin
}

// chineseNames returns the words of the CJK runs of words that are a
// transliteration (2-5 characters), or a surname and one or two more
// characters; longest first.
func chineseNames(words []string) []chineseName {
	tr := theTranslit()
	var out []chineseName
	cjkSubstrings(words, 5, func(rs []rune, i, n int) {
		s := string(rs[i : i+n])
		if l, ok := tr[s]; ok {
			out = append(out, chineseName{written: s, latin: l})
		} else if n <= 3 && strings.ContainsRune(surnames, rs[i]) {
			out = append(out, chineseName{written: s, chars: rs[i : i+n]})
		}
	})
	return out
}

// latinWords returns role's words, lower case, when it is written in
// Latin letters (with spaces, dots, hyphens and apostrophes); nil
// otherwise.
func latinWords(role string) []string {
	for _, r := range role {
		if !(r < unicode.MaxLatin1 && unicode.IsLetter(r) || r == ' ' || r == '.' || r == '-' || r == '\'') {
			return nil
		}
	}
	return strings.FieldsFunc(strings.ToLower(role), func(r rune) bool { return !unicode.IsLetter(r) })
}

// latinNamed returns the Latin roles of agents the question's Chinese
// words name, each the only one of their roles a word fits, and the words
// that name them.
func (db *DB) latinNamed(words, agents []string) (roles, written []string, err error) {
	names := chineseNames(words)
	if len(names) == 0 {
		return nil, nil, nil
	}
	fits := make([][]string, len(names))
	if err := db.lookupRoles(func(m *roleMaps) {
		py := thePinyin()
		for i, n := range names {
			if n.latin != nil {
				for _, l := range n.latin {
					fits[i] = append(fits[i], m.word[l]...)
				}
			} else if len(m.letters) > 0 {
				for _, s := range py.spellings(n.chars) {
					fits[i] = append(fits[i], m.letters[s]...)
				}
			}
		}
	}); err != nil {
		return nil, nil, err
	}
	for i, n := range names {
		if containsPart(written, n.written) {
			continue // a part of a name already found
		}
		one, err := db.oneHeld(fits[i], agents)
		if err != nil {
			return nil, nil, err
		}
		if one != "" {
			roles, written = append(roles, one), append(written, n.written)
		}
	}
	return roles, written, nil
}

// containsPart reports whether one of ws contains s.
func containsPart(ws []string, s string) bool {
	for _, w := range ws {
		if strings.Contains(w, s) {
			return true
		}
	}
	return false
}

// partNamed returns the Latin roles of two words or more of agents that a
// capitalized word of the question names alone ("Marcus" or "Hale" for
// "Marcus Hale"; not a stopword or a title), each the only one of their
// roles the word fits, and the words that name them.
func (db *DB) partNamed(words, agents []string) (roles, written []string, err error) {
	stop := stopSet()
	var ws []string
	for _, w := range words {
		if lw := strings.ToLower(w); latinName(w) && unicode.IsUpper(firstRune(w)) && !stop[lw] && !titles[lw] {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 {
		return nil, nil, nil
	}
	fits := make([][]string, len(ws))
	if err := db.lookupRoles(func(m *roleMaps) {
		for i, w := range ws {
			for _, r := range m.word[strings.ToLower(w)] {
				if strings.ContainsAny(strings.TrimSpace(r), " .") {
					fits[i] = append(fits[i], r)
				}
			}
		}
	}); err != nil {
		return nil, nil, err
	}
	return db.heldOnes(ws, fits, agents)
}
