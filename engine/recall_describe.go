package engine

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lazymem/lazymem/index"
	"github.com/lazymem/lazymem/index/analysis"
)

// People named by a description: a speaker question may name its speaker
// by relation or occupation instead of by name ("陈爷爷的儿媳今天说了些
// 什么", "what did the physio say?", "我老公会上说了啥"). The records
// often say who that is, beside the name: "我是陈爷爷的儿媳孙丽", "Ben,
// the physio, comes on Tuesdays", "Mark (Linda's husband)". describedRole
// finds the person's nouns in the question (the lexicon's [person] lines,
// so that 康复师 finds "the physio"), searches them over the agents'
// records, and counts the roles named right beside them in the records
// that also name the same owner (陈爷爷, Wang; "my" and 我 for the first
// person); the role most records name so is the speaker, when one is.
//
// It runs only for a question naming no role whose text, the description
// aside, is only a speaker question's frame: a keyword query pays nothing.
// The records are read at most describeScan a question.
const describeScan = 64

// firstOwner is a description's owner when it is the first person ("我老
// 公", "my husband").
const firstOwner = "\x00I"

// description is a person a question names by relation or occupation.
type description struct {
	span  string   // the words as asked: "陈爷爷的儿媳", "Mrs Wang's daughter"
	nouns []string // the person's nouns in both languages
	// owners are the spellings of whose relation it is ("陈爷爷", "wang"),
	// the longest first; firstOwner for the first person; none for "the
	// physio".
	owners []string
}

// speechWord: a question asking what someone said, with more to search
// ("what did the physio say about her knee?"): the described speaker is
// then a boost, as a named one is.
var speechWord = regexp.MustCompile(`(?i)\b(?:say|said|says|tell|told|mention|mentioned|talk|talked|ask|asked)\b|说|讲|提到|提了|聊|谈`)

// latinOwner is "X's" or a determiner before a Latin noun.
var latinOwner = regexp.MustCompile(`(?i)(?:\b(?:(?:mr|mrs|ms|miss|dr)\.?\s+)?([A-Z][A-Za-z-]*)'s|\b(my|our|the|her|his|their|your|a))\s+$`)

// describe returns the description text holds; false when none.
func (lx *lexicon) describe(text string) (description, bool) {
	lower := strings.ToLower(text)
	if len(lower) != len(text) { // offsets must agree: read the lowered text
		text = lower
	}
	best, bestLen := description{}, 0
	for _, nouns := range lx.persons {
		for _, n := range nouns {
			if len(n) <= bestLen {
				continue
			}
			i := indexWord(lower, n)
			if i < 0 {
				continue
			}
			var d description
			var ok bool
			if r, _ := utf8.DecodeRuneInString(n); analysis.IsCJK(r) {
				d, ok = cjkDescription(text, i, n)
			} else {
				d, ok = latinDescription(text, i, n)
			}
			if ok {
				d.nouns = nouns
				best, bestLen = d, len(n)
			}
		}
	}
	return best, bestLen > 0
}

// cjkDescription reads the owner before a CJK noun at text[i:]: "X的"
// (X's last two to four characters), 我 or 我的 (the first person), 你,
// 他, 她 (no owner). A noun right after another character ("王奶奶") is
// part of a name, not a description.
func cjkDescription(text string, i int, n string) (description, bool) {
	before := strings.TrimSuffix(text[:i], "的")
	withDe := len(before) < i
	start := len(before)
	var owners []string
	last, size := utf8.DecodeLastRuneInString(before)
	switch {
	case before == "" || !analysis.IsCJK(last):
		if withDe {
			return description{}, false
		}
	case last == '我':
		owners, start = []string{firstOwner}, start-size
	case strings.HasSuffix(before, "我们") || strings.HasSuffix(before, "咱们"):
		owners, start = []string{firstOwner}, start-len("我们")
	case last == '你' || last == '他' || last == '她':
		start -= size
	case withDe:
		rs := []rune(before)
		k := len(rs)
		for k > 0 && len(rs)-k < 4 && analysis.IsCJK(rs[k-1]) {
			k--
		}
		for m := k; m <= len(rs)-2; m++ {
			// Not a relation alone when a name holds it ("陈爷爷", not
			// "爷爷"): it would count any record about any grandfather.
			if o := string(rs[m:]); m == k || !theLexicon().isPerson(o) {
				owners = append(owners, o)
			}
		}
		if len(owners) == 0 {
			return description{}, false
		}
		start = len(string(rs[:k]))
	default:
		return description{}, false
	}
	return description{span: text[start : i+len(n)], owners: owners}, true
}

