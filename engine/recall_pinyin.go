package engine

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/lazymem/lazymem/index"
	"github.com/lazymem/lazymem/index/analysis"
)

// A Chinese speaker is often named in pinyin by an English question: the
// full name in either order ("Zhou Hang", "Hang Zhou", "Zhouhang" for
// 周航), a two-character given name ("Xiaomei" for 梁小梅), or the surname
// after a title ("Dr. Fang" for 方婷, "Ms. Lin", "Lao Zheng"), or the last
// syllable of a given name of two ("Feng" for 黄晓峰, as 阿峰 names him;
// never one that is a role's surname). When such a
// capitalized word is in the question, pinyinNamed looks for the Chinese
// roles it spells (any of each character's readings, tones dropped) and
// returns each one the question's agents hold alone: none for a surname
// two of them share. Romanizations other than pinyin (Wade-Giles,
// Cantonese: "Chan", "Wong") are not matched.

//go:embed pinyin.txt
var pinyinText string

const (
	pinyinFirst       = 0x4E00 // the CJK Unified Ideographs block
	pinyinLast        = 0x9FFF
	maxPinyinReadings = 3 // readings kept a character
)

// pinyinTable holds each character's toneless readings.
type pinyinTable struct {
	syls     []string // syllable id-1
	readings []uint32 // per character from pinyinFirst: up to three ids, 10 bits each
	valid    map[string]bool
}

var thePinyin = sync.OnceValue(func() *pinyinTable { return parsePinyin(pinyinText) })

// parsePinyin reads pinyin.txt (lines "syllable<TAB>characters"; '#'
// comments). The file is embedded and tested, so a malformed line panics.
func parsePinyin(text string) *pinyinTable {
	t := &pinyinTable{readings: make([]uint32, pinyinLast-pinyinFirst+1), valid: map[string]bool{}}
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\n")
		if line == "" || line[0] == '#' {
			continue
		}
		syl, chars, ok := strings.Cut(line, "\t")
		if !ok || syl == "" || len(t.syls) >= 1<<10-1 {
			panic(fmt.Sprintf("lazymem: engine: pinyin.txt: bad line %q", line))
		}
		t.syls = append(t.syls, syl)
		t.valid[syl] = true
		if strings.Contains(syl, "v") {
			t.valid[strings.ReplaceAll(syl, "v", "u")] = true
		}
		id := uint32(len(t.syls))
		for _, r := range chars {
			if r < pinyinFirst || r > pinyinLast {
				panic(fmt.Sprintf("lazymem: engine: pinyin.txt: %q out of range", r))
			}
			p := &t.readings[r-pinyinFirst]
			switch {
			case *p&0x3ff == 0:
				*p |= id
			case *p>>10&0x3ff == 0:
				*p |= id << 10
			case *p>>20 == 0:
				*p |= id << 20
			default:
				panic(fmt.Sprintf("lazymem: engine: pinyin.txt: %q has more than %d readings", r, maxPinyinReadings))
			}
		}
	}
	return t
}

// isPinyin reports whether s (lower case letters) is a run of pinyin
// syllables: the quick test a word passes before any role is read.
func (t *pinyinTable) isPinyin(s string) bool {
	ok := make([]bool, len(s)+1)
	ok[0] = true
	for i := 0; i < len(s); i++ {
		if !ok[i] {
			continue
		}
		for j := i + 1; j <= len(s) && j <= i+6; j++ {
			if t.valid[s[i:j]] {
				ok[j] = true
			}
		}
	}
	return ok[len(s)]
}

// pinyinName is a name a question may write in pinyin: the letters of a
// full name (either order) or a given name, or of a surname after a title.
type pinyinName struct {
	letters string
	surname bool
	written string // the words as the question writes them
}

// titles name a person by the surname after them.
var titles = map[string]bool{
	"dr": true, "doctor": true, "mr": true, "mrs": true, "ms": true, "miss": true,
	"prof": true, "professor": true, "teacher": true, "director": true,
	"manager": true, "coach": true, "lao": true, "xiao": true, "auntie": true, "uncle": true,
}

