package engine

import (
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/lazymem/lazymem/index/analysis"
)

// The built-in lexicon (lexicon.txt, embedded): concept groups for query
// expansion, pleasantries, the words that frame a question about a
// speaker, and the words that ask about an earlier state. The file's
// header says what each section is for.
//
//go:embed lexicon.txt
var lexiconText string

// lexicon is the parsed lexicon.
type lexicon struct {
	groups       [][]string // [expand]: lowercased terms per concept
	pleasantries []string   // lowercased, longest first
	// pleasantWords holds the words (maximal runs of word runes) of the
	// pleasantries: a clause with an ASCII word outside it is not one
	// (pleasantClause's quick answer).
	pleasantWords map[string]bool
	frame         map[string]bool // lowercased
	earlier       []string        // lowercased
	current       []string        // lowercased
	mention       []string        // lowercased
	question      []string        // longest first
	// unsearched holds the question words and the Chinese words asking
	// about an earlier state (stripQuestionWords), longest first.
	unsearched []string
	// previous and previousMeeting name the previous session and the
	// previous meeting (recall_previous.go); longest first.
	previous, previousMeeting []string
	// persons: [person], one person's nouns per entry (recall_describe.go).
	persons [][]string
	// frameCJK holds the CJK frame words, longest first (contentLeft).
	frameCJK []string
	// byWord and byFirst index groups for expand: byWord maps an ASCII
	// term that is one word (and each of its plurals) to its groups, found
	// among the text's words; byFirst holds the groups' other terms by
	// their first rune, searched for in a text that has the rune.
	byWord  map[string][]int
	byFirst map[rune][]groupTerm
}

// groupTerm is a term of group g.
type groupTerm struct {
	t string
	g int
}

var builtinLexicon = sync.OnceValues(func() (*lexicon, error) { return parseLexicon(lexiconText) })

// theLexicon returns the built-in lexicon. It is part of the binary and
// parsed by a test, so an error here is a build defect: recall then runs
// without a lexicon rather than failing.
func theLexicon() *lexicon {
	lx, err := builtinLexicon()
	if err != nil {
		return &lexicon{frame: map[string]bool{}}
	}
	return lx
}

