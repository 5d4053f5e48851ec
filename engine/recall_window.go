package engine

import (
	"fmt"
	"strings"
	"time"

	"github.com/lazymem/lazymem/index"
)

// dropEmptyWindow searches without the parsed time window when it holds
// no record that the query's other filters pass and a record they pass
// says the expression itself: it was then part of what is asked, not
// when ("谁说一月中旬有寒潮？" asked in December: "一月" resolved to the
// January before the history began, and the answer was empty, while
// yesterday's chat says "一月中旬有寒潮"). An empty window whose words no
// record says stays a window ("what did we discuss yesterday?" after a
// quiet day: nothing, not last week's records). The expression goes back
// into the searched text and Stats.Notes says what happened. A just-now
// window is widenJustNow's; the query's own Since and Until stay. It
// costs, only when the window is empty, one index filter, one search and
// up to coverageHits record reads.
func (p *plan) dropEmptyWindow() error {
	st := &p.res.Stats
	if st.TimeExpr == "" || p.justNow || !p.bm.IsEmpty() {
		return nil
	}
	since, until := p.since, p.until
	p.since, p.until = p.q.Since, p.q.Until
	p.filter = index.Filter{}
	if err := p.applyFilter(); err != nil {
		return err
	}
	said, err := p.says(st.TimeExpr)
	if err != nil {
		return err
	}
	if !said {
		// No record says it: the window stays, and the filter with it
		// (Stats and the sources read them).
		p.since, p.until = since, until
		p.filter = index.Filter{}
		return p.applyFilter()
	}
	st.Notes = append(st.Notes, fmt.Sprintf("%q: no record in its window (%s to %s): searched without it, as words",
		st.TimeExpr, since.Format(time.RFC3339), until.Format(time.RFC3339)))
	st.TimeExpr = ""
	st.Since, st.Until = p.since, p.until
	p.parseText(p.q.Text)
	return nil
}

// says reports whether one of the best BM25 matches of expr among the
// records that pass the filter holds expr itself (case-insensitive, on
// word boundaries).
func (p *plan) says(expr string) (bool, error) {
	if p.bm.IsEmpty() {
		return false, nil
	}
	cs, err := p.readHits(expr, p.bm, coverageHits)
	if err != nil {
		return false, err
	}
	want := strings.ToLower(expr)
	for _, c := range cs {
		if c.fetched && containsWord(strings.ToLower(c.rec.Text), want) {
			return true, nil
		}
	}
	return false, nil
}
