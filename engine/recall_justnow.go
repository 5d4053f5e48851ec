package engine

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/lazymem/lazymem/index"
)

// "Just now" inside a conversation. "刚才谁提到了预算问题？" asked at the
// end of a two-hour meeting means earlier in that meeting, not the last
// 30 minutes of it: a fixed span would cut away the meeting's first hour
// and answer with whatever short reply fell inside it. So when the time
// expression is a just-now one (justNowEN, justNowZH: they resolve to the
// last justNowSpan), the window's start moves back to the first record of
// the conversation the question is about: Query.CurrentSession, or else
// the session of the latest record that passes the other filters (the
// conversation still going, or the last one: asked an hour after the
// meeting, "刚才的会上…" still means that meeting, and a 30-minute window
// would hold nothing). It moves back at most justNowMax: a conversation
// that began earlier, or a latest record older than that, leaves the
// window as it was. Stats.Notes says when the window moved.
//
// The wider window must not let an older turn of the conversation that
// shares a word with the question outrank the recent one it asks about
// ("刚刚张伟说他今天要做什么？": his last turn, not "今天就打开。" an hour
// before), so a just-now question also weighs each candidate by a recency
// prior of half-life justNowSpan: x(1 - justNowWeight + justNowWeight *
// 0.5^(age/justNowSpan)), 1 for a turn of this minute, 0.6 for one of
// half an hour ago, 0.4 for one of an hour ago. Measured on the scenario
// suite: without the prior the widened window put that short turn first
// (time hit@1 .79 -> .75); with justNowWeight 0.5 it still did.
var (
	justNowEN = mustGate(`(?i)\b(?:just\s+now|a\s+moment\s+ago|moments\s+ago|a\s+little\s+while\s+ago|a\s+few\s+moments\s+ago)\b`)
	justNowZH = mustGate(`刚才|刚刚|方才|刚说`)
	// justSaidEN is "just" before a verb of speaking or settling ("what did
	// Zhang Wei just say about the load test?", "who just brought up the
	// budget?"): the window of "just now". Only "just" is the expression
	// (findTime cuts the match to its group "expr"): the verb stays in the query,
	// which may be a speaker question. "I just want to know" names no
	// time.
	justSaidEN = mustGate(`(?i)\b(?P<expr>just)\s+(?:said|say|says|mentioned|mention|told|tell|asked|ask|brought\s+up|bring\s+up|raised|raise|talked|talk|spoke|speak|suggested|suggest|proposed|propose|decided|decide|agreed|agree|announced|announce|explained|explain|pointed\s+out|point\s+out|reported|report|promised|promise|complained|complain)\b`)
)

const (
	// justNowSpan is the window a just-now expression resolves to on its
	// own.
	justNowSpan = 30 * time.Minute
	// justNowMax bounds how far back the conversation's start may move
	// the window.
	justNowMax = 12 * time.Hour
	// justNowWeight is the share of a just-now question's fused score that
	// its recency prior decides.
	justNowWeight = 0.8
)

// widenJustNow moves a just-now window's start back to its conversation's
// first record (see above) and filters again. It costs one to three index
// filters and one or two record reads, only for just-now queries.
func (p *plan) widenJustNow() error {
	expr := p.res.Stats.TimeExpr
	if expr == "" || p.since.IsZero() || !(justNowEN.MatchString(expr) || justNowZH.MatchString(expr) || strings.EqualFold(expr, "just")) {
		return nil
	}
	p.justNow = true
	name := p.q.CurrentSession
	if name != "" && len(p.q.Sessions) > 0 && !slices.Contains(p.q.Sessions, name) {
		return nil // the filter excludes the current session
	}
	f := p.filter
	f.Since = 0
	if name == "" {
		before := p.bm
		if before.IsEmpty() { // nothing in the last justNowSpan: the last conversation
			var err error
			if before, err = p.db.idx.Filter(&f); err != nil {
				return fmt.Errorf("lazymem: engine: filter: %w", err)
			}
			if before.IsEmpty() {
				return nil
			}
		}
		latest, ok, err := p.readOne(before.Maximum())
		if err != nil || !ok || latest.Time.Before(p.since.Add(-justNowMax)) {
			return err
		}
		name = latest.Session
	}
	f.Sessions = []string{name}
	sb, err := p.db.idx.Filter(&f)
	if err != nil {
		return fmt.Errorf("lazymem: engine: session filter: %w", err)
	}
	if sb.IsEmpty() {
		return nil
	}
	first, ok, err := p.readOne(sb.Minimum())
	start := first.Time.In(p.since.Location())
	if err != nil || !ok || !start.Before(p.since) || start.Before(p.since.Add(-justNowMax)) {
		return err
	}
	p.since = start
	p.res.Stats.Since = start
	p.filter = index.Filter{}
	if err := p.applyFilter(); err != nil {
		return err
	}
	p.res.Stats.Notes = append(p.res.Stats.Notes, fmt.Sprintf("%q: since the start of session %s (%s)", expr, name, start.Format(time.RFC3339)))
	return nil
}

// readOne reads record id; ok is false when it cannot be read (forgotten
// since the filter, or a damaged block: the rule then leaves the window).
func (p *plan) readOne(id uint32) (rec Record, ok bool, err error) {
	c := []cand{{id: uint64(id)}}
	if err := p.db.fetch(c, nil); err != nil {
		return Record{}, false, err
	}
	return c[0].rec, c[0].fetched, nil
}

// justNowPrior weighs a just-now question's fused scores by their
// records' age (see above).
func (p *plan) justNowPrior() {
	if !p.justNow {
		return
	}
	for i := range p.cands {
		c := &p.cands[i]
		if !c.fact.known() && !c.fetched {
			continue
		}
		age := max(p.now.Sub(c.rec.Time), 0)
		p.fused[i] *= float32(1 - justNowWeight + justNowWeight*math.Exp2(-float64(age)/float64(justNowSpan)))
	}
}
