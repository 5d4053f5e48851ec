package engine

import (
	"fmt"
)

// A meeting named in a window ("what did we discuss in this morning's
// meeting?", "今天上午的会上预算是多少？", "上周二会上定的…"): the question
// asks about the meeting, not about every record of the window. In a
// window that holds a meeting (a session of at least meetingSpeakers
// speakers within meetingMaxSpan, as "the last meeting" counts them) and
// other sessions too (a chat with the assistant after it, which often
// speaks of the meeting in the question's words and language while the
// meeting itself is in another), the filter narrows to the window's
// meetings (a window of more sessions than are examined keeps the
// records of those it did not examine). A window without a meeting, or
// with nothing else, is left as it is; a question naming no window is
// too (which meeting it means is not known). It costs, only for such a question, what "the last
// meeting" costs: one index filter and up to meetingSample+1 record reads
// for each of the window's latest maxPreviousSessions sessions.
var namesMeeting = mustGate(`(?i)\b(meetings?|stand-?ups?|syncs?|huddles?)\b|会上|会里|会议|开会|例会|组会|周会|晨会|早会|站会|复盘会|碰头会|讨论会|的会(?:$|[上里中后前定说讲谈聊提讨决都怎结，。？！?!,.])`)

// namedMeeting narrows the filter to the window's meetings when the query
// names a meeting (above).
func (p *plan) namedMeeting() error {
	if p.prevExpr != "" || p.res.Stats.TimeExpr == "" || p.bm.IsEmpty() || !namesMeeting.MatchString(p.denseText) {
		return nil
	}
	ss, err := p.latestSessions(func(*session) bool { return true })
	if err != nil {
		return err
	}
	var meetings []string
	in := p.bm.Clone() // the window's records of the sessions not examined stay
	for _, s := range ss {
		if s.meeting() {
			meetings = append(meetings, s.name)
		} else {
			in.AndNot(s.bm)
		}
	}
	if len(meetings) == 0 || in.GetCardinality() == p.bm.GetCardinality() {
		return nil
	}
	p.bm = in
	st := &p.res.Stats
	st.Filtered = int(p.bm.GetCardinality())
	st.Notes = append(st.Notes, fmt.Sprintf("a meeting named in %q: only the window's meetings %v", st.TimeExpr, meetings))
	return nil
}
