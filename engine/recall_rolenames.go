package engine

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/lazymem/lazymem/index"
)

// roleNames holds the index's roles as the name rules look them up
// (recall_pinyin.go, recall_latin.go, recall_nickname.go). It reads the roles
// the index came to hold since the last question (index.Index.RolesSince)
// and adds them, so that a question's lookups cost the same in a store of
// ten roles and in one of ten thousand, and a new role costs its own
// entries only.
type roleNames struct {
	mu    sync.Mutex
	idx   *index.Index // the index counted; another (a reopen) starts over
	count int
	maps  roleMaps
}

// roleMaps map a key to the roles it names.
type roleMaps struct {
	// Chinese roles of 2-4 characters, by every pinyin spelling of the
	// full name, of the given name (roles of 3-4 characters), and of the
	// surname.
	full, given, surname map[string][]string
	// lastGiven: the roles of three or four characters by the pinyin of
	// their last ("Feng" for 黄晓峰, as 阿峰 and 小峰 name him in Chinese).
	lastGiven map[string][]string
	// The same roles by their first and last character (the nicknames'
	// lookups: 老郑 for 郑国强, 小梅 for 梁小梅).
	firstChar, lastChar map[rune][]string
	// Latin roles by each lower-case word ("Daniel Price": daniel,
	// price), and the ones of one or two words of pinyin by their letters
	// in either order ("Zhou Hang": zhouhang, hangzhou).
	word, letters map[string][]string
	// Chinese roles of four characters or more by their ending names
	// (roleSuffixes: "留学顾问陈老师" by 陈老师, "妈妈王丽" by 王丽).
	suffix map[string][]string
}

// lookupRoles calls f with the lookups over every role the index holds,
// under the lock that guards them: f must not keep the maps (the slices
// it reads from them stay valid).
func (db *DB) lookupRoles(f func(m *roleMaps)) error {
	rn := &db.names
	rn.mu.Lock()
	defer rn.mu.Unlock()
	if rn.idx != db.idx {
		rn.idx, rn.count, rn.maps = db.idx, 0, roleMaps{}
	}
	roles, n, err := db.idx.RolesSince(rn.count)
	if err != nil {
		return fmt.Errorf("lazymem: engine: roles: %w", err)
	}
	if n < rn.count || rn.maps.full == nil { // new, or not the index counted: roles are every one
		rn.maps = roleMaps{full: map[string][]string{}, given: map[string][]string{}, surname: map[string][]string{}, lastGiven: map[string][]string{},
			firstChar: map[rune][]string{}, lastChar: map[rune][]string{},
			word: map[string][]string{}, letters: map[string][]string{}, suffix: map[string][]string{}}
	}
	m, py := &rn.maps, thePinyin()
	add := func(to map[string][]string, keys []string, role string) {
		for _, k := range keys {
			to[k] = append(to[k], role)
		}
	}
	for _, r := range roles {
		add(m.suffix, roleSuffixes(r), r)
		if rs := chineseRole(r); rs != nil {
			add(m.full, py.spellings(rs), r)
			add(m.surname, py.spellings(rs[:1]), r)
			m.firstChar[rs[0]] = append(m.firstChar[rs[0]], r)
			m.lastChar[rs[len(rs)-1]] = append(m.lastChar[rs[len(rs)-1]], r)
			if len(rs) >= 3 {
				add(m.given, py.spellings(rs[1:]), r)
				add(m.lastGiven, py.spellings(rs[len(rs)-1:]), r)
			}
		} else if ws := latinWords(r); len(ws) > 0 {
			add(m.word, uniq(ws), r)
			add(m.letters, pinyinLetters(ws), r)
		}
	}
	rn.count = n
	f(m)
	return nil
}

// spelledRoles returns the roles of agents the question's words name
// otherwise than by their exact name, each with the words that name it:
// in pinyin ("Dr. Fang" for 方婷), in Chinese characters ("丹尼尔" for
// "Daniel Price", "周航" for "Zhou Hang"), by one of its words ("Marcus"
// for "Marcus Hale"), and, when no role was named
// (found, the roles named exactly, is empty), by a nickname ("小梅" for
// 梁小梅).
func (db *DB) spelledRoles(words, found, agents []string) (roles, written []string, err error) {
	rest := notFound(words, found)
	if roles, written, err = db.pinyinNamed(rest, agents); err != nil {
		return nil, nil, err
	}
	lr, lw, err := db.latinNamed(rest, agents)
	if err != nil {
		return nil, nil, err
	}
	roles, written = append(roles, lr...), append(written, lw...)
	pr, pw, err := db.partNamed(rest, agents)
	if err != nil {
		return nil, nil, err
	}
	sr, sw, err := db.suffixNamed(rest, agents)
	if err != nil {
		return nil, nil, err
	}
	pr, pw = append(pr, sr...), append(pw, sw...)
	for i, r := range pr {
		if !slices.Contains(roles, r) {
			roles, written = append(roles, r), append(written, pw[i])
		}
	}
	if len(found) == 0 && len(roles) == 0 {
		role, nick, err := db.nicknamed(words, agents)
		if err != nil {
			return nil, nil, err
		}
		if role == "" && addressRule {
			if role, nick, err = db.addressedNamed(words, agents); err != nil {
				return nil, nil, err
			}
		}
		if role == "" {
			return nil, nil, nil
		}
		roles, written = []string{role}, []string{nick}
	}
	return roles, written, nil
}

// addressRule turns addressedNamed on: true but in a test.
var addressRule = true

// maxSpellings bounds the pinyin spellings of one name (each character
// has up to three readings, and ü three ways to write it).
const maxSpellings = 64

// spellings returns the ways rs may be written in pinyin, up to
// maxSpellings: one reading of each character in turn, ü written v, u or
// yu.
func (t *pinyinTable) spellings(rs []rune) []string {
	out := []string{""}
	for _, r := range rs {
		if r < pinyinFirst || r > pinyinLast {
			return nil
		}
		var next []string
		for p := t.readings[r-pinyinFirst]; p != 0; p >>= 10 {
			syl := t.syls[p&0x3ff-1]
			forms := []string{syl}
			if strings.Contains(syl, "v") {
				forms = append(forms, strings.ReplaceAll(syl, "v", "u"), strings.ReplaceAll(syl, "v", "yu"))
			}
			for _, s := range out {
				for _, f := range forms {
					if len(next) < maxSpellings {
						next = append(next, s+f)
					}
				}
			}
		}
		out = next
	}
	return uniq(out)
}

// pinyinLetters returns the letters of ws, one or two words of pinyin, in
// both orders; nil when ws are not that.
func pinyinLetters(ws []string) []string {
	py := thePinyin()
	for _, w := range ws {
		if !py.isPinyin(w) {
			return nil
		}
	}
	switch len(ws) {
	case 1:
		return ws
	case 2:
		return []string{ws[0] + ws[1], ws[1] + ws[0]}
	}
	return nil
}

// uniq returns ss without repeats, in their order.
func uniq(ss []string) []string {
	out := ss[:0:0]
	for _, s := range ss {
		dup := false
		for _, o := range out {
			if o == s {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, s)
		}
	}
	return out
}
