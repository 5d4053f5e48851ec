package engine

import (
	"fmt"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/lazymem/lazymem/index"
	"github.com/lazymem/lazymem/vecmath"
)

// A meeting's agenda ("今天几件事：王奶奶复查、陈爷爷的药，还有吴婆婆",
// "three things today: the offsite, the launch date, hiring") names every
// topic of the meeting and settles none: it matches any question about
// the meeting, often best, and answers none but "what was discussed". In
// a question asking anything else, an agenda line's score is multiplied by
// agendaWeight.
// x0.6 measured on the 26 scenario sets (1,067 questions): hit@1 773.4 ->
// 776.2 at x0.6 and x0.4, 775.4 at x0.8 (hit@5 954.7 there, one question
// lower); hit@5 955.8 at x0.6.
var agendaWeight float32 = 0.6

// agendaLine reports whether text opens a meeting with its agenda: today's
// topics, two or more of them listed.
func agendaLine(text string) bool {
	if !agendaToday.MatchString(text) && !agendaCount.MatchString(text) {
		return false
	}
	return strings.Contains(text, "、") || strings.Count(text, ",")+strings.Count(text, "，") >= 2 || strings.Contains(text, "件事")
}

// agendaCount matches a count of things to settle before a colon
// ("说几件事：新年汇演、体检…", "三件事："), an agenda without "today".
// Read off set 36 ("上次开会汇演是怎么定的？" 2 -> 1 behind its agenda);
// measured on the 36 scenario sets (1,516 questions): hit@1 / hit@5
// 1096.03 / 1354.79 -> 1097.83 / 1355.69, eleven questions up a rank or
// more (sets 23, 24, 28, 30, 33, 35, 36), three down a rank or two, all
// set 24's, whose "今天说三件事：…" is an agenda line now too (说 was not
// among agendaToday's words); newer-zh lazy hash R@1/5 .412 / .843 ->
// .471 / .824, sparse .333 / .804 -> .373 / .784; LoCoMo and the other
// Chinese sets identical.
var agendaCount = mustGate(`[一二两三四五六七几]件事[：:]`)

// agenda lowers the agenda lines among the candidates, unless the
// question asks only what was said or discussed; and the turns right
// after one that hold none of the question's words themselves: through
// session context they inherit the agenda's every topic ("Evening from
// Seattle!" after "今天几件事：…").
func (p *plan) agenda() error {
	if agendaWeight == 1 || !theLexicon().contentLeft(p.denseText) {
		return nil
	}
	n := 0
	for i := range p.cands {
		if p.cands[i].fact.agenda() {
			p.fused[i] *= agendaWeight
			n++
		}
	}
	if n == 0 {
		return nil
	}
	m, err := p.agendaFollowers()
	if err != nil {
		return err
	}
	p.res.Stats.Notes = append(p.res.Stats.Notes, fmt.Sprintf("%d candidates are a meeting's agenda, which names topics and settles none, and %d the turn after one, holding none of the question's words: x%g", n, m, agendaWeight))
	return nil
}

// agendaFollowers lowers, among the top 3K candidates, those with a BM25
// score whose own text holds none of the query's words and whose
// session's previous turn is an agenda line; it returns how many.
func (p *plan) agendaFollowers() (int, error) {
	qterms := contentTerms(p.text)
	order := vecmath.TopK(p.fused, min(len(p.cands), 3*p.q.K))
	if err := p.read(order); err != nil {
		return 0, err
	}
	turns := sessionTurns{db: p.db}
	var idx []int
	var prevs []uint64
	for _, i := range order {
		c := &p.cands[i]
		if !c.fetched || c.sparse == 0 || holdsAny(c.rec.Text, qterms) {
			continue
		}
		prev, ok, err := turns.neighbour(&c.rec, c.id, -1)
		if err != nil {
			return 0, err
		}
		if ok {
			idx, prevs = append(idx, i), append(prevs, prev)
		}
	}
	recs, err := p.db.readRecords(prevs)
	if err != nil {
		return 0, err
	}
	n := 0
	for k, i := range idx {
		if pr, ok := recs[prevs[k]]; ok && agendaLine(pr.Text) {
			p.fused[i] *= agendaWeight
			n++
		}
	}
	return n, nil
}

// sessionTurns finds the turns next to a record in its session, each
// session's records filtered once.
type sessionTurns struct {
	db       *DB
	sessions map[[2]string]*roaring.Bitmap
}

// neighbour returns the id of the turn delta places from id in r's
// session (-1 the one before, 1 the one after); false when there is none.
func (s *sessionTurns) neighbour(r *Record, id uint64, delta int) (uint64, bool, error) {
	key := [2]string{r.Agent, r.Session}
	bm := s.sessions[key]
	if bm == nil {
		var err error
		if bm, err = s.db.idx.Filter(&index.Filter{Agents: []string{r.Agent}, Sessions: []string{r.Session}}); err != nil {
			return 0, false, fmt.Errorf("lazymem: engine: session filter: %w", err)
		}
		if s.sessions == nil {
			s.sessions = map[[2]string]*roaring.Bitmap{}
		}
		s.sessions[key] = bm
	}
	k := int64(bm.Rank(uint32(id))) - 1 + int64(delta) // id's place is Rank-1
	if k < 0 || k >= int64(bm.GetCardinality()) {
		return 0, false, nil
	}
	v, err := bm.Select(uint32(k))
	if err != nil {
		return 0, false, nil
	}
	return uint64(v), true, nil
}

// contentTerms returns the analyzed terms of text that are not the
// lexicon's frame words.
func contentTerms(text string) map[string]bool {
	lx := theLexicon()
	terms := map[string]bool{}
	for _, t := range queryAnalyzer().Terms(text) {
		if !lx.frame[t] {
			terms[t] = true
		}
	}
	return terms
}

// holdsAny reports whether text holds one of terms.
func holdsAny(text string, terms map[string]bool) bool {
	for _, t := range queryAnalyzer().Terms(text) {
		if terms[t] {
			return true
		}
	}
	return false
}
