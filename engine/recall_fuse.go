package engine

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/lazymem/lazymem/index/analysis"
	"github.com/lazymem/lazymem/vecmath"
)

// fuse scores every candidate from its sparse and dense evidence, the
// recency prior and the speaker boost, lowers the records that say
// nothing, lets a newer record answering the same question pass an older
// one, and picks the top Query.K.
func (p *plan) fuse() error {
	share := 0.0
	switch {
	case len(p.cands) < 2 || p.q.Mode != ModeLazy:
	case !p.at.IsZero() && !theLexicon().contentLeft(p.denseText):
		// A moment and nothing else asked ("两个小时前会上在聊什么",
		// "what were we discussing about two hours ago?"): the turns of
		// that moment, whatever BM25 made of the frame's characters.
		share = 1
		p.res.Stats.Notes = append(p.res.Stats.Notes, "nothing asked but what was said at a moment: "+p.timeOrder())
	case p.res.Stats.Hits > 0:
	case (p.res.Stats.TimeExpr != "" || p.dateExpr != "") && !theLexicon().contentLeft(p.denseText):
		// Nothing but a time, the question's frame and perhaps a speaker
		// ("what did I ask you just now?", "最近10分钟大家说了什么"): no
		// embedder can match the frame words to an answer, and the latest
		// record of the window is the answer. Without a time expression
		// the frame can carry meaning ("刘洋负责什么": responsible for) and
		// the embedder keeps its share.
		share = 1
		p.res.Stats.Notes = append(p.res.Stats.Notes, "no BM25 hit and nothing asked but when (and who): "+p.timeOrder())
	case p.db.cache.lexical:
		share = newestShare
		p.res.Stats.Notes = append(p.res.Stats.Notes, fmt.Sprintf("no BM25 hit: %.0f%% of the score is the record's place in time (%s), %.0f%% the lexical embedder's", 100*share, p.timeOrder(), 100*(1-share)))
	}
	p.fused = fuse(p.cands, p.priorQuery(), p.now, p.at, p.speakers, share)
	p.justNowPrior()
	p.subject()
	p.dateMentions()
	p.questions()
	p.lowInfo()
	if err := p.agenda(); err != nil {
		return err
	}
	if err := p.neighbours(); err != nil {
		return err
	}
	if err := p.mentions(); err != nil {
		return err
	}
	if err := p.when(); err != nil {
		return err
	}
	if err := p.decisions(); err != nil { // recall_decided.go
		return err
	}
	if err := p.experience(); err != nil {
		return err
	}
	if err := p.changes(); err != nil { // recall_change.go
		return err
	}
	if err := p.supersede(); err != nil {
		return err
	}
	if err := p.echoes(); err != nil { // after supersede: a reply is no newer answer
		return err
	}
	p.participantsFirst()
	p.top = vecmath.TopK(p.fused, p.q.K)
	return nil
}

// dateMentionBoost multiplies the score of a record whose time falls in
// the window of a date the query names while Query.ParseTime is off ("what
// did Maria start, as mentioned on 3 June, 2023?", "in March 2023"; a
// text with a digit, a month's name or 月, see mayNameDate): a prior,
// never a filter, and the date's words stay in the searched text.
// Measured (lazy, hash; LoCoMo R@1/5/10/25, 108 of its 883 questions name
// a date): x1 .429/.657/.718/.787, x1.5 .446/.663/.725/.790, x2
// .447/.666/.725/.790, x3 .448/.666/.726/.790; with the date's words
// removed from the text (x2) .438/.662/.724/.789. Both halves of the
// conversations gain alike (26/41/43: R@10 .745 -> .753; 30/42/44: .685 ->
// .691).
const dateMentionBoost = 2