func parseLexicon(src string) (*lexicon, error) {
	lx := &lexicon{frame: map[string]bool{}}
	section := ""
	for n, line := range strings.Split(src, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = line[1 : len(line)-1]
			continue
		}
		var terms []string
		for _, t := range strings.Split(line, ",") {
			t = strings.ToLower(strings.Join(strings.Fields(t), " "))
			if t == "" {
				return nil, fmt.Errorf("%w: lexicon line %d: empty term", ErrInvalid, n+1)
			}
			terms = append(terms, t)
		}
		switch section {
		case "expand":
			lx.groups = append(lx.groups, terms)
		case "pleasantries":
			lx.pleasantries = append(lx.pleasantries, terms...)
		case "frame":
			for _, t := range terms {
				lx.frame[t] = true
			}
		case "earlier":
			lx.earlier = append(lx.earlier, terms...)
		case "mention":
			lx.mention = append(lx.mention, terms...)
		case "current":
			lx.current = append(lx.current, terms...)
		case "question":
			lx.question = append(lx.question, terms...)
		case "previous":
			lx.previous = append(lx.previous, terms...)
		case "previous meeting":
			lx.previousMeeting = append(lx.previousMeeting, terms...)
		case "person":
			lx.persons = append(lx.persons, terms)
		default:
			return nil, fmt.Errorf("%w: lexicon line %d: term outside a known section %q", ErrInvalid, n+1, section)
		}
	}
	slices.SortFunc(lx.pleasantries, func(a, b string) int { return len(b) - len(a) })
	lx.pleasantWords = map[string]bool{}
	for _, p := range lx.pleasantries {
		for _, w := range strings.FieldsFunc(p, func(r rune) bool { return !analysis.IsWordRune(r) }) {
			lx.pleasantWords[w] = true
		}
	}
	lx.unsearched = slices.Clone(lx.question)
	for _, w := range lx.earlier {
		// 之前 and 以前 also say "before" a time ("20号之前退订"): a
		// relation the answer states, so searched.
		if r, _ := utf8.DecodeRuneInString(w); analysis.IsCJK(r) && w != "之前" && w != "以前" {
			lx.unsearched = append(lx.unsearched, w)
		}
	}
	for _, l := range [][]string{lx.question, lx.unsearched, lx.previous, lx.previousMeeting} {
		slices.SortFunc(l, func(a, b string) int { return len(b) - len(a) })
	}
	for w := range lx.frame {
		if r, _ := utf8.DecodeRuneInString(w); analysis.IsCJK(r) {
			lx.frameCJK = append(lx.frameCJK, w)
		}
	}
	slices.SortFunc(lx.frameCJK, func(a, b string) int {
		if d := len(b) - len(a); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	lx.indexGroups()
	return lx, nil
}

// indexGroups fills byWord and byFirst. A term of ASCII word runes only
// occurs on word boundaries (containsWord) exactly when it is one of the
// text's maximal runs of word runes, and so do its plurals; any other term
// is searched for as before, when the text holds its first rune.
func (lx *lexicon) indexGroups() {
	lx.byWord = map[string][]int{}
	lx.byFirst = map[rune][]groupTerm{}
	for g, terms := range lx.groups {
		for _, t := range terms {
			if !asciiWord(t) {
				r, _ := utf8.DecodeRuneInString(t)
				lx.byFirst[r] = append(lx.byFirst[r], groupTerm{t, g})
				continue
			}
			for _, w := range append([]string{t}, plurals(t)...) {
				if l := lx.byWord[w]; len(l) == 0 || l[len(l)-1] != g {
					lx.byWord[w] = append(l, g)
				}
			}
		}
	}
}

// asciiWord reports whether t is ASCII word runes only.
func asciiWord(t string) bool {
	for i := 0; i < len(t); i++ {
		if t[i] >= utf8.RuneSelf || !analysis.IsWordRune(rune(t[i])) {
			return false
		}
	}
	return t != ""
}

// expansion is what one concept group adds to a query: the group's terms
// the query used (trigger), the others in the query's script (add) and
// those in the other script (other: Chinese terms for an English query,
// English ones for a Chinese query).
type expansion struct {
	trigger, add, other []string
}

// expand returns, for every concept group one of whose terms occurs in
// text, the terms found and the group's other terms, split by script:
// the caller weighs the terms of the other script lower (a record in the
// other language is found through them, but they are rarer in a history
// in the query's language and would otherwise outweigh its own terms).
// Phrases ("go live") only trigger: added, their words would match on
// their own ("go"). So do terms holding a question word ("去哪里", "多少
// 人"): text is the question as asked, before stripQuestionWords, so that
// a question form names its concept, but the form itself is not searched
// (it matches other questions, not answers). An English term also
// triggers in its plural ("partners" for "partner"): the lexicon lists
// singulars, and BM25's stemmer already matches both forms of the terms
// it adds.
func (lx *lexicon) expand(text string) []expansion {
	return lx.expandGroups(text, lx.triggered)
}

// expandGroups is expand over the groups candidates returns for the
// lowered text, in order (a group none of whose terms occurs adds
// nothing).
func (lx *lexicon) expandGroups(text string, candidates func(lower string) []int) []expansion {
	lower := strings.ToLower(text)
	hasCJK, hasLatin := scripts(lower)
	var out []expansion
	for _, gi := range candidates(lower) {
		g := lx.groups[gi]
		var e expansion
		for _, t := range g {
			if containsWord(lower, t) || containsPlural(lower, t) {
				e.trigger = append(e.trigger, t)
			}
		}
		if len(e.trigger) == 0 {
			continue
		}
		for _, t := range g {
			r, _ := utf8.DecodeRuneInString(t)
			cjk := analysis.IsCJK(r)
			if strings.ContainsAny(t, " -") || (cjk && lx.holdsQuestionWord(t)) {
				continue
			}
			if (cjk && !hasCJK) || (!cjk && !hasLatin) {
				e.other = append(e.other, t)
				continue
			}
			if !containsWord(lower, t) {
				e.add = append(e.add, t)
			}
		}
		if len(e.add) > 0 || len(e.other) > 0 {
			out = append(out, e)
		}
	}
	return out
}

// triggered returns, in order, the groups one of whose terms occurs in
// lower (containsWord or containsPlural): the one-word ASCII terms through
// byWord and lower's words, the others searched for when lower has their
// first rune (which their plurals share).
func (lx *lexicon) triggered(lower string) []int {
	var gs []int
	var seenASCII [utf8.RuneSelf]bool
	var seen map[rune]bool
	start := -1
	for i, r := range lower {
		if r < utf8.RuneSelf {
			if !seenASCII[r] {
				seenASCII[r] = true
				gs = lx.appendScanned(gs, lower, r)
			}
		} else if !seen[r] {
			if seen == nil {
				seen = map[rune]bool{}
			}
			seen[r] = true
			gs = lx.appendScanned(gs, lower, r)
		}
		if analysis.IsWordRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			gs = append(gs, lx.byWord[lower[start:i]]...)
			start = -1
		}
	}
	if start >= 0 {
		gs = append(gs, lx.byWord[lower[start:]]...)
	}
	slices.Sort(gs)
	return slices.Compact(gs)
}

