package engine

import (
	"cmp"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/lazymem/lazymem/index"
	"github.com/lazymem/lazymem/index/analysis"
)

// The parse stages: the time expression, pleasantries and expansion
// before the filter, speaker detection after it (it needs the filter's
// agents and only runs when some record passed).

// parse resolves the time window (Query.ParseTime intersected with
// Since/Until) and the texts BM25 searches and the embedder sees: the
// query without its time expression and its leading or trailing
// pleasantries ("ok thanks, ..."), and for BM25 the built-in lexicon's
// expansion (Query.NoExpansion) and Query.Synonyms.
func (p *plan) parse() {
	q, st := p.q, &p.res.Stats
	text := q.Text
	since, until := q.Since, q.Until
	if q.ParseTime {
		if tr, ok := ParseTime(text, p.now); ok && !p.nameEndingGang(text, tr) {
			text = tr.Rest
			st.TimeExpr = tr.Expr
			if since.IsZero() || tr.Since.After(since) {
				since = tr.Since
			}
			if until.IsZero() || tr.Until.Before(until) {
				until = tr.Until
			}
			p.at = tr.At
		}
	}
	if !q.ParseTime && mayNameDate(text) {
		// A date the query names without ParseTime: a soft prior, never
		// a window (see dateMentions).
		if tr, ok := ParseTime(text, p.now); ok {
			p.dateSince, p.dateUntil, p.dateExpr = tr.Since, tr.Until, tr.Expr
		}
	}
	p.since, p.until = since, until
	if p.at.Before(since) || !until.IsZero() && !p.at.Before(until) {
		p.at = time.Time{} // the caller's window leaves it out
	}
	st.Since, st.Until = since, until
	p.parseText(text)
}

// parseText sets the texts and the question's kind from text, the query
// without its time expression.
func (p *plan) parseText(text string) {
	lx := theLexicon()
	p.queryLowInfo = lx.lowInfo(text)
	p.denseText = strings.TrimSpace(lx.stripPleasantries(text))
	p.denseText, p.prevExpr, p.prevMeeting = lx.findPrevious(p.denseText)
	p.earlierWords = lx.asksEarlier(p.denseText)
	p.earlier = p.prevExpr != "" || p.earlierWords
	p.changed = asksChange(p.denseText, p.earlierWords)
	p.current = lx.asksCurrent(p.denseText) || p.changed
	p.mention = lx.asksMention(p.denseText)
}

// nameEndingGang reports whether the time expression tr of text is a bare
// "刚说" ("just said") whose 刚 ends a speaker's name: "吴刚说了什么？"
// asks what 吴刚 said, not what was said just now. A name is the one or
// two characters before 刚 with it, a role of the query's agents; only
// this expression costs the one or two role lookups.
func (p *plan) nameEndingGang(text string, tr TimeRange) bool {
	if tr.Expr != "刚说" {
		return false
	}
	i := strings.Index(text, tr.Expr)
	if i <= 0 {
		return false
	}
	before := []rune(text[:i])
	agents := p.q.Agents
	if p.q.Agent != "" {
		agents = append([]string{p.q.Agent}, agents...)
	}
	for n := 1; n <= 2 && n <= len(before); n++ {
		name := string(before[len(before)-n:]) + "刚"
		if r, _ := utf8.DecodeRuneInString(name); !analysis.IsCJK(r) {
			break
		}
		bm, err := p.db.idx.Filter(&index.Filter{Agents: agents, Roles: []string{name}})
		if err == nil && !bm.IsEmpty() {
			return true
		}
	}
	return false
}