// latinDescription reads the owner before a Latin noun at text[i:]: "X's"
// (X, lowercased), "my" or "our" (the first person), another determiner
// (no owner); a noun with none ("what did nurse say") has no owner.
func latinDescription(text string, i int, n string) (description, bool) {
	start := i
	var owners []string
	if m := latinOwner.FindStringSubmatchIndex(text[:i]); m != nil {
		start = m[0]
		switch {
		case m[2] >= 0:
			owners = []string{strings.ToLower(text[m[2]:m[3]])}
		case strings.EqualFold(text[m[4]:m[5]], "my") || strings.EqualFold(text[m[4]:m[5]], "our"):
			owners = []string{firstOwner}
		}
	}
	// The span as stripWords drops it: "Zhou's" is the words "Zhou" and "s".
	span := strings.NewReplacer("'s", " ", "’s", " ").Replace(text[start : i+len(n)])
	return description{span: strings.Join(strings.Fields(span), " "), owners: owners}, true
}

// describedRole returns the role of agents the records name beside the
// description's nouns, and how many records do; "" when none or a tie.
func (db *DB) describedRole(d description, agents []string) (string, int, error) {
	bm, err := db.idx.Filter(&index.Filter{Agents: agents})
	if err != nil {
		return "", 0, fmt.Errorf("lazymem: engine: filter: %w", err)
	}
	words := slices.Clone(d.nouns)
	if len(d.owners) > 0 && d.owners[0] != firstOwner {
		words = append(words, d.owners[0])
	}
	ids, recs, err := db.searchRead(strings.Join(words, " "), bm, describeScan)
	if err != nil {
		return "", 0, err
	}
	votes := map[string]int{}
	turns := sessionTurns{db: db}
	for _, id := range ids {
		r, ok := recs[id]
		if !ok {
			continue
		}
		if len(d.owners) == 0 && addressed(r.Text, d.nouns) {
			// "师母，付款那边您说一下": the one addressed speaks next. Only
			// for a description with no owner: "爸，…" is said by a son
			// and by a daughter-in-law to two different people.
			role, err := turns.nextSpeaker(id, r)
			if err != nil {
				return "", 0, err
			}
			if role != "" {
				votes[role]++
			}
			continue
		}
		names := besideNouns(r.Text, d)
		if len(names) == 0 {
			continue
		}
		roles, err := db.namedRoles(names, agents)
		if err != nil {
			return "", 0, err
		}
		for _, role := range roles {
			votes[role]++
		}
	}
	best, n := soleWinner(votes)
	return best, n, nil
}

// besideNouns returns the names text holds right beside one of the
// description's nouns, in a record that names the description's owner:
// CJK names of two to four characters just after the noun or just before
// it, capitalized words up to three words either side. An owner's name
// ("陈爷爷的", "Linda's") is not the person.
func besideNouns(text string, d description) []string {
	lower := strings.ToLower(text)
	if len(lower) != len(text) { // offsets must agree: read the lowered text
		text = lower
	}
	owned := len(d.owners) == 0
	for _, o := range d.owners {
		if o != firstOwner && (indexWord(lower, o) >= 0 || spelledIn(text, o)) {
			owned = true
			break
		}
	}
	var names []string
	for _, n := range d.nouns {
		for off := 0; off < len(lower); {
			i := indexWord(lower[off:], n)
			if i < 0 {
				break
			}
			i += off
			j := i + len(n)
			off = j
			if len(d.owners) > 0 && d.owners[0] == firstOwner {
				if !strings.HasSuffix(text[:i], "我") && !strings.HasSuffix(lower[:i], "my ") && !strings.HasSuffix(lower[:i], "our ") {
					continue
				}
			} else if !owned {
				continue
			}
			if r, _ := utf8.DecodeRuneInString(n); analysis.IsCJK(r) {
				names = append(names, cjkBeside(text, i, j)...)
			} else {
				names = append(names, latinBeside(text, i, j)...)
			}
		}
	}
	return names
}

// spelledIn reports whether a Latin owner is the pinyin of a surname
// character of text ("Zhou's daughter" and "老周的女儿").
func spelledIn(text, owner string) bool {
	if owner == "" || owner[0] >= utf8.RuneSelf {
		return false
	}
	py := thePinyin()
	if !py.isPinyin(owner) {
		return false
	}
	for _, r := range text {
		if strings.ContainsRune(surnames, r) && slices.Contains(py.spellings([]rune{r}), owner) {
			return true
		}
	}
	return false
}

// cjkBeside returns the runs of two to four CJK characters right after
// text[i:j] and right before it (not before 的: an owner).
func cjkBeside(text string, i, j int) []string {
	var out []string
	after := []rune(text[j:])
	k := 0
	for k < len(after) && k < 4 && analysis.IsCJK(after[k]) {
		k++
	}
	for m := 2; m <= k; m++ {
		out = append(out, string(after[:m]))
	}
	before := []rune(text[:i])
	if len(before) > 0 && before[len(before)-1] != '的' {
		k = len(before)
		for k > 0 && len(before)-k < 4 && analysis.IsCJK(before[k-1]) {
			k--
		}
		for m := k; m <= len(before)-2; m++ {
			out = append(out, string(before[m:]))
		}
	}
	return out
}