// appendScanned appends the groups of the terms beginning with r that
// occur in lower.
func (lx *lexicon) appendScanned(gs []int, lower string, r rune) []int {
	for _, st := range lx.byFirst[r] {
		if containsWord(lower, st.t) || containsPlural(lower, st.t) {
			gs = append(gs, st.g)
		}
	}
	return gs
}

// containsPlural reports whether lower holds the English plural of the
// Latin word t on word boundaries: "partners", "classes", "boxes",
// "parties".
func containsPlural(lower, t string) bool {
	for _, p := range plurals(t) {
		if containsWord(lower, p) {
			return true
		}
	}
	return false
}

// plurals returns the English plurals of the Latin word t (none for a
// phrase or a CJK term).
func plurals(t string) []string {
	if t == "" || strings.ContainsAny(t, " -") {
		return nil
	}
	if r, _ := utf8.DecodeRuneInString(t); r >= utf8.RuneSelf {
		return nil
	}
	switch t[len(t)-1] {
	case 's', 'x', 'h':
		return []string{t + "es"}
	case 'y':
		return []string{t + "s", t[:len(t)-1] + "ies"}
	}
	return []string{t + "s"}
}

// holdsQuestionWord reports whether the CJK term t holds one of the
// question words stripQuestionWords removes.
func (lx *lexicon) holdsQuestionWord(t string) bool {
	for _, w := range lx.question {
		if strings.Contains(t, w) {
			return true
		}
	}
	return false
}

// asksEarlier reports whether text asks about an earlier state.
func (lx *lexicon) asksEarlier(text string) bool { return containsAny(text, lx.earlier) }

// asksMention reports whether text asks who mentioned something.
func (lx *lexicon) asksMention(text string) bool { return containsAny(text, lx.mention) }

// asksCurrent reports whether text asks about the current state or a
// decision.
// "Pick" asks which choice was made ("what pool size did we pick?"),
// "pick up" does not ("when do customers pick up their boxes?").
func (lx *lexicon) asksCurrent(text string) bool {
	if strings.Contains(strings.ToLower(text), "pick") { // the pattern only then: a recall's path
		text = pickUp.ReplaceAllString(text, " ")
	}
	return containsAny(text, lx.current)
}

var pickUp = regexp.MustCompile(`(?i)\bpick(s|ed|ing)?\s+(\w+\s+){0,2}up\b`)