// setText sets the BM25 text from the dense text: the lexicon expansion
// is appended at half the weight of the query's own words, the expansion
// terms of the other script (a Chinese query's English terms, an English
// query's Chinese ones) at a quarter (BM25 weighs a query term by its
// frequency in the query: the own words are given expandOwn times), then
// the synonyms. Once the filter is known, a concept whose words in the
// query match no record that passes it ("资金" where the records say
// "预算") is expanded at twice that weight: its other terms stand in for
// the words that found nothing.
//
// The other script at a quarter: measured on the scenario suite (a
// bilingual history), crosslingual hit@1/5 0/0 -> .33/.67 and all classes
// .65/.90 -> .70/.96, no class lower; at half weight crosslingual reached
// .67/1.00 but paraphrase fell from .56/.89 to .33/.67 (the other
// language's records crowd out the answer). LoCoMo (English) and the
// Chinese set (Chinese) are unchanged.
func (p *plan) setText() error {
	q, st := p.q, &p.res.Stats
	text := theLexicon().stripQuestionWords(p.denseText)
	st.Expansion = ""
	p.terms = nil
	if !q.NoExpansion && !noExpansion {
		var b strings.Builder
		add := func(ts []string, n int) {
			for range n {
				for _, t := range ts {
					if b.Len() > 0 {
						b.WriteByte(' ')
					}
					b.WriteString(t)
				}
			}
		}
		insts := categoryInstances(theCategories(), text)
		scale := 1
		if len(insts) > 0 {
			scale = categoryScale
		}
		expanded := map[string]bool{}
		var glossed []string // the Chinese translations searched by their bigrams
		own := ownTerms(text)
		for _, e := range theLexicon().expand(p.denseText) {
			if dropOwnStems {
				e.add = notOwn(e.add, own)
			}
			w := 1
			if p.bm != nil && !p.bm.IsEmpty() {
				found := false
				for _, t := range e.trigger {
					hits, err := p.db.idx.Search(t, p.bm, 1, nil)
					if err != nil {
						return fmt.Errorf("lazymem: engine: search: %w", err)
					}
					if len(hits) > 0 {
						found = true
						break
					}
				}
				if !found {
					w = 2
				}
			}
			add(e.add, expandSame*w*scale)
			add(e.other, expandOther*w*scale)
			for _, t := range e.other {
				expanded[t] = true
			}
		}
		if !noGlossary {
			var err error
			if glossed, err = p.addGlossary(text, expanded, scale, add); err != nil {
				return err
			}
		}
		add(insts, categoryReps)
		if !noInflect {
			sib, irr := inflectionSiblings(text)
			add(sib, expandOwn*scale)
			add(irr, irregularReps*scale)
		}
		if err := p.aliasText(text, func(names []string) { add(names, aliasReps*scale) }); err != nil {
			return err
		}
		topic, frame := text, ""
		if currentReps < expandOwn {
			topic, frame = theLexicon().splitCurrent(text)
		}
		if b.Len() > 0 || len(glossed) > 0 || frame != "" {
			st.Expansion = b.String()
			text = strings.Repeat(topic+" ", expandOwn*scale)
			if frame != "" {
				text += strings.Repeat(frame+" ", currentReps*scale)
			}
			text += st.Expansion
		}
		if len(glossed) > 0 {
			st.Expansion = strings.TrimSpace(st.Expansion + " " + strings.Join(glossed, " "))
		}
	}
	p.text = expandSynonyms(text, q.Synonyms)
	st.Text = p.text
	if len(p.terms) > 0 {
		st.Text += " " + strings.Join(p.terms, " ")
	}
	return nil
}

// currentReps is the weight of a one-word [current] term ("decide",
// "final", "现在", "决定") in a query with other content words, against
// expandOwn for the others: it asks which record settles or states the
// topic, the other words name the topic. At full weight, with the
// expansion's "decided" on top (notOwn), "what did we decide about the
// connection pool?" ranked a neighbouring "We decided to ship the release
// on Friday" first (it inherits "pool" and "connection" from the turn
// before it). Measured, base and x2 (x1, x3): the 36 scenario sets
// (1,516 questions) hit@1 / hit@5 1097.69 / 1366.75 -> 1097.34 / 1368.88
// (1096.57 / 1367.89, 1095.64 / 1367.09), recency .618/.943 -> .627/.947;
// the eight Chinese sets' lazy R@1 two questions lower, R@5 two higher
// (".": z-140 "我现在体重多少？" rank 8 -> none, z-136 none -> 9); LoCoMo
// lazy hash .469/.719/.784/.845 -> .467/.719/.786/.847 (as with notOwn
// alone). With English terms only, the scenario sets fell to 1095.63 /
// 1366.75: their gains are Chinese.
var currentReps = 2

