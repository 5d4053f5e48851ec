package engine

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/lazymem/lazymem/engine/embed"
	"github.com/lazymem/lazymem/index/analysis"
)

// "Last time" questions ("what did we talk about last time?", "上次开会定的
// 上线时间是哪天？"): the phrase names a session, not a window of time. The
// previous session is the one that started last before the current one
// (Query.CurrentSession; without it, the latest session is the one
// meant: the question is asked outside it), and the previous meeting one
// where at least meetingSpeakers people spoke within meetingMaxSpan (previousSessions says
// which exactly). The
// phrase leaves the searched and the embedded text (its words, "last",
// "time", "上", "次", match any record), and the question does not prefer
// newer answers (supersession: it asks about that session's state).
//
// The session found then narrows the filter when it can answer: when
// nothing but the phrase and the question's frame is asked ("上次我们聊了
// 什么？"), or when the question's words match one of its records. When
// they match none, "last time" was not about that session ("when did I
// last time go running?", "我上次去健身房是什么时候？") and the filter is
// left as it was; Stats.Notes says which happened.
const (
	// meetingSpeakers is the number of distinct speakers that make a
	// session a meeting.
	meetingSpeakers = 3
	// maxPreviousSessions bounds the sessions examined, latest first (by
	// their latest record), the current one included: each costs one
	// index filter and one to meetingSample+1 record reads.
	maxPreviousSessions = 12
	// meetingSample bounds the records of a session read to count its
	// speakers.
	meetingSample = 24
	// meetingMaxSpan is the longest a meeting lasts: a group chat of
	// three people over a weekend is not one.
	meetingMaxSpan = 6 * time.Hour
	// maxPreviousMeetingsTried bounds the meetings searched for the
	// question's words when the latest holds none: one index search each.
	maxPreviousMeetingsTried = 4
	// coverageHits is how many of a meeting's best matches meetingCoverage
	// reads.
	coverageHits = 5
	// scriptSample is how many of a meeting's records tell its script.
	scriptSample = 4
)

// findPrevious removes a phrase naming the previous session or meeting
// from text; it returns the text left, the phrase, and whether it named a
// meeting. "the last time" followed by a clause asks for an occurrence
// ("the last time I went running"), not a session: only the longer
// phrases ("the last time we talked") count after "the".
func (lx *lexicon) findPrevious(text string) (rest, expr string, meeting bool) {
	lower, src := strings.ToLower(text), text
	if len(lower) != len(text) { // offsets must agree: work on the lowered text
		src = lower
	}
	for _, set := range []struct {
		terms   []string
		meeting bool
	}{{lx.previousMeeting, true}, {lx.previous, false}} {
		for _, t := range set.terms {
			i := indexWord(lower, t)
			if i < 0 {
				continue
			}
			if before := " " + strings.TrimSpace(lower[:i]); t == "last time" && strings.HasSuffix(before, " the") {
				continue
			}
			rest = strings.Join(strings.Fields(src[:i]+" "+src[i+len(t):]), " ")
			return rest, src[i : i+len(t)], set.meeting
		}
		if set.meeting {
			// "our last band meeting", "上次乐队开会": a kind of meeting
			// between the words.
			for _, re := range []gatedRe{namedPreviousMeetingEN, namedPreviousMeetingZH} {
				if m := re.FindStringSubmatchIndex(src); m != nil && (len(m) < 4 || !strings.ContainsAny(src[m[2]:m[3]], "说聊谈提问讲")) {
					rest = strings.Join(strings.Fields(src[:m[0]]+" "+src[m[1]:]), " ")
					return rest, src[m[0]:m[1]], true
				}
			}
		}
	}
	return text, "", false
}