// latinBeside returns the capitalized words up to three words either side
// of text[i:j], not an owner ("Linda's") or a sentence's first word.
func latinBeside(text string, i, j int) []string {
	isWord := func(r rune) bool { return r < utf8.RuneSelf && (unicode.IsLetter(r) || r == '\'' || r == '-') }
	before := strings.FieldsFunc(text[:i], func(r rune) bool { return !isWord(r) })
	after := strings.FieldsFunc(text[j:], func(r rune) bool { return !isWord(r) })
	if len(before) > 3 {
		before = before[len(before)-3:]
	}
	if len(after) > 3 {
		after = after[:3]
	}
	var out []string
	for _, w := range append(before, after...) {
		if isUpperWord(w) && !strings.HasSuffix(w, "'s") && !englishNotName[w] && !titles[strings.ToLower(w)] {
			out = append(out, w)
		}
	}
	return out
}

// namedRoles returns the roles of agents the names name: a Chinese role
// spelled so, or a Latin role holding the word.
func (db *DB) namedRoles(names, agents []string) ([]string, error) {
	var cands []string
	if err := db.lookupRoles(func(m *roleMaps) {
		for _, n := range names {
			rs := []rune(n)
			switch {
			case isUpperWord(n):
				cands = append(cands, m.word[strings.ToLower(n)]...)
			case slices.Contains(m.firstChar[rs[0]], n):
				cands = append(cands, n)
			case !nameStop[n]:
				// A nickname (小雨 for 周雨) or a surname and an honorific
				// (顾老师 for 顾文华).
				cands = append(cands, m.nicknameRoles(n)...)
			}
		}
	}); err != nil {
		return nil, err
	}
	held, err := db.heldRoles(uniq(cands), agents)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(held, func(r string) bool { return r == firstPersonRole || r == assistantRole }), nil
}

// describedSpeaker returns the role a speaker question names by
// description (describe, describedRole), the words that name it, and
// whether its owner is the first person (then 我 and "my" name no
// speaker); "" when the question names none or is not a speaker question.
func (db *DB) describedSpeaker(text string, agents []string) (role, span string, own bool, err error) {
	lx := theLexicon()
	d, ok := lx.describe(text)
	if !ok || (lx.contentLeft(stripWords(text, []string{d.span})) && !speechWord.MatchString(text)) {
		return "", "", false, nil
	}
	// A role named by the relation itself (a family's 奶奶, "Mom"): the
	// one the agents hold, in either language.
	var same []string
	for _, n := range d.nouns {
		same = append(same, n, capitalize(n))
	}
	if role, err = db.oneHeld(same, agents); err != nil || role != "" {
		return role, d.span, len(d.owners) > 0 && d.owners[0] == firstOwner, err
	}
	role, _, err = db.describedRole(d, agents)
	if err != nil || role == "" {
		return "", "", false, err
	}
	return role, d.span, len(d.owners) > 0 && d.owners[0] == firstOwner, nil
}

// isPerson reports whether w is one of the lexicon's [person] nouns.
func (lx *lexicon) isPerson(w string) bool {
	for _, nouns := range lx.persons {
		if slices.Contains(nouns, w) {
			return true
		}
	}
	return false
}

// addressed reports whether text opens by addressing one of nouns: the
// noun, then a comma or colon, or 你/您 ("师母，您说一下", "琪琪你说").
func addressed(text string, nouns []string) bool {
	lower := strings.ToLower(text)
	for _, n := range nouns {
		if rest, ok := strings.CutPrefix(lower, n); ok {
			r, _ := utf8.DecodeRuneInString(rest)
			if strings.ContainsRune("，,：:你您", r) {
				return true
			}
		}
	}
	return false
}

// nextSpeaker returns the role of the turn after record id in its
// session, when another person's (not the user's or the assistant's);
// "" otherwise.
func (s *sessionTurns) nextSpeaker(id uint64, r Record) (string, error) {
	return s.speakerAt(id, r, 1)
}

// speakerAt returns the role of the turn delta places from record id in
// its session, when another person's (not r's, the user's or the
// assistant's); "" otherwise.
func (s *sessionTurns) speakerAt(id uint64, r Record, delta int) (string, error) {
	at, ok, err := s.neighbour(&r, id, delta)
	if err != nil || !ok {
		return "", err
	}
	recs, err := s.db.readRecords([]uint64{at})
	if err != nil {
		return "", err
	}
	n, ok := recs[at]
	if !ok || n.Role == r.Role || n.Role == firstPersonRole || n.Role == assistantRole {
		return "", nil
	}
	return n.Role, nil
}