func containsAny(text string, terms []string) bool {
	lower := strings.ToLower(text)
	for _, t := range terms {
		if containsWord(lower, t) {
			return true
		}
	}
	return false
}

// clauseEnd reports whether r ends a clause.
func clauseEnd(r rune) bool {
	return strings.ContainsRune(",.!?;:，。！？；：、…~～\n", r)
}

// pleasantClause reports whether clause is made only of pleasantries (and
// spaces, punctuation, emoji).
func (lx *lexicon) pleasantClause(clause string) bool {
	s := strings.ToLower(clause)
	if lx.foreignWord(s) {
		return false
	}
	return lx.onlyPleasantries(s)
}

// foreignWord reports whether s holds an ASCII word (a maximal run of word
// runes, all ASCII) that no pleasantry holds. onlyPleasantries is then
// false: a pleasantry matches only at word boundaries unless it starts or
// ends with a CJK or non-word rune, so a match never covers part of an
// ASCII word, and a whole one only if the pleasantry holds that word; the
// word survives every replacement. It spares the replacements' scans, one
// per pleasantry, on nearly every clause (profile of a cold recall at 1M:
// stripPleasantries was 0.3-0.5 ms of the 50 candidates' embedding stage).
func (lx *lexicon) foreignWord(s string) bool {
	start, ascii := -1, true
	for i, r := range s {
		if analysis.IsWordRune(r) {
			if start < 0 {
				start, ascii = i, true
			}
			ascii = ascii && r < utf8.RuneSelf
			continue
		}
		if start >= 0 && ascii && !lx.pleasantWords[s[start:i]] {
			return true
		}
		start = -1
	}
	return start >= 0 && ascii && !lx.pleasantWords[s[start:]]
}

// onlyPleasantries is pleasantClause on s, lowercased, without the quick
// answer: every pleasantry replaced by a space, is a word rune left?
func (lx *lexicon) onlyPleasantries(s string) bool {
	for _, p := range lx.pleasantries {
		for {
			i := indexWord(s, p)
			if i < 0 {
				break
			}
			s = s[:i] + " " + s[i+len(p):]
		}
	}
	for _, r := range s {
		if analysis.IsWordRune(r) {
			return false
		}
	}
	return true
}

// clauses splits text after each clause-ending rune.
func clauses(text string) []string {
	var out []string
	start := 0
	for i, r := range text {
		if clauseEnd(r) {
			out = append(out, text[start:i+utf8.RuneLen(r)])
			start = i + utf8.RuneLen(r)
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}

// stripPleasantries drops the leading and trailing clauses of text made
// only of pleasantries ("好的，", "ok thanks,", "谢谢大家。"). A text made
// only of them is returned unchanged.
func (lx *lexicon) stripPleasantries(text string) string {
	cs := clauses(text)
	i, j := 0, len(cs)
	for i < j && lx.pleasantClause(cs[i]) {
		i++
	}
	for j > i && lx.pleasantClause(cs[j-1]) {
		j--
	}
	if i == j {
		return text
	}
	if i == 0 && j == len(cs) {
		return text
	}
	return strings.TrimSpace(strings.Join(cs[i:j], ""))
}

// maxLowInfoBytes bounds the texts lowInfo examines: a record made only of
// pleasantries is short ("好的，没问题。" is 21 bytes), and the check runs on
// every candidate.
const maxLowInfoBytes = 64

// lowInfo reports whether text says nothing beyond pleasantries: every
// clause is made of them.
func (lx *lexicon) lowInfo(text string) bool {
	if len(text) > maxLowInfoBytes {
		return false
	}
	for _, c := range clauses(text) {
		if !lx.pleasantClause(c) {
			return false
		}
	}
	return true
}

var stopSet = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range analysis.StopWords() {
		m[w] = true
	}
	return m
})