func (p *plan) dateMentions() {
	if p.dateSince.IsZero() {
		return
	}
	n := 0
	for i := range p.cands {
		c := &p.cands[i]
		if (c.fetched || c.fact.known()) && !c.rec.Time.Before(p.dateSince) && c.rec.Time.Before(p.dateUntil) {
			p.fused[i] *= dateMentionBoost
			c.dated = true
			n++
		}
	}
	if n > 0 {
		p.res.Stats.Notes = append(p.res.Stats.Notes, fmt.Sprintf("the query names a date (%q) and ParseTime is off: %d candidates of [%s, %s) were boosted x%g, none filtered out",
			p.dateExpr, n, p.dateSince.Format(time.RFC3339), p.dateUntil.Format(time.RFC3339), float64(dateMentionBoost)))
	}
}

// questionWeight multiplies the score of a record that is itself a
// question (it ends with a question mark): a question in the history
// repeats the words of a question about it ("谁负责通知运维？") without
// answering it; the turn that answers inherits those words (session
// context) and ranks above it. Measured (lazy, hash; LoCoMo R@1/5/10/25,
// Chinese set R@1/5/10): 1 0.424/0.658/0.714/0.783, 0.300/0.566/0.677;
// 0.85 0.430/0.659/0.715/0.788, 0.314/0.576/0.691; 0.7
// 0.422/0.654/0.718/0.787, 0.314/0.597/0.691; 0.5 0.402/0.635/0.709/0.781.
const questionWeight = 0.85

func (p *plan) questions() {
	for i := range p.cands {
		c := &p.cands[i]
		if c.fact.question() {
			c.question = true
			p.fused[i] *= float32(questionWeight)
		}
	}
}

// isQuestion reports whether text ends with a question mark.
func isQuestion(text string) bool {
	t := strings.TrimRightFunc(text, func(r rune) bool { return unicode.IsSpace(r) || r == '"' || r == '”' || r == ')' || r == '）' })
	return strings.HasSuffix(t, "?") || strings.HasSuffix(t, "？")
}

// lowInfoWeight multiplies the score of a record made only of
// pleasantries ("好的，没问题。", "ok thanks"): in a conversation such a
// reply inherits the words of the turn it answers (session context) and,
// being short, would outrank it. Unless the query itself is only
// pleasantries.
const lowInfoWeight = 0.1

func (p *plan) lowInfo() {
	if p.queryLowInfo {
		return
	}
	floor := float32(math.Inf(1)) // the lowest score of a record that says something
	top := float32(math.Inf(-1))  // the highest of a record that does not
	for i := range p.cands {
		c := &p.cands[i]
		if c.fact.lowInfo() {
			c.lowInfo = true
			p.fused[i] *= lowInfoWeight
			top = max(top, p.fused[i])
		} else {
			floor = min(floor, p.fused[i])
		}
	}
	// Every record that says something ranks above every one that does
	// not: when the scores overlap, the former are shifted up together
	// (their order and differences unchanged).
	if top >= floor {
		shift := top - floor + 1e-6*(1+top)
		for i := range p.cands {
			if !p.cands[i].lowInfo {
				p.fused[i] += shift
			}
		}
	}
}

// mentionFloor: in a question asking who mentioned something ("谁提到了采购
// 审批？", "who brought up the budget?", the lexicon's [mention]), a
// candidate's score is multiplied by mentionFloor + (1 - mentionFloor) x
// the share of the query's words its own text holds, relative to the
// candidate that holds most: the one who mentioned it said the words; a
// short reply that inherits them from the turn before (session context)
// did not. Only the top 3K candidates are read for it; the others take
// the floor.
const mentionFloor = 0.5

func (p *plan) mentions() error {
	if !p.mention || len(p.cands) < 2 {
		return nil
	}
	qterms := contentTerms(theLexicon().stripQuestionWords(p.denseText))
	if len(qterms) == 0 {
		return nil
	}
	order := vecmath.TopK(p.fused, min(len(p.cands), 3*p.q.K))
	// The rule counts words of texts: read those the selective stage did not.
	if err := p.read(order); err != nil {
		return err
	}
	own := make(map[int]int, len(order))
	best := 0
	for _, i := range order {
		if !p.cands[i].fetched {
			continue
		}
		seen := map[string]bool{}
		for _, t := range queryAnalyzer().Terms(p.cands[i].rec.Text) {
			if qterms[t] {
				seen[t] = true
			}
		}
		own[i] = len(seen)
		best = max(best, len(seen))
	}
	if best == 0 {
		return nil
	}
	for i := range p.cands {
		f := float32(mentionFloor)
		if n, ok := own[i]; ok {
			f += (1 - mentionFloor) * float32(n) / float32(best)
		}
		p.fused[i] *= f
		p.cands[i].coverage = f
	}
	return nil
}

