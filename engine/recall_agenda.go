package engine

import (
	"fmt"
	"strings"
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
	if !agendaToday.MatchString(text) {
		return false
	}
	return strings.Contains(text, "、") || strings.Count(text, ",")+strings.Count(text, "，") >= 2 || strings.Contains(text, "件事")
}

// agenda lowers the agenda lines among the candidates, unless the
// question asks only what was said or discussed.
func (p *plan) agenda() {
	if agendaWeight == 1 || !theLexicon().contentLeft(p.denseText) {
		return
	}
	n := 0
	for i := range p.cands {
		if p.cands[i].fact.agenda() {
			p.fused[i] *= agendaWeight
			n++
		}
	}
	if n > 0 {
		p.res.Stats.Notes = append(p.res.Stats.Notes, fmt.Sprintf("%d candidates are a meeting's agenda, which names topics and settles none: x%g", n, agendaWeight))
	}
}