// splitCurrent returns text without its one-word [current] terms and
// those terms, when words that are not rule words remain ("what did we
// decide about the pool" -> "what did we about the pool", "decide");
// otherwise text and "".
func (lx *lexicon) splitCurrent(text string) (rest, current string) {
	lower := strings.ToLower(text)
	var found []string
	for _, t := range lx.current {
		if !strings.Contains(t, " ") && containsWord(lower, t) {
			found = append(found, t)
		}
	}
	if len(found) == 0 {
		return text, ""
	}
	rest = stripWords(text, found)
	if !lx.contentLeft(rest) {
		return text, ""
	}
	return rest, strings.Join(found, " ")
}

// dropOwnStems is notOwn on: false only in a test that compares scores
// recorded before it.
var dropOwnStems = true

// ownTerms returns the analyzed terms of text.
func ownTerms(text string) map[string]bool {
	own := map[string]bool{}
	for _, t := range queryAnalyzer().Terms(text) {
		own[t] = true
	}
	return own
}

// notOwn returns the expansion terms that search something the query's
// own words do not: "decided" for a query saying "decide" is the same
// stem, and adding it would give the concept's word more weight than the
// query's other words (those outside the lexicon, often the topic: "what
// did we decide about the connection pool").
func notOwn(ts []string, own map[string]bool) []string {
	out := ts[:0:0]
	for _, t := range ts {
		for _, a := range queryAnalyzer().Terms(t) {
			if !own[a] {
				out = append(out, t)
				break
			}
		}
	}
	return out
}

// Query-term weights of the expansion, as repetitions in the BM25 text:
// the query's own words, an expansion term in the query's script, one in
// the other script (before the x2 of a concept whose own words found
// nothing).
const (
	expandOwn   = 4
	expandSame  = 2
	expandOther = 1
)

// The weight of a category's instances (categories.go): when the query
// names a category, every repetition above is multiplied by categoryScale
// and each instance is given categoryReps times, so that an instance
// weighs categoryReps/(categoryScale*expandOwn) of one of the query's own
// words. Variables only so that a diagnostic build can sweep them.
var (
	categoryScale = 1
	categoryReps  = 1
)

// noExpansion turns the built-in expansion off for every query, as
// Query.NoExpansion does for one: false but in a diagnostic build that
// measures the expansion (recall_echo_diag.go).
var noExpansion bool

// maxSpeakerWords bounds the query words checked against the role postings.
const maxSpeakerWords = 32

// maxSpeakerLookups bounds the role lookups of one query (CJK text is
// looked up by its substrings of 2-4 characters: no spaces mark a name).
const maxSpeakerLookups = 96

// maxPairLookups bounds a query's lookups of two-word names, before and
// apart from maxSpeakerLookups.
const maxPairLookups = 32

// firstPersonRole is the role the first person of a query ("what did I
// ask", "我让你") names when the store has it: the user of a chat.
const firstPersonRole = "user"