// namedPreviousMeetingEN and namedPreviousMeetingZH name the previous
// meeting of a kind: "last band meeting", "our previous budget review
// call", "上次乐队开会", "上一次项目会议" (group 1: the kind, which must not
// hold a verb of saying: "上次说开会的时间" is not a meeting).
var (
	namedPreviousMeetingEN = mustGate(`(?i)\b(?:last|previous)\s+(?:[a-z][a-z'’-]*\s+){1,2}?(?:meeting|sync|standup|stand-up|call)\b`)
	namedPreviousMeetingZH = mustGate(`上一?次的?(\p{Han}{2,4}?)(?:开会|会议|例会|的会)`)
)

// session is one session found by previousSessions.
type session struct {
	name        string
	bm          *roaring.Bitmap // its records passing the filter
	first, last time.Time
	speakers    int // the distinct roles of the records sampled
}

// previous narrows the filter to the previous session or meeting when the
// query names it (p.prevExpr) and that session can answer.
func (p *plan) previous() error {
	if p.prevExpr == "" || p.bm.IsEmpty() {
		return nil
	}
	st := &p.res.Stats
	what := "session"
	if p.prevMeeting {
		what = "meeting"
	}
	ss, err := p.previousSessions()
	if err != nil {
		return err
	}
	if len(ss) == 0 && p.prevMeeting && namesCall(p.prevExpr) {
		// A call between two ("上次通话" with one client): no session is
		// a meeting, and the previous session is the call meant.
		p.prevMeeting, what = false, "session"
		if ss, err = p.previousSessions(); err != nil {
			return err
		}
	}
	if len(ss) == 0 && p.prevMeeting && st.TimeExpr != "" && !p.justNow && !noMeetingOverWindow {
		if ss, err = p.meetingOverWindow(); err != nil {
			return err
		}
	}
	if len(ss) == 0 {
		st.Notes = append(st.Notes, fmt.Sprintf("%q: no previous %s found", p.prevExpr, what))
		return nil
	}
	s := ss[0]
	if lx := theLexicon(); lx.contentLeft(p.denseText) {
		// "Last time" may not name a session at all ("when did I last
		// time go running?"): the previous session must hold one of the
		// question's words. A meeting named as such ("上次开会我们定了
		// 什么") is one whatever its words, and the session taken for it
		// may be a group chat of three people or a meeting about
		// something else: of the latest maxPreviousMeetingsTried
		// meetings, the latest whose best match covers the most of the
		// question's content terms is meant (meetingCoverage).
		var err error
		if p.prevMeeting {
			s, err = p.meetingCoverage(ss[:min(len(ss), maxPreviousMeetingsTried)])
		} else {
			s, err = p.holdsWords(ss[0])
		}
		if err != nil {
			return err
		}
		if s == nil && !lx.contentLeft(stripWords(p.denseText, lx.current)) {
			// Nothing asked but what was decided ("what did we decide at
			// the last meeting?" of a Chinese meeting): the decision
			// words alone name no other session.
			s = ss[0]
		}
		if s == nil {
			st.Notes = append(st.Notes, fmt.Sprintf("%q: the previous %s (%s) holds none of the question's words: not narrowed to it", p.prevExpr, what, ss[0].name))
			if p.prevMeeting {
				return p.beforeCurrent()
			}
			return nil
		}
	}
	p.bm = s.bm
	st.Filtered = int(p.bm.GetCardinality())
	st.Notes = append(st.Notes, fmt.Sprintf("%q: only the previous %s, %s (%s to %s)", p.prevExpr, what, s.name,
		s.first.Format(time.RFC3339), s.last.Format(time.RFC3339)))
	return nil
}

// namesCall reports whether a phrase naming the previous meeting names a
// call ("last call", "上次视频", "上次通话").
func namesCall(expr string) bool {
	return strings.Contains(strings.ToLower(expr), "call") || strings.Contains(expr, "视频") || strings.Contains(expr, "通话")
}

