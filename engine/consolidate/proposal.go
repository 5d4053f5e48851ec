package consolidate

// Accepted proposals: a proposal, or an instruction to an assistant, that
// the next speaker accepts is a decision citing both turns.

import (
	"regexp"
	"slices"
	"strings"
)

// acceptedProposal returns the decision of a proposal ("Let's set the
// pool size to 32", "我建议把闲置的测试环境都关掉") that the next speaker
// accepts ("OK", "Done. …", "同意", "好的，…"): a proposal alone is
// tentative and labels nothing, accepted it is what was decided. The
// unit cites both turns, at the decision's confidence less 0.1 (what
// was accepted is inferred); a fact the proposal's number or date made
// gives way to it. Nothing when the turn already holds a decision, or the
// reply decides something itself (its own unit says it), objects ("OK, but…") or
// comes from the same speaker. A reply that agrees ("同意，…") may label
// a decision of its own too.
func acceptedProposal(r *Selected, agent string, out []Unit, conf float64) (Unit, bool) {
	if len(r.After) == 0 || slices.ContainsFunc(out, func(u Unit) bool { return u.Type == TypeDecision }) {
		return Unit{}, false
	}
	next := &r.After[0]
	content := proposalContent(r.Text)
	if content == "" && roleOf(next) == "assistant" && roleOf(&r.Turn) != "assistant" {
		content = instructionContent(r.Text)
	}
	if content == "" {
		return Unit{}, false
	}
	if next.Speaker == r.Speaker || !acceptsProposal(next.Text) {
		return Unit{}, false
	}
	for _, t := range Label(next.Text) {
		if t.Type == TypeDecision && !agreementCue.MatchString(t.Trigger) {
			return Unit{}, false
		}
	}
	return Unit{
		Type: TypeDecision, Topic: Topic(content), Content: content,
		Participants: participants(r.Speaker, next.Speaker), SourceIDs: []uint64{r.ID, next.ID},
		Time: r.Time, Confidence: conf - 0.1, Agent: agent,
	}, true
}

var (
	// proposalEN is a first-person plural proposal, group 1 what it
	// proposes; proposalNotEN the proposals that settle nothing about
	// the work (the meeting's own course, a look, a wait, a lunch).
	proposalEN    = regexp.MustCompile(`(?i)^(?:(?:ok(?:ay)?|so|then|alright|right|well)[,\s]+)?(?:let'?s|let us|we should|i suggest(?:\s+(?:that\s+)?we)?|i propose(?:\s+(?:that\s+)?we)?|how about(?:\s+we)?)\s+(.+)$`)
	proposalNotEN = regexp.MustCompile(`(?i)^(?:not|see|think|talk|discuss|look|check|wait|start|begin|get started|move on|take a|go get|grab|meet|sync|circle back|revisit|try|figure|hope|keep going|continue|wrap up|break|hold off|pause)\b`)
	// proposalZH is a proposal in Chinese, group 1 what it proposes.
	proposalZH = regexp.MustCompile(`^(?:那|那么|好|好的)?[，,]?(?:我|我们)?(?:建议|提议)(?:我们|大家)?(.+)$|^(?:要不|不如|咱们就|我们就)(.+)$`)
	// acceptEN and acceptZH open a reply that accepts what was proposed;
	// objectCue is a reply that goes on to object.
	acceptEN  = regexp.MustCompile(`(?i)^(?:ok(?:ay)?|sure|sounds good|agreed|agree|done|noted|will do|yes|yep|great|perfect|fine|deal)\b`)
	acceptZH  = regexp.MustCompile(`^(?:好的|好|行|可以|同意|没问题|就这么办|就这么定|赞成|收到)`)
	objectCue = regexp.MustCompile(`(?i)\bbut\b|\bhowever\b|不过|但是|可是|不行|不同意`)
)

// acceptsSelected reports whether r accepts the proposal of the turn
// before it (acceptedProposal) and that turn is selected too, so that the
// decision citing both is built.
func acceptsSelected(r *Selected, selected map[uint64]bool) bool {
	if len(r.Before) == 0 || !selected[r.Before[len(r.Before)-1].ID] {
		return false
	}
	prev := Selected{Turn: r.Before[len(r.Before)-1], After: []Turn{r.Turn}}
	_, ok := acceptedProposal(&prev, "", nil, 1)
	return ok
}

// instructionEN is an instruction to an assistant that changes a setting
// ("Actually make the pool size 64", "please set the timeout to 30s"),
// group 1 the instruction; instructionZH its Chinese form ("把超时改成30
// 秒"). Accepted by the assistant ("OK, 64 it is.", "好的，已改成30秒"), it
// is a decision as a proposal another speaker accepts is: between people
// an order someone acknowledges is a task, so the rule is the
// assistant's reply only.
var (
	instructionEN = regexp.MustCompile(`(?i)^(?:(?:actually|ok(?:ay)?|so|then|alright|no|wait|and)[,\s]+){0,2}(?:please\s+)?((?:set|make|use|change|switch|keep|increase|raise|lower|reduce|bump|enable|disable|rename|cap|limit|pin)\s+.+)$`)
	instructionZH = regexp.MustCompile(`^(?:那|那就|还是|其实|对了)?[，,]?((?:把|将).+(?:改成|改为|设成|设为|设置为|调到|调成|换成|定为).+)$`)
)

// instructionContent returns the first instruction sentence of text, or
// "" when none is.
func instructionContent(text string) string {
	return firstStatement(text, func(s string) (string, bool) {
		for _, re := range []*regexp.Regexp{instructionEN, instructionZH} {
			if m := re.FindStringSubmatch(s); m != nil {
				return cleanContent(m[1]), true
			}
		}
		return "", false
	})
}

// ProposalAccepted reports whether reply accepts proposal as the rule
// consolidator reads them: proposal proposes something, another speaker's
// reply accepts it and decides nothing else itself. A record that does is
// worth consolidating even though neither turn labels a decision alone.
func ProposalAccepted(proposal, reply Turn) bool {
	_, ok := acceptedProposal(&Selected{Turn: proposal, After: []Turn{reply}}, "", nil, 1)
	return ok
}

// MayAccept reports whether text opens as an acceptance ("OK", "好的"): a
// cheap test before ProposalAccepted, which needs the turn before.
func MayAccept(text string) bool { return acceptsProposal(text) }

// proposalContent returns what the first sentence of text that proposes
// something proposes, or "" when none does.
func proposalContent(text string) string {
	return firstStatement(text, func(s string) (string, bool) {
		if m := proposalEN.FindStringSubmatch(s); m != nil {
			if proposalNotEN.MatchString(m[1]) {
				return "", true
			}
			return cleanContent(m[1]), true
		}
		if m := proposalZH.FindStringSubmatch(s); m != nil {
			return cleanContent(strings.TrimLeft(m[1]+m[2], leadTrimZH)), true
		}
		return "", false
	})
}

// firstStatement returns what match makes of the first sentence of text
// that is no question and that match takes (ok), or "" when none is.
func firstStatement(text string, match func(s string) (content string, ok bool)) string {
	for _, s := range sentences(text) {
		if isQuestion(s) {
			continue
		}
		if c, ok := match(strings.TrimSpace(s)); ok {
			return c
		}
	}
	return ""
}

// acceptsProposal reports whether a reply accepts the turn before it.
func acceptsProposal(text string) bool {
	t := strings.TrimSpace(text)
	return (acceptEN.MatchString(t) || acceptZH.MatchString(t)) && !objectCue.MatchString(t)
}