// detectSpeakers finds the names in the query that are roles of the
// searched agents: their records are boosted in fusion, and the names are
// dropped from the BM25 text and the embedded text (they match the other
// speaker addressing them, not the answer). When nothing but the question's
// frame is left ("what did 王芳 say?", "王芳说了什么"), the query asks for
// what the speaker said: the filter is narrowed to the speaker's records
// and the speaker source proposes them. The first person ("I", "我")
// names the role "user" when the agents have it: boosted, and a filter on
// the same condition, but never removed from the text.
func (p *plan) detectSpeakers() error {
	q, st := p.q, &p.res.Stats
	if q.SpeakerBoost != 1 && st.Filtered > 0 {
		var err error
		var named []string
		var spelled map[string]string
		p.speakers, st.Speakers, named, spelled, err = p.db.findSpeakers(p.denseText, p.filter.Agents)
		if err != nil {
			return err
		}
		dense, asked := p.denseText, p.denseText
		if len(named) > 0 {
			strip := make([]string, len(named))
			for i, n := range named {
				strip[i] = cmp.Or(spelled[n], n)
			}
			// Spaces collapsed where a name was: the embedded text is also
			// the cache key.
			dense = strings.Join(strings.Fields(stripWords(p.denseText, strip)), " ")
			if dense != "" {
				p.denseText = dense
			}
		}
		if err := p.findSubject(asked, named, spelled); err != nil {
			return err
		}
		if err := p.findParticipants(named); err != nil {
			return err
		}
		if p.speakers != nil && !theLexicon().contentLeft(dense) {
			// A speaker who said nothing that passes the filters ("我老公今天
			// 会上说了些啥" read as the user, who was silent in the call)
			// narrows nothing: the question's own filters still hold records.
			if p.bm.Intersects(p.speakers) {
				p.speakerOnly = true
				p.bm.And(p.speakers)
				st.Filtered = int(p.bm.GetCardinality())
				st.Notes = append(st.Notes, fmt.Sprintf("speaker question: only the records of %s", strings.Join(st.Speakers, ", ")))
			} else {
				st.Notes = append(st.Notes, fmt.Sprintf("speaker question: %s said nothing that passes the filters; not narrowed", strings.Join(st.Speakers, ", ")))
			}
		}
	}
	if q.Mode != ModeSparse {
		st.DenseText = p.denseText
	}
	return p.setText()
}

// askAssistant: a question asking for the assistant's own words names the
// role "assistant" (asksAssistant). A variable only so that a diagnostic
// build can turn it off to measure it.
var askAssistant = true

// findSpeakers returns the records of the agents whose role is named in
// text: a word of it (as typed, lowercased or capitalized), a substring of
// 2-4 characters of a CJK run, or the first person (firstPersonRole); the
// roles found, and those named by name (to be stripped from the text).
func (db *DB) findSpeakers(text string, agents []string) (bm *roaring.Bitmap, found, named []string, spelled map[string]string, err error) {
	seen := map[string]bool{}
	lookups := 0
	try := func(v string, byName bool) error {
		if seen[v] || lookups >= maxSpeakerLookups {
			return nil
		}
		seen[v] = true
		lookups++
		rb, err := db.idx.Filter(&index.Filter{Agents: agents, Roles: []string{v}})
		if err != nil {
			return fmt.Errorf("lazymem: engine: role filter: %w", err)
		}
		if rb.IsEmpty() {
			return nil
		}
		found = append(found, v)
		if byName {
			named = append(named, v)
		}
		if bm == nil {
			bm = rb
		} else {
			bm.Or(rb)
		}
		return nil
	}
	var words []string
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !analysis.IsWordRune(r) }) {
		words = appendScriptRuns(words, w)
	}
	if len(words) > maxSpeakerWords {
		words = words[:maxSpeakerWords]
	}
	// Two-word names first ("Zhou Hang", "Mary Jane"), as typed and
	// capitalized, so that a name is not found as its part: adjacent
	// Latin words, neither a stopword. Their lookups have a budget of their
	// own (maxPairLookups), so that a long query's single words are all
	// still looked up.
	stop := stopSet()
	for i := 0; i+1 < len(words) && lookups < maxPairLookups; i++ {
		a, b := words[i], words[i+1]
		if !latinName(a) || !latinName(b) || stop[strings.ToLower(a)] || stop[strings.ToLower(b)] {
			continue
		}
		for _, v := range []string{a + " " + b, capitalize(a) + " " + capitalize(b)} {
			if err := try(v, true); err != nil {
				return nil, nil, nil, nil, err
			}
		}
	}
	lookups = 0
	firstPerson := false
	for _, w := range words {
		lw := strings.ToLower(w)
		if lw == "i" || lw == "me" || lw == "my" {
			firstPerson = true
		}
		if r, _ := utf8.DecodeRuneInString(w); analysis.IsCJK(r) {
			rs := []rune(w)
			for i, r := range rs {
				if r == '我' && (i+1 == len(rs) || rs[i+1] != '们') {
					firstPerson = true
				}
			}
			// Longest first, so that a name is not also found as its part.
			for n := 4; n >= 2; n-- {
				for i := 0; i+n <= len(rs); i++ {
					if err := try(string(rs[i:i+n]), true); err != nil {
						return nil, nil, nil, nil, err
					}
				}
			}
			continue
		}
		if len(w) < 2 {
			continue
		}
		for _, v := range []string{w, lw, capitalize(w)} {
			if err := try(v, true); err != nil {
				return nil, nil, nil, nil, err
			}
		}
	}
	// Roles named otherwise than exactly: "Dr. Fang" for 方婷, "丹尼尔" for
	// "Daniel Price", "小梅" for 梁小梅.
	vs, ws, err := db.spelledRoles(words, found, agents)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	for i, v := range vs {
		if err := try(v, true); err != nil {
			return nil, nil, nil, nil, err
		}
		if spelled == nil {
			spelled = map[string]string{}
		}
		spelled[v] = ws[i]
	}
	// A speaker named by description ("陈爷爷的儿媳", "the physio", "我老
	// 公"): the role the records name beside it.
	if len(found) == 0 {
		role, span, own, err := db.describedSpeaker(text, agents)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		if role != "" {
			if err := try(role, true); err != nil {
				return nil, nil, nil, nil, err
			}
			if spelled == nil {
				spelled = map[string]string{}
			}
			spelled[role] = span
			firstPerson = firstPerson && !own
		}
	}
	role := ""
	switch {
	case askAssistant && asksAssistant(text):
		role = assistantRole
	case firstPerson:
		role = firstPersonRole
	}
	if role != "" && !seen[role] {
		n := len(found)
		if err := try(role, false); err != nil {
			return nil, nil, nil, nil, err
		}
		if role == firstPersonRole && len(found) == n && namedFirstPerson {
			rb, err := db.notAssistant(agents)
			if err != nil {
				return nil, nil, nil, nil, err
			}
			if rb != nil {
				found = append(found, firstPersonNamed)
				if bm == nil {
					bm = rb
				} else {
					bm.Or(rb)
				}
			}
		}
	}
	return bm, found, named, spelled, nil
}