// contentLeft reports whether text holds a word that is neither a frame
// word nor an English stopword: CJK runs count when something other than
// frame words is left of them.
func (lx *lexicon) contentLeft(text string) bool {
	// The setting of a speaker question is frame too: "在复盘会上",
	// "in the postmortem meeting" say where X spoke, not what about.
	s := settingPhrase.ReplaceAllString(strings.ToLower(text), " ")
	// CJK frame words first, longest first, so that 说了什么 leaves nothing.
	for _, w := range lx.frameCJK {
		s = strings.ReplaceAll(s, w, " ")
	}
	stop := stopSet()
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !analysis.IsWordRune(r) }) {
		if lx.frame[w] || stop[w] || (len(w) == 1 && w[0] < utf8.RuneSelf && !unicode.IsDigit(rune(w[0]))) {
			continue
		}
		return true
	}
	return false
}

// settingPhrase is where a question says someone spoke: at a meeting
// (在复盘会上, 周会上, 会议上) or in one ("in the postmortem meeting", "at
// today's stand-up", "during the call"), with up to four characters or
// two words naming it.
var settingPhrase = mustGate(`在?\p{Han}{0,4}?(?:会议|会)上|\b(?:in|at|during|on)\s+(?:the\s+|our\s+|this\s+|today's\s+|yesterday's\s+|last\s+)?(?:[a-z-]+\s+){0,2}?(?:meeting|call|sync|stand-?up|review|postmortem|post-mortem|retro|retrospective)\b`)

// stripQuestionWords removes the Chinese question words from text (for
// BM25: they match other questions, not answers), and the words asking
// about an earlier state (原来, 一开始: the plan they ask for never says
// them; only a turn revising it may, and their characters' unigrams match
// any turn holding 来 or 开始); text made only of them is returned
// unchanged.
func (lx *lexicon) stripQuestionWords(text string) string {
	s := text
	for _, w := range lx.unsearched {
		s = strings.ReplaceAll(s, w, " ")
	}
	for _, r := range s {
		if analysis.IsWordRune(r) {
			return strings.Join(strings.Fields(s), " ")
		}
	}
	return text
}

// StripPleasantries returns text without its pleasantries ("thanks", "好的，
// 没问题", ...): the text the selective stage embeds for a record (and for
// a query) is its Construct of the record with Text stripped this way. A
// text made only of pleasantries is returned unchanged.
func StripPleasantries(text string) string { return theLexicon().stripPleasantries(text) }

// scripts reports whether text holds CJK characters and Latin letters.
func scripts(text string) (hasCJK, hasLatin bool) {
	for _, r := range text {
		switch {
		case analysis.IsCJK(r):
			hasCJK = true
		case r < utf8.RuneSelf && unicode.IsLetter(r):
			hasLatin = true
		}
	}
	return hasCJK, hasLatin
}

// ruleWordSet is the built-in lexicon's ruleWords.
var ruleWordSet = sync.OnceValue(func() map[string]bool { return theLexicon().ruleWords() })

// ruleWords returns the words of the sections that name a rule rather
// than a topic (pleasantries, frame, mention, earlier, current, question,
// previous, previous meeting), lower case: the glossary neither
// translates them nor adds them (安排 of "资金安排怎么样了" asks how the
// funding stands; "arrange" and "plan" would find every plan).
func (lx *lexicon) ruleWords() map[string]bool {
	m := map[string]bool{}
	for w := range lx.frame {
		m[w] = true
	}
	for _, ws := range [][]string{lx.pleasantries, lx.earlier, lx.current, lx.mention, lx.question, lx.unsearched, lx.previous, lx.previousMeeting} {
		for _, w := range ws {
			m[w] = true
		}
	}
	return m
}

// isExpandTerm reports whether t (lower case) is a term of an [expand]
// concept.
func (lx *lexicon) isExpandTerm(t string) bool {
	if gs := lx.byWord[t]; len(gs) > 0 {
		return true
	}
	r, _ := utf8.DecodeRuneInString(t)
	for _, st := range lx.byFirst[r] {
		if st.t == t {
			return true
		}
	}
	return false
}
