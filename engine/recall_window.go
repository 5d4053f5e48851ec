package engine

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/lazymem/lazymem/engine/embed"
	"github.com/lazymem/lazymem/index"
	"github.com/lazymem/lazymem/index/analysis"
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
	if st.TimeExpr == "" || p.justNow {
		return nil
	}
	// A window whose records hold none of the question's words is empty
	// to the question ("马老师礼拜六加的那堂课几点开始？" on a Thursday:
	// the Saturday the records were written has other talk; the class is
	// this coming Saturday's, named by Wednesday's chat).
	unmatched := false
	if !p.bm.IsEmpty() {
		if noUnmatchedWindow || !dayNamed.MatchString(st.TimeExpr) {
			return nil
		}
		hits, err := p.searchContent(p.bm, 1)
		if err != nil {
			return err
		}
		if len(hits) > 0 {
			return nil
		}
		unmatched = true
	}
	_, err := p.withoutWindow(func() (bool, error) {
		if unmatched {
			return p.saysWith(st.TimeExpr)
		}
		return p.says(st.TimeExpr)
	}, "no record in its window", "searched without it, as words")
	return err
}

// withoutWindow filters without the parsed time window (the query's own
// Since and Until stay) and asks ok whether to search so. When it says
// no, the window and its filter come back (Stats and the sources read
// them); when yes, the expression goes back into the searched text and
// Stats.Notes says why the window went and what was done.
func (p *plan) withoutWindow(ok func() (bool, error), why, done string) (bool, error) {
	st := &p.res.Stats
	since, until := p.since, p.until
	p.since, p.until = p.q.Since, p.q.Until
	p.filter = index.Filter{}
	if err := p.applyFilter(); err != nil {
		return false, err
	}
	yes, err := ok()
	if err != nil {
		return false, err
	}
	if !yes {
		p.since, p.until = since, until
		p.filter = index.Filter{}
		return false, p.applyFilter()
	}
	st.Notes = append(st.Notes, fmt.Sprintf("%q: %s (%s to %s): %s",
		st.TimeExpr, why, since.Format(time.RFC3339), until.Format(time.RFC3339), done))
	st.TimeExpr = ""
	st.Since, st.Until = p.since, p.until
	p.parseText(p.q.Text)
	return true, nil
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
	return candsSay(cs, expr), nil
}

// candsSay reports whether a read candidate of cs holds expr
// (case-insensitive, on word boundaries).
func candsSay(cs []cand, expr string) bool {
	want := strings.ToLower(expr)
	for _, c := range cs {
		if c.fetched && containsWord(strings.ToLower(c.rec.Text), want) {
			return true
		}
	}
	return false
}

// noUnmatchedWindow: false but in a test.
var noUnmatchedWindow bool

// dayNamed matches an expression that names a day by its weekday or its
// date, which a question may name as the day of what it asks about
// rather than of what was said; not today, yesterday or a span back from
// now ("What did my mum say at today's meeting?": a window whose records
// hold only Chinese words holds the answer all the same).
var dayNamed = regexp.MustCompile(`(?i)(?:周|星期|礼拜)` + zhWday + `|\b` + enWday + `\b|\d{1,2}\s*[日号]|\b` + enMonth + `\s+\d{1,2}\b|\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?` + enMonth)

// saysWith reports whether one of the best BM25 matches of the question's
// words among the records that pass the filter holds expr.
func (p *plan) saysWith(expr string) (bool, error) {
	if p.bm.IsEmpty() {
		return false, nil
	}
	hits, err := p.searchContent(p.bm, coverageHits)
	if err != nil {
		return false, err
	}
	cs := make([]cand, len(hits))
	for i, h := range hits {
		cs[i].id = h.ID
	}
	if err := p.db.fetch(cs, nil); err != nil {
		return false, err
	}
	return candsSay(cs, expr), nil
}

// searchContent searches the question's content words among bm: its
// Latin words as the analyser reads them, its Chinese runs by their
// character bigrams, none with a function character (a record sharing
// only 的, 在 or one character of a word with the question holds none
// of its words).
func (p *plan) searchContent(bm *roaring.Bitmap, k int) ([]index.Hit, error) {
	text := theLexicon().stripQuestionWords(p.denseText)
	var latin strings.Builder
	var terms []string
	var run []rune
	flush := func() {
		for i := 0; i+1 < len(run); i++ {
			terms = append(terms, string(run[i:i+2]))
		}
		run = run[:0]
	}
	for _, r := range text {
		switch {
		case analysis.IsCJK(r) && !embed.IsCJKFunction(r):
			run = append(run, r)
			continue
		case analysis.IsCJK(r):
			latin.WriteByte(' ')
		default:
			latin.WriteRune(r)
		}
		flush()
	}
	flush()
	hits, err := p.db.idx.SearchTerms(latin.String(), terms, bm, index.FilterKey{}, k, nil)
	if err != nil {
		return nil, fmt.Errorf("lazymem: engine: search: %w", err)
	}
	return hits, nil
}