// beforeCurrent narrows the filter to the records before the current
// session began (Query.CurrentSession; nothing without one, or when no
// record is left). A meeting named as the last one is before the session
// the question is asked in, even when its words are not the question's
// (an English meeting asked about in Chinese: its Chinese notes, taken
// after it, answer; this morning's records, which name the same topic,
// do not). Only for a meeting: "last time" may not name a session at all
// ("when did I last time go running?"), and the answer may be in the
// current one.
func (p *plan) beforeCurrent() error {
	if p.q.CurrentSession == "" {
		return nil
	}
	sb, err := p.sessionBitmap()
	if err != nil || sb.IsEmpty() {
		return err
	}
	first := []cand{{id: uint64(sb.Minimum())}}
	if err := p.db.fetch(first, nil); err != nil || !first[0].fetched {
		return err
	}
	f := p.filter
	f.Until = first[0].rec.Time.UnixNano()
	if f.Since != 0 && f.Since >= f.Until {
		return nil
	}
	before, err := p.db.idx.Filter(&f)
	if err != nil {
		return fmt.Errorf("lazymem: engine: filter: %w", err)
	}
	before.And(p.bm)
	before.AndNot(sb)
	if before.IsEmpty() {
		return nil
	}
	p.bm = before
	st := &p.res.Stats
	st.Filtered = int(p.bm.GetCardinality())
	st.Notes = append(st.Notes, fmt.Sprintf("%q: only records before the current session (%s) began", p.prevExpr, first[0].rec.Time.Format(time.RFC3339)))
	return nil
}

// holdsWords returns s when one of its records holds one of the
// question's words, nil when none does. A word is an index term that is
// not a single CJK character: the index also keeps each character of
// Chinese text, and one shared character is no shared word ("上次家里商量
// 谁负责配药？" and yesterday's "张阿姨下个月要回老家" share 家). When the
// question has no such term, any match counts. It costs one search and
// up to coverageHits record reads.
func (p *plan) holdsWords(s *session) (*session, error) {
	text := theLexicon().stripQuestionWords(p.denseText)
	cs, err := p.readHits(text, s.bm, coverageHits)
	if err != nil || len(cs) == 0 {
		return nil, err
	}
	want := map[string]bool{}
	for _, t := range queryAnalyzer().Terms(text) {
		if r, n := utf8.DecodeRuneInString(t); n != len(t) || !analysis.IsCJK(r) {
			want[t] = true
		}
	}
	if len(want) == 0 {
		return s, nil
	}
	for _, c := range cs {
		if !c.fetched {
			continue
		}
		for _, t := range queryAnalyzer().Terms(c.rec.Text) {
			if want[t] {
				return s, nil
			}
		}
	}
	return nil, nil
}

// readHits returns the best k BM25 matches of text among the records of
// bm, read from the log (a record that could not be read is not fetched).
func (p *plan) readHits(text string, bm *roaring.Bitmap, k int) ([]cand, error) {
	hits, err := p.db.idx.Search(text, bm, k, nil)
	if err != nil {
		return nil, fmt.Errorf("lazymem: engine: search: %w", err)
	}
	cs := make([]cand, len(hits))
	for i, h := range hits {
		cs[i].id = h.ID
	}
	if err := p.db.fetch(cs, nil); err != nil {
		return nil, err
	}
	return cs, nil
}