// firstPersonNamed is the speaker Stats lists for the first person in a
// store whose chats name the user by name.
const firstPersonNamed = "I (every role but assistant)"

// namedFirstPerson lets the first person name every role but the
// assistant's when the agents have no role "user" (a variable only so that
// a diagnostic build can turn it off to measure it).
var namedFirstPerson = true

// notAssistant returns the records of the agents whose role is not the
// assistant's, when some are the assistant's: in a chat whose user is
// named by name ("周婷", "Nora"), "我" and "I" are whoever talks with the
// assistant, never the assistant, and without this the assistant's
// restatement of a fact ("记住了，你对芒果过敏") would keep the place the
// role "user" gives the person's own statement. A store without an
// assistant (a meeting, LoCoMo's dialogues) gets nil: every record would
// be boosted alike.
func (db *DB) notAssistant(agents []string) (*roaring.Bitmap, error) {
	ab, err := db.idx.Filter(&index.Filter{Agents: agents, Roles: []string{assistantRole}})
	if err != nil {
		return nil, fmt.Errorf("lazymem: engine: role filter: %w", err)
	}
	if ab.IsEmpty() {
		return nil, nil
	}
	all, err := db.idx.Filter(&index.Filter{Agents: agents})
	if err != nil {
		return nil, fmt.Errorf("lazymem: engine: agent filter: %w", err)
	}
	all.AndNot(ab)
	if all.IsEmpty() {
		return nil, nil
	}
	return all, nil
}

// monthNames are the words mayNameDate looks for besides digits.
var monthNames = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec", "月"}

// mayNameDate reports whether text may name a date (a digit, a month's
// name or 月): the cheap test before ParseTime for the named-date prior,
// which every recall without ParseTime runs. Relative expressions without
// a digit ("yesterday", "上周") are not dates named and get no prior.
func mayNameDate(text string) bool {
	if strings.ContainsAny(text, "0123456789") {
		return true
	}
	lower := strings.ToLower(text)
	for _, m := range monthNames {
		if strings.Contains(lower, m) {
			return true
		}
	}
	return false
}
