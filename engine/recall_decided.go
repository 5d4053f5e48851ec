package engine

import (
	"fmt"
	"strings"
)

// A question that asks what was decided and nothing else ("what did we
// decide at the last meeting?", "上次家庭视频最后都定了些什么？") names no
// topic for BM25 to find: its only words (decide, 定) match an agenda that
// lists what is to be decided ("今天要定目的地、人数和酒店") as well as any
// turn holding 定. The answer is the meeting's decisions: the turns that
// settle a choice ("那就…吧", "OK, October 20 it is"), state a change
// ("目的地改成厦门", "moved to Friday") or give someone a task ("机票由我来
// 订", "I'll handle the permit"). In such a question each of the top 3K
// candidates that is one, and not a meeting's opening nor a question, has
// its score multiplied by decisionBoost: a prior, nothing is filtered.
var decisionBoost float32 = 1.5

// asksDecisions reports whether the question asks what was decided and
// nothing else.
func (p *plan) asksDecisions() bool {
	lx := theLexicon()
	return p.current && !lx.contentLeft(stripWords(p.denseText, lx.current))
}

// decisionTurn reports whether text settles, changes or assigns (above).
func decisionTurn(text string) bool {
	if agendaToday.MatchString(text) || strings.ContainsAny(text, "？?") {
		return false
	}
	return settles(text) || changeStatement.MatchString(text) || ownerVerb.match(text)
}

// decisions applies decisionBoost.
func (p *plan) decisions() error {
	if decisionBoost == 1 || len(p.cands) < 2 || !p.asksDecisions() {
		return nil
	}
	n, top, err := p.boostTexts(decisionTurn, decisionBoost, func(*cand) {})
	if n > 0 {
		p.res.Stats.Notes = append(p.res.Stats.Notes, fmt.Sprintf("a question asking only what was decided: %d of the top %d candidates settle, change or assign something, x%g", n, top, decisionBoost))
	}
	return err
}