// queryAnalyzer is the index's default analysis, for the engine's own
// look at texts (which query terms a record holds).
var queryAnalyzer = sync.OnceValue(func() *analysis.Analyzer {
	a, err := analysis.New(analysis.DefaultOptions())
	if err != nil { // the default options are valid: a build defect
		a, _ = analysis.New(analysis.Options{})
	}
	return a
})

// cosine of two unit vectors.
func cosine(a, b []float32) float64 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return float64(s)
}

// newestShare is the share of the fused score given to a candidate's place
// in time (newest first) when no candidate has BM25 evidence and the
// embedder is lexical: its cosine then measures character n-grams shared
// with a query that matched no word, which ranks little better than chance
// ("what did I ask you just now?"), while the latest records of a window
// or a speaker are the likelier answers.
const newestShare = 0.5

// timeOrder says how fuse orders candidates in time.
func (p *plan) timeOrder() string {
	if !p.at.IsZero() {
		return "nearest the time named first"
	}
	return "newest first"
}

// priorQuery is the query whose recency prior the ranking applies: none
// in a question about the earlier state ("原来定的是哪天", "what was the
// original plan"), whose answer is the older record by its own words.
// Measured 2026-12-06 (docs/benchmarks/scenarios.md, "Older first"):
// scenarios hit@1 +1.0 (two questions up, two down), the third Chinese
// set sparse R@1/5 .477/.811 -> .483/.822, lazy R@1 .483 -> .489, newer-en
// sparse R@1 .356 -> .400, newer2-en sparse R@1 .341 -> .318 and lazy R@5
// .773 -> .795, the fourth set lazy R@5 .725 -> .739; LoCoMo identical.
func (p *plan) priorQuery() *Query {
	if p.prior == nil {
		p.prior = p.q
		if p.q.RecencyHalfLife > 0 && p.earlierState() {
			q := *p.q
			q.RecencyHalfLife = 0
			p.prior = &q
		}
	}
	return p.prior
}

// fuse computes the fused score of every candidate; with timeShare > 0
// (no BM25 evidence) that share of the score is the candidate's rank in
// time, newest 1, oldest 0, or when the query names a moment (at, "two
// hours ago", "at 9:30") nearest 1, farthest 0: "what were we discussing
// about two hours ago?" asks for the turns of that moment, not the
// window's latest.
func fuse(cands []cand, q *Query, now, at time.Time, speakers *roaring.Bitmap, timeShare float64) []float32 {
	out := make([]float32, len(cands))
	if len(cands) == 0 {
		return out
	}
	var tn []float64
	if timeShare > 0 && len(cands) > 1 {
		order := make([]int, len(cands))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			if !at.IsZero() {
				// Farther first, so that the nearest ranks last (1).
				return cmp.Compare(absDur(cands[b].rec.Time.Sub(at)), absDur(cands[a].rec.Time.Sub(at)))
			}
			return cands[a].rec.Time.Compare(cands[b].rec.Time)
		})
		tn = make([]float64, len(cands))
		for r, i := range order {
			tn[i] = float64(r) / float64(len(cands)-1)
		}
	}
	ws, wd := 2*(1-q.DenseWeight), 2*q.DenseWeight
	dense := q.Mode == ModeLazy
	var maxS float64
	minD, maxD := float32(math.Inf(1)), float32(math.Inf(-1))
	for i := range cands {
		maxS = max(maxS, cands[i].sparse)
		minD, maxD = min(minD, cands[i].dense), max(maxD, cands[i].dense)
	}
	for i := range cands {
		c := &cands[i]
		var s float64
		switch {
		case !dense:
			// Sparse only: BM25 itself, and for candidates without a BM25
			// score (session turns, empty query) a tiny score that keeps
			// them in candidate order below every hit.
			s = c.sparse
			if c.sparseRank == 0 {
				s = 1e-9 / float64(1+i)
			}
		case q.Fusion == FusionWeighted:
			var sn, dn float64
			if maxS > 0 {
				sn = c.sparse / maxS
			}
			if maxD > minD {
				dn = float64(c.dense-minD) / float64(maxD-minD)
			}
			s = (1-q.DenseWeight)*sn + q.DenseWeight*dn
			if tn != nil {
				s = (1-timeShare)*dn + timeShare*tn[i]
			}
		default:
			if c.sparseRank > 0 {
				s += ws / float64(DefaultRRFK+c.sparseRank)
			}
			if c.denseRank > 0 {
				s += wd / float64(DefaultRRFK+c.denseRank)
			}
		}
		if q.RecencyHalfLife > 0 && c.fact.known() {
			s *= recencyFactor(c.rec.Time, q, now)
		}
		if speakers != nil && s > 0 && speakers.Contains(uint32(c.id)) {
			s *= q.SpeakerBoost
			c.speaker = true
		}
		out[i] = float32(s)
	}
	return out
}