// meetingCoverage returns the meeting of ms (latest first) whose best
// BM25 matches (the top coverageHits: a short reply that only inherits
// the words of the turn before it ranks high and holds none of them) one
// shares the most index terms with the question's content
// words, the latest of equals; when none shares any, the latest (for a
// question in another script than the meeting's, only if it matches its
// words at all). The content
// words are the question's without its question words and Chinese
// function characters ("了" would tie a group chat to the question
// "上次开会定了什么"). Coverage, not the score, decides: BM25's length
// normalisation would prefer an older meeting's shorter turn. It costs
// one search and up to coverageHits record reads a meeting.
func (p *plan) meetingCoverage(ms []*session) (*session, error) {
	text := strings.Map(func(r rune) rune {
		if embed.IsCJKFunction(r) {
			return ' '
		}
		return r
	}, theLexicon().stripQuestionWords(p.denseText))
	want := map[string]bool{}
	for _, t := range queryAnalyzer().Terms(text) {
		want[t] = true
	}
	if len(want) == 0 {
		return ms[0], nil // nothing but function characters: the latest
	}
	var best *session
	bestN := 0
	for _, m := range ms {
		cs, err := p.readHits(text, m.bm, coverageHits)
		if err != nil {
			return nil, err
		}
		n := 0
		for _, c := range cs {
			if !c.fetched {
				continue
			}
			seen := map[string]bool{}
			for _, t := range queryAnalyzer().Terms(c.rec.Text) {
				if want[t] {
					seen[t] = true
				}
			}
			n = max(n, len(seen))
		}
		if n > bestN {
			best, bestN = m, n
		}
	}
	if best == nil {
		// None holds the question's content terms. A question in the
		// meeting's own language still names the latest meeting
		// ("上次开会定了什么" when no one said 定, "what did we decide last
		// meeting?" when no one said "decide"); words of another script
		// may simply be in the meeting's language elsewhere (an English
		// question about a Chinese meeting, answered by English notes of
		// it): the latest only if it matches them at all, as for "last
		// time".
		same, err := p.sameScript(text, ms[0])
		if err != nil || same {
			return ms[0], err
		}
		return p.holdsWords(ms[0])
	}
	return best, nil
}

// sameScript reports whether text and the meeting m are mostly in the
// same script (CJK or not), m judged by a few of its records.
func (p *plan) sameScript(text string, m *session) (bool, error) {
	ids := sampleIDs(m.bm, scriptSample)
	cs := make([]cand, len(ids))
	for i, id := range ids {
		cs[i].id = id
	}
	if err := p.db.fetch(cs, nil); err != nil {
		return false, err
	}
	var b strings.Builder
	for _, c := range cs {
		if c.fetched {
			b.WriteString(c.rec.Text)
		}
	}
	return mostlyCJK(text) == mostlyCJK(b.String()), nil
}

// mostlyCJK reports whether text holds more CJK characters than letters
// of other scripts.
func mostlyCJK(text string) bool {
	cjk, other := 0, 0
	for _, r := range text {
		switch {
		case analysis.IsCJK(r):
			cjk++
		case unicode.IsLetter(r):
			other++
		}
	}
	return cjk > other
}

// previousSessions returns the sessions the phrase may name, latest start
// first: the first is the one it names (below), the others the earlier
// ones of the same kind. They are found among the latest
// maxPreviousSessions sessions of the records passing the filter, the
// current session excluded. The previous session is the latest to start
// among those that ended before the current one started (a session
// running alongside it, a meeting the agent recorded during a chat, is
// not "last time"; when none ended before, the latest that started
// before). The previous meeting is the latest meeting to start before the
// current session started: asked in a chat after this morning's meeting,
// "the last meeting" is that one, even though the chat began during it.
// Without a current session (or with one that has no record yet), the
// latest session or meeting is the one meant.
func (p *plan) previousSessions() ([]*session, error) {
	cur := p.q.CurrentSession
	all, err := p.latestSessions(func(s *session) bool { return p.prevMeeting && s.name != cur })
	if err != nil {
		return nil, err
	}
	var found []*session
	var curStart time.Time
	for _, s := range all {
		if s.name == cur {
			curStart = s.first
			continue
		}
		if p.prevMeeting && !s.meeting() {
			continue // not a meeting: too few speakers, or a chat over days
		}
		found = append(found, s)
	}
	if !curStart.IsZero() {
		found = slices.DeleteFunc(found, func(s *session) bool { return !s.first.Before(curStart) })
		if !p.prevMeeting {
			if ended := slices.DeleteFunc(slices.Clone(found), func(s *session) bool { return !s.last.Before(curStart) }); len(ended) > 0 {
				found = ended
			}
		}
	}
	slices.SortStableFunc(found, func(a, b *session) int { return b.first.Compare(a.first) })
	return found, nil
}