// pinyinNames returns the names words may write in pinyin: capitalized
// Latin words, not titles, whose letters are pinyin.
func pinyinNames(words []string) []pinyinName {
	stop := stopSet()
	// name: a capitalized Latin word that is pinyin, not a title; a
	// stopword ("He" of "He Lei") only as a part of a two-word name. The
	// table is read only for such a word (a process's first question
	// would pay 0.22 ms to parse it).
	name := func(w string) (lw string, ok, isStop bool) {
		if !latinName(w) || !unicode.IsUpper(firstRune(w)) {
			return "", false, false
		}
		lw = strings.ToLower(w)
		if titles[lw] || !thePinyin().isPinyin(lw) {
			return "", false, false
		}
		return lw, true, stop[lw]
	}
	var out []pinyinName
	for i, w := range words {
		a, ok, aStop := name(w)
		if !ok {
			continue
		}
		if i+1 < len(words) {
			if b, ok, bStop := name(words[i+1]); ok && !(aStop && bStop) {
				two := w + " " + words[i+1]
				out = append(out, pinyinName{letters: a + b, written: two}, pinyinName{letters: b + a, written: two})
			}
		}
		afterTitle := i > 0 && titles[strings.ToLower(words[i-1])]
		if afterTitle {
			// A capitalized stopword after a title is a surname: "Xiao He"
			// (小何), "Dr. An".
			out = append(out, pinyinName{letters: a, surname: true, written: words[i-1] + " " + w})
		}
		if aStop {
			continue
		}
		out = append(out, pinyinName{letters: a, written: w})
	}
	return out
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// chineseRole returns role's characters when it is a Chinese name of two
// to four characters; nil otherwise.
func chineseRole(role string) []rune {
	if n := utf8.RuneCountInString(role); n < 2 || n > 4 {
		return nil
	}
	rs := []rune(role)
	for _, r := range rs {
		if !analysis.IsCJK(r) {
			return nil
		}
	}
	return rs
}

// pinyinNamed returns the Chinese roles of agents the question's words
// name in pinyin, each the only one of their roles its name fits, and the
// words that name it. A word of a two-word name is not tried alone.
func (db *DB) pinyinNamed(words, agents []string) (roles, written []string, err error) {
	names := pinyinNames(words)
	if len(names) == 0 {
		return nil, nil, nil
	}
	fits := make([][]string, len(names))
	if err := db.lookupRoles(func(m *roleMaps) {
		for i, n := range names {
			if n.surname {
				fits[i] = m.surname[n.letters]
			} else {
				fits[i] = uniq(append(slices.Clip(m.full[n.letters]), m.given[n.letters]...))
				// One syllable that spells no full or given name and no
				// surname: the last character of a given name of two.
				if len(fits[i]) == 0 && !strings.Contains(n.written, " ") && thePinyin().valid[n.letters] && len(m.surname[n.letters]) == 0 {
					fits[i] = m.lastGiven[n.letters]
				}
			}
		}
	}); err != nil {
		return nil, nil, err
	}
	used := map[string]bool{}
	for i, n := range names {
		if slices.ContainsFunc(strings.Fields(n.written), func(w string) bool { return used[w] }) {
			continue
		}
		one, err := db.oneHeld(fits[i], agents)
		if err != nil {
			return nil, nil, err
		}
		if one != "" {
			roles, written = append(roles, one), append(written, n.written)
			for _, w := range strings.Fields(n.written) {
				used[w] = true
			}
		}
	}
	return roles, written, nil
}

// notFound is words with those found as roles blanked (kept in place, so
// that no two words become adjacent that were not).
func notFound(words, found []string) []string {
	taken := map[string]bool{}
	for _, f := range found {
		for _, w := range strings.Fields(strings.ToLower(f)) {
			taken[w] = true
		}
	}
	rest := make([]string, len(words))
	for i, w := range words {
		if !taken[strings.ToLower(w)] {
			rest[i] = w
		}
	}
	return rest
}

// oneHeld returns the one of roles some record of agents has; "" when
// none or several do.
func (db *DB) oneHeld(roles, agents []string) (string, error) {
	if len(roles) == 0 {
		return "", nil
	}
	held, err := db.heldRoles(uniq(roles), agents)
	if err != nil || len(held) != 1 {
		return "", err
	}
	return held[0], nil
}

// heldOnes returns, for each of names in turn, the one role of its fits
// some record of agents has (oneHeld), each role once, and the names
// that name them.
func (db *DB) heldOnes(names []string, fits [][]string, agents []string) (roles, written []string, err error) {
	for i, n := range names {
		one, err := db.oneHeld(fits[i], agents)
		if err != nil {
			return nil, nil, err
		}
		if one != "" && !slices.Contains(roles, one) {
			roles, written = append(roles, one), append(written, n)
		}
	}
	return roles, written, nil
}

// heldRoles returns the roles some record of agents has.
func (db *DB) heldRoles(roles, agents []string) ([]string, error) {
	var held []string
	for _, r := range roles {
		bm, err := db.idx.Filter(&index.Filter{Agents: agents, Roles: []string{r}})
		if err != nil {
			return nil, fmt.Errorf("lazymem: engine: role filter: %w", err)
		}
		if !bm.IsEmpty() {
			held = append(held, r)
		}
	}
	return held, nil
}