func recencyFactor(t time.Time, q *Query, now time.Time) float64 {
	age := now.Sub(t)
	if age < 0 {
		age = 0
	}
	// Floored so that scores stay above float32's smallest normal number:
	// very old records keep their relative order instead of all tying at 0.
	decay := max(math.Exp2(-float64(age)/float64(q.RecencyHalfLife)), 1e-30)
	return (1 - q.RecencyWeight) + q.RecencyWeight*decay
}

func reasons(c *cand, q *Query, now time.Time) []string {
	var rs []string
	if c.sparseRank > 0 {
		rs = append(rs, fmt.Sprintf("bm25 #%d (%.3g)", c.sparseRank, c.sparse))
	}
	if c.denseRank > 0 {
		rs = append(rs, fmt.Sprintf("dense #%d (%.3f)", c.denseRank, c.dense))
	}
	if c.session {
		rs = append(rs, "session "+q.CurrentSession)
	}
	if c.speaker {
		rs = append(rs, fmt.Sprintf("speaker x%g", q.SpeakerBoost))
	}
	if c.from&fromFallback != 0 {
		rs = append(rs, "fallback")
	}
	if c.dated {
		rs = append(rs, fmt.Sprintf("named date x%g", float64(dateMentionBoost)))
	}
	if c.participant {
		rs = append(rs, "its speaker's best record (the question's speaker is no role)")
	}
	if c.neighbours {
		rs = append(rs, "session neighbours")
	}
	if c.timed {
		rs = append(rs, fmt.Sprintf("states a time x%g", whenBoost))
	}
	if c.narrated {
		rs = append(rs, fmt.Sprintf("narrates an experience x%g", experienceBoost))
	}
	if c.echoed {
		rs = append(rs, "echoed by the next turn")
	}
	if c.answered {
		rs = append(rs, "answers the turn before")
	}
	if c.coverage > 0 && c.coverage < 1 {
		rs = append(rs, fmt.Sprintf("own words x%.2f", c.coverage))
	}
	if c.question {
		rs = append(rs, fmt.Sprintf("question x%g", questionWeight))
	}
	if c.lowInfo {
		rs = append(rs, fmt.Sprintf("low information x%g", lowInfoWeight))
	}
	if c.superseded {
		rs = append(rs, "newer answer")
	}
	if c.original {
		rs = append(rs, "earlier answer")
	}
	if c.settles {
		rs = append(rs, "settles the proposals before it")
	}
	if q.RecencyHalfLife > 0 && (c.fact.known() || c.fetched) { // fetched: ModeDense
		rs = append(rs, fmt.Sprintf("recency x%.2f", recencyFactor(c.rec.Time, q, now)))
	}
	return rs
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