// latestSessions returns the latest maxPreviousSessions sessions of the
// records of p.bm (latest record first), each with its records passing
// the filter, its first and last times, and, when sample says so, the
// speakers of up to meetingSample of its records (else only its first
// record is read).
func (p *plan) latestSessions(sample func(*session) bool) ([]*session, error) {
	rest := p.bm.Clone()
	var found []*session
	for seen := 0; seen < maxPreviousSessions && !rest.IsEmpty(); seen++ {
		one := []cand{{id: uint64(rest.Maximum())}}
		if err := p.db.fetch(one, nil); err != nil {
			return nil, err
		}
		if !one[0].fetched {
			rest.Remove(uint32(one[0].id))
			continue
		}
		f := p.filter
		f.Sessions = []string{one[0].rec.Session}
		sb, err := p.db.idx.Filter(&f)
		if err != nil {
			return nil, fmt.Errorf("lazymem: engine: session filter: %w", err)
		}
		sb.And(p.bm)
		sb.Add(uint32(one[0].id))
		rest.AndNot(sb)
		s := &session{name: one[0].rec.Session, bm: sb, last: one[0].rec.Time}
		// Its first record's time and, when asked, its speakers.
		ids := []uint64{uint64(sb.Minimum())}
		if sample(s) {
			ids = sampleIDs(sb, meetingSample)
		}
		cs := make([]cand, len(ids))
		for i, id := range ids {
			cs[i].id = id
		}
		if err := p.db.fetch(cs, nil); err != nil {
			return nil, err
		}
		roles := map[string]bool{}
		s.first = s.last
		for _, c := range cs {
			if !c.fetched {
				continue
			}
			roles[c.rec.Role] = true
			if c.rec.Time.Before(s.first) {
				s.first = c.rec.Time
			}
		}
		s.speakers = len(roles)
		found = append(found, s)
	}
	return found, nil
}

// meeting reports whether s is a meeting: at least meetingSpeakers
// speakers (of those latestSessions sampled) within meetingMaxSpan.
func (s *session) meeting() bool {
	return s.speakers >= meetingSpeakers && s.last.Sub(s.first) <= meetingMaxSpan
}

// sampleIDs returns at most n ids of bm, evenly spaced, the first among
// them.
func sampleIDs(bm *roaring.Bitmap, n int) []uint64 {
	card := int(bm.GetCardinality())
	if card <= n {
		out := make([]uint64, 0, card)
		it := bm.Iterator()
		for it.HasNext() {
			out = append(out, uint64(it.Next()))
		}
		return out
	}
	out := make([]uint64, 0, n)
	for i := range n {
		id, err := bm.Select(uint32(i * card / n))
		if err != nil {
			break
		}
		out = append(out, uint64(id))
	}
	return out
}

// meetingOverWindow: a question naming the previous meeting and a day
// whose window holds no meeting ("上回开会礼拜六值班最后怎么定的？": last
// Saturday's records hold no meeting; the Saturday is the duty's, the
// topic) searches without the window when a previous meeting is found
// then; the expression goes back into the searched text, as
// dropEmptyWindow does. It returns the meetings found without the window,
// or none with the window restored.
func (p *plan) meetingOverWindow() ([]*session, error) {
	var ss []*session
	_, err := p.withoutWindow(func() (bool, error) {
		var err error
		ss, err = p.previousSessions()
		return len(ss) > 0, err
	}, "no meeting in its window", "the previous meeting searched without it, the expression as words")
	if err != nil {
		return nil, err
	}
	return ss, nil
}

// noMeetingOverWindow: false but in a test.
var noMeetingOverWindow bool
