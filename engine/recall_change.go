package engine

import (
	"fmt"
)

// Statements of a change: a record that says something changed ("改到四月
// 二十二号", "换成了渴望的绝育配方", "推迟到六月三号", "I switched to", "the
// launch moved to") holds the newer state, so it is not the answer to a
// question about the earlier one ("公开课最初安排在哪一天？", "what did we
// originally plan?"), though it shares that question's words. In a
// question asking about an earlier state (the lexicon's [earlier]: 原来,
// 一开始, 最早, originally, ...; not when it also asks about the current
// state) a candidate among the top 3K whose text states a change has its
// score multiplied by changeDemote: a prior, nothing is filtered.
//
// Measured (evalzh R@1/5/10, sparse and lazy hash; LoCoMo R@1/5/10/25):
// x0.7 moves 4 questions up and none down over the three Chinese sets
// (third set lazy .481/.797/.878 -> .487/.797/.884, second set sparse
// .452/.814/.860 -> .452/.820/.860, the first set and LoCoMo unchanged);
// x0.5 one more question up.
// The mirror rule, the same statements x1.5 (or x1.2, x2) in a question
// about the current state, was measured and dropped: it lifted the third
// set's update questions (R@1 .474 -> .737, lazy hash) but lowered the
// second set's (.263 -> .211; sparse .211 -> .105): there, the final
// answer says "那就12月12号搬吧" and an intermediate change ("改成12月5号")
// is what the words mark. Details in docs/benchmarks/zh-sets.md.
var changeDemote float32 = 0.7

// changeStatement matches a text that states a change.
var changeStatement = mustGate(`(?i)改到|改成|改为|改在|改去|换去|改期|改了|改主意|换成|换到|换了|推迟|延期|延后|提前|取消|不再|戒了|变成|变了|调整|最终|后来|终于|量错|搞错|记错|其实是|\b(changed|moved (to|it|the)|switched|postponed|rescheduled|pushed (back|to)|brought forward|cancel(l)?ed|no longer|any ?more|instead|turned out|actually|decided|now)\b`)

// changeQuestion matches a question whether something changed ("上线时间改
// 了吗？", "地点有变化吗", "有没有推迟", "did the launch date change?", "has
// the review been moved?", "any changes to the plan?"). It asks about the
// current state: the newest statement of the thing, which a change states
// (the demo's live "上线时间改了吗？", a minute after "上线时间推迟到十二月二
// 十二号", had the superseded decision first).
var changeQuestion = mustGate(`(?i)(改|变|换|调整|推迟|延期|延后|提前|取消|改期|变动|更改|修改)了(吗|么|没)|改没改|变没变|换没换|有没有(改|变|换|调整|推迟|延期|取消)|有(什么|没有)?(新)?(变化|变动|调整|改动|更改)|\b(did|does|has|have|had|was|were|is|are)\b[^?.!]{0,60}?\b(change|changed|postponed|rescheduled|delayed|pushed back|cancel+ed|called off|moved (back|up|forward))\b|\b(did|does|has|have|had|was|were|is|are)\b[^?.!]{0,60}?\bmoved\s*\?|\bany (changes?|updates?)\b|\bwhat(?:'s| has| have)? changed\b`)

// asksChange reports whether the question asks whether something changed,
// and not about its earlier state ("what was the original plan, before it
// changed?").
func asksChange(text string, earlier bool) bool {
	return !earlier && changeQuestion.MatchString(text)
}

// changes applies changeDemote in a question about an earlier state.
func (p *plan) changes() error {
	if len(p.cands) < 2 || !p.earlier || p.current || changeDemote == 1 {
		return nil
	}
	n, top, err := p.boostTexts(changeStatement.MatchString, changeDemote, func(*cand) {})
	if n > 0 {
		p.res.Stats.Notes = append(p.res.Stats.Notes, fmt.Sprintf("a question about an earlier state: %d of the top %d candidates state a change, x%g", n, top, changeDemote))
	}
	return err
}
