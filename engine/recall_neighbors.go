package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/lazymem/lazymem/index"
)

// Session neighbours: in a conversation the turn that answers a question
// is often not the one that repeats its words but one or two turns away
// from it ("The meteor shower was amazing" / "Wow, must have been
// breathtaking!" / "I felt tiny and in awe of the universe"). Session
// context already gives a turn its predecessor's words in BM25; the
// neighbours carry the rest in fusion: a candidate gains a share of how
// much better the candidates next to it in its session scored (by
// position among the session's live records): neighbourBefore2 of the
// same speaker's turn two before it (their previous turn in a dialogue),
// neighbourAfter1 of the next turn (the reply that takes it up) and
// neighbourAfter2 of the same speaker's turn two after it. Only a better
// neighbour that is a BM25 hit lends (the premise is a turn that holds
// the question's words); records made only of pleasantries neither lend
// (their words are all inherited) nor borrow (the rule runs after the
// low-information rule, whose shift leaves the other candidates' margins
// unchanged); a run of turns that all match (a meeting on one topic) does
// not lift itself above a lone answer elsewhere, and in a meeting of many
// speakers the turn two away is rarely the same speaker's. One step, from
// the scores before propagation.
//
// Measured (lazy, hash, with the named-date prior; LoCoMo R@1/5/10/25,
// Chinese set R@1/5/10, scenario hit@1/5): no neighbours
// .447/.666/.725/.790, .390/.679/.775, .71/.96; the neighbours' whole
// scores, any speaker (0.2/0.1/0.1) .444/.675/.737/.796, .428/.734/.793,
// .75/.95 but two scenario classes below their floors (a meeting's run of
// launch turns outranking the one English answer); the better neighbours'
// margins, any speaker, 0.2/0.1/0.1 .447/.677/.737/.796, .390/.707/.779,
// .71/.96; 0.4/0.2/0.2 .446/.680/.742/.797, .390/.731/.790, .71/.96;
// 0.6/0.3/0.3 .442/.687/.745/.797, .397/.738/.803, .71/.96 (but in a
// planning meeting an action item two turns after the launch decision
// passed the revised decision); 0.8/0.4/0.4 .423/.676/.743/.793,
// .390/.755/.810, .70/.94; 0.6/0.3/0.3 with the same speaker at distance
// 2 (the default) .446/.689/.744/.796, .390/.738/.810, .70/.96. Both
// halves of LoCoMo's conversations gain at k = 5, 10 and 25 (R@10 .753 ->
// .774, .691 -> .708).
//
// The session, role and position in the session of each candidate are
// the facts the rule needs beyond the candidates' scores.
const (
	neighbourBefore2 = 0.6
	neighbourAfter1  = 0.3
	neighbourAfter2  = 0.3
)

// neighbours adds to p.fused the session neighbours' shares.
func (p *plan) neighbours() error {
	if len(p.cands) < 2 {
		return nil
	}
	groups := map[sessionKey][]int{}
	for i := range p.cands {
		c := &p.cands[i]
		if (c.fetched || c.fact.known()) && !c.lowInfo && c.rec.Session != "" && p.fused[i] > 0 {
			k := sessionKey{c.rec.Agent, c.rec.Session}
			groups[k] = append(groups[k], i)
		}
	}
	var base []float32
	for k, members := range groups {
		if len(members) < 2 {
			continue
		}
		if base == nil {
			base = append([]float32(nil), p.fused...)
		}
		sb, err := p.session(k)
		if err != nil {
			return err
		}
		at := make(map[uint64]int, len(members)) // position in the session -> candidate
		pos := make([]uint64, len(members))
		for j, i := range members {
			pos[j] = sb.Rank(uint32(p.cands[i].id))
			at[pos[j]] = i
		}
		for j, i := range members {
			for _, nb := range [...]struct {
				d int64
				w float64
			}{{-2, neighbourBefore2}, {1, neighbourAfter1}, {2, neighbourAfter2}} {
				n, ok := at[uint64(int64(pos[j])+nb.d)]
				if !ok || p.cands[n].sparseRank == 0 || base[n] <= base[i] {
					continue
				}
				if (nb.d == 2 || nb.d == -2) && p.cands[n].rec.Role != p.cands[i].rec.Role {
					continue
				}
				{
					f := float32(1)
					if p.cands[i].from == fromNeighbour {
						f = neighbourSourceShare
					}
					p.fused[i] += f * float32(nb.w) * (base[n] - base[i])
					p.cands[i].neighbours = true
				}
			}
		}
	}
	return nil
}

// session returns the live records of session k (all of them, not only
// those passing the filters: positions are counted in the whole session),
// from the recall's own copy once asked: the neighbour source and the
// neighbours rule ask for the same sessions.
func (p *plan) session(k sessionKey) (*roaring.Bitmap, error) {
	if sb, ok := p.sessions[k]; ok {
		return sb, nil
	}
	sb, err := p.db.idx.Filter(&index.Filter{Agents: []string{k.agent}, Sessions: []string{k.session}})
	if err != nil {
		return nil, fmt.Errorf("lazymem: engine: session filter: %w", err)
	}
	if p.sessions == nil {
		p.sessions = map[sessionKey]*roaring.Bitmap{}
	}
	p.sessions[k] = sb
	return sb, nil
}

// neighbourSource: the session neighbours of the top BM25 hits (at most
// neighbourSourceHits, a fifth of Query.Candidates), at the places from
// which the neighbours rule lets a candidate borrow a better turn's score:
// the same speaker's turn two after the hit (it borrows
// neighbourBefore2), the turn before the hit (neighbourAfter1) and the
// same speaker's turn two before it (neighbourAfter2). The rule can only
// lift a candidate, and the answer one or two turns from the turn that
// repeats the question's words often shares none of them and is no BM25
// hit ("How did Melanie feel while watching the meteor shower?": "I felt
// tiny and in awe of the universe"). Positions are counted in the whole
// session, as the rule counts them; a neighbour must pass the filters.
// Only in a dialogue: when the five turns around the hit hold three
// speakers or more (a meeting), the turn two away is rarely an answer to
// the hit's speaker, and a meeting's short replies ("下午两点可以。")
// took the place of its decision. A candidate only this source proposed
// borrows neighbourSourceShare of the rule's share. The neighbours take
// the places of the lowest BM25 hits: a recall still reads and embeds at
// most Query.Candidates candidates of its sources.
//
// Measured leave-one-conversation-out (lazy, hash; each of LoCoMo's six
// dev conversations in a store of its own; bench/eval's
// TestDiagPerConversation), against the rules before it (R@1/5/10/25 of
// all questions .466/.706/.755/.799), with the whole share: the top 3
// hits' neighbours at +1 and +2 .466/.709/.763/.810; the top 3, 5 or 10
// hits' at -2, -1, +1, +2 .466/.711/.769/.821, .466/.710/.769/.824,
// .466/.711/.771/.828; the top 5's at -4 to +4 .468/.711/.769/.827; the
// top 5's and 10's at the rule's places .466/.710/.769/.824 and
// .466/.711/.771/.829. Chosen on five conversations by the mean of
// R@1/5/10/25, the top 10 at the rule's places wins five folds of six
// (the sixth: the top 10 at -2..+2, the same held-out figures); R@10 and
// R@25 gain on every held-out conversation, R@5 on three and loses on
// three. But it costs the Chinese set (lazy hash R@5 .772 -> .759: in a
// user-assistant chat the evidence is itself a hit and its neighbours
// pass it): share 0.9 and 0.8 cost the same, 0.7 costs USE-lite's R@10
// (.814 -> .807), 0.5 and 0.3 nothing with either embedder (USE-lite's
// R@1 loses one question at every share). At 0.5 LoCoMo is
// .466/.708/.759/.819: R@10 gains on the six conversations against the
// rules before both this and the experience rule (26 +.011, 30 +.010, 41
// +.008, 42 +.008, 43 +.005, 44 +.003), against the experience rule alone
// on three and loses .004 on 44; R@25 gains on all six; at 0.7
// .466/.709/.765/.823, at 0.3 .466/.707/.757/.806.
const (
	neighbourSourceHits  = 10
	neighbourSourceShare = 0.5
)

type neighbourSource struct{}

// neighbourWindow is a hit's window: the turns up to two before and after
// it that pass the filters (at[d+2] is the candidate at offset d; -1: no
// such turn).
type neighbourWindow struct {
	hit int
	at  [5]int
}

func (neighbourSource) candidates(_ context.Context, p *plan) error {
	if p.res.Stats.Hits == 0 || p.bm == nil {
		return nil
	}
	// A fifth of the candidate budget at most is asked for neighbours
	// (three each): the neighbours then take the places of the lowest
	// hits.
	n := min(neighbourSourceHits, p.q.Candidates/5)
	top := make([]int, 0, n)
	for i := range p.cands {
		if r := p.cands[i].sparseRank; r > 0 && r <= n {
			top = append(top, i)
		}
	}
	// The hits' sessions: from the fact table, else read (the best of the
	// hits are returned, and read, anyway), with the turns their windows
	// likely hold, and the hits below them that are read whatever the
	// windows keep (sureHits with every window keeping three turns: a
	// subset of the set read below once the windows are known). One read
	// round of ~50 records instead of ~40 then ~20 (the 1M Zipf agent
	// corpus): the second round was a fetch of its own on the recall's
	// path, and a segment holding records of both was read twice.
	hits := len(p.cands)
	guessed, err := p.readTop(top, p.sureHits(hits, n, 3*len(top)))
	if err != nil {
		return err
	}
	// Each hit's window: the turns up to two before and after it that pass
	// the filters, proposed.
	windows := make([]neighbourWindow, 0, len(top))
	for _, i := range top {
		c := &p.cands[i]
		if !(c.fetched || c.fact.known()) || c.rec.Session == "" {
			continue
		}
		sb, err := p.session(sessionKey{c.rec.Agent, c.rec.Session})
		if err != nil {
			return err
		}
		w := neighbourWindow{hit: i, at: [5]int{-1, -1, -1, -1, -1}}
		pos, card := int64(sb.Rank(uint32(c.id))), int64(sb.GetCardinality()) // pos is 1-based
		for d := int64(-2); d <= 2; d++ {
			r := pos + d
			if d == 0 || r < 1 || r > card {
				continue
			}
			if id, err := sb.Select(uint32(r - 1)); err == nil && p.bm.Contains(id) {
				j, ok := p.pos[uint64(id)]
				if !ok { // a candidate already keeps its sources
					c, _ := p.propose(uint64(id), fromNeighbour)
					if g, ok := guessed[uint64(id)]; ok {
						c.rec, c.fact, c.fetched, c.damaged = g.rec, g.fact, g.fetched, g.damaged
					}
					j = p.pos[uint64(id)]
				}
				w.at[d+2] = j
			}
		}
		windows = append(windows, w)
	}
	// The windows' turns, each once (windows of nearby hits overlap, and
	// fetch reads its runs concurrently, one writer per candidate): their
	// sessions and roles from the fact table, else read (reading them now
	// costs nothing: the selective stage would read them).
	seen := make([]bool, len(p.cands))
	var all []int
	for _, w := range windows {
		for _, j := range w.at {
			if j >= 0 && !seen[j] {
				seen[j] = true
				all = append(all, j)
			}
		}
	}
	// With them, the hits the selective stage will read whatever the
	// windows keep, now that the turns they can keep are known. One read
	// for both: a turn and the hits near it in time often lie in one log
	// segment, which GetMany then decompresses once instead of once a
	// round.
	//
	// A window already known to hold three speakers or more (its hit's
	// and its known turns' roles: a lower bound) keeps none of its turns
	// (below): its turns do not count, and more of the hits are sure to
	// be read now rather than in a round of their own (the selective
	// stage's). The workload's 1M agent cold-open recall: 8.3 records in
	// this read and 8.8 in the selective stage's before, 16.4 and 0.8
	// after; the same 64 records read in all.
	open := make([]neighbourWindow, 0, len(windows))
	for _, w := range windows {
		if speakers(p.cands, w) <= 2 {
			open = append(open, w)
		}
	}
	keepable := 0
	for j := hits; j < len(p.cands); j++ {
		if seen[j] && atKeptPlace(open, j) {
			keepable++
		}
	}
	for _, i := range p.sureHits(hits, n, keepable) {
		if !seen[i] {
			all = append(all, i)
		}
	}
	if err := p.learnFacts(all); err != nil {
		return err
	}
	// Keep, of the turns added, those at the rule's places in a dialogue:
	// in a window of three speakers or more (a meeting) the turn two away
	// is rarely an answer to the hit's speaker.
	keep := make([]bool, len(p.cands))
	for _, w := range windows {
		if speakers(p.cands, w) > 2 {
			continue
		}
		for _, d := range [...]int{2, -1, -2} {
			if j := w.at[d+2]; j >= hits {
				keep[j] = true
			}
		}
	}
	kept := p.cands[:hits]
	for j := hits; j < len(p.cands); j++ {
		if keep[j] {
			kept = append(kept, p.cands[j])
		}
	}
	p.cands = kept
	p.res.Stats.Neighbours = len(p.cands) - hits
	if p.res.Stats.Neighbours > 0 || len(p.pos) > len(p.cands) {
		p.reindex()
	}
	if over := len(p.cands) - max(p.q.Candidates, hits); over > 0 {
		p.dropLowestHits(over)
	}
	return nil
}

// atKeptPlace reports whether candidate j is at a place a window keeps.
func atKeptPlace(windows []neighbourWindow, j int) bool {
	for _, w := range windows {
		if w.at[2+2] == j || w.at[-1+2] == j || w.at[-2+2] == j {
			return true
		}
	}
	return false
}

// sureHits returns the hits ranked below after that the selective stage
// reads whatever the neighbour source keeps, when at most kept turns are
// added: in ModeLazy or with a recency prior it reads every candidate
// whose fact is unknown, and dropLowestHits removes only the lowest hits,
// as many as the kept turns exceed the budget. hits is the number of
// candidates before any turn was proposed.
func (p *plan) sureHits(hits, after, kept int) []int {
	if p.q.Mode != ModeLazy && p.q.RecencyHalfLife <= 0 {
		return nil
	}
	sure := p.res.Stats.Hits - max(hits+kept-max(p.q.Candidates, hits), 0)
	var out []int
	for i := range p.cands[:hits] {
		if r := p.cands[i].sparseRank; r > after && r <= sure {
			out = append(out, i)
		}
	}
	return out
}

// speakers counts the roles of window w's hit and of its turns whose
// record or fact is known.
func speakers(cands []cand, w neighbourWindow) int {
	var roles [6]string
	roles[0] = cands[w.hit].rec.Role
	n := 1
	for _, j := range w.at {
		if j < 0 {
			continue
		}
		c := &cands[j]
		if !(c.fetched || c.fact.known()) || slices.Contains(roles[:n], c.rec.Role) {
			continue
		}
		roles[n] = c.rec.Role
		n++
	}
	return n
}

// readTop gives the top hits at top their facts: from the fact table,
// else read from the log together with the records next to each among
// those passing the filters (two before and two after), which are its
// window's turns when its session's turns are consecutive among the
// filtered records (one session of an agent at a time, or a session
// filter): a hit and its turns then take one read instead of two, and a
// segment holding both is decompressed once. It returns those records,
// read, by id; the window's turns are looked up there before the log.
// The candidates at also are given their facts in the same read, without
// their neighbours.
func (p *plan) readTop(top, also []int) (map[uint64]*cand, error) {
	p.db.facts.lookupAt(p.cands, top)
	p.db.facts.lookupAt(p.cands, also)
	var unknown []int
	for _, i := range top {
		if c := &p.cands[i]; !c.fetched && !c.fact.known() && !c.damaged {
			unknown = append(unknown, i)
		}
	}
	tops := len(unknown)
	for _, i := range also {
		if c := &p.cands[i]; !c.fetched && !c.fact.known() && !c.damaged {
			unknown = append(unknown, i)
		}
	}
	if tops == 0 {
		// Without a top hit to read, the others wait for the read of the
		// windows' turns (learnFacts), as before.
		return nil, nil
	}
	// The records around the unknown top hits that are not candidates.
	rs := make([]cand, len(unknown), len(unknown)+tops*4)
	for k, i := range unknown {
		rs[k] = p.cands[i]
	}
	card := int64(p.bm.GetCardinality())
	at := map[uint64]int{}
	for _, i := range unknown[:tops] {
		r := int64(p.bm.Rank(uint32(p.cands[i].id))) // 1-based
		for d := int64(-2); d <= 2; d++ {
			if d == 0 || r+d < 1 || r+d > card {
				continue
			}
			id, err := p.bm.Select(uint32(r + d - 1))
			if err != nil {
				continue
			}
			if _, ok := p.pos[uint64(id)]; ok {
				continue
			}
			if _, ok := at[uint64(id)]; !ok {
				at[uint64(id)] = len(rs)
				rs = append(rs, cand{id: uint64(id)})
			}
		}
	}
	// Those whose facts are known need no read.
	guess := rs[len(unknown):]
	p.db.facts.lookup(guess)
	read := make([]int, 0, len(rs))
	for k := range rs {
		if k < len(unknown) || !rs[k].fact.known() {
			read = append(read, k)
		}
	}
	if err := p.db.fetch(rs, read); err != nil {
		return nil, err
	}
	p.db.facts.learn(rs, read)
	for k, i := range unknown {
		p.cands[i] = rs[k]
	}
	out := make(map[uint64]*cand, len(guess))
	for k := range guess {
		if c := &guess[k]; c.fetched || c.damaged {
			out[c.id] = c
		}
	}
	return out, nil
}

// learnFacts gives the candidates at sel their facts: from the fact table,
// else read from the log (the time, agent, session and role are what the
// neighbour source needs; reading costs a cold candidate a segment read).
func (p *plan) learnFacts(sel []int) error {
	p.db.facts.lookupAt(p.cands, sel)
	var unknown []int
	for _, i := range sel {
		if c := &p.cands[i]; !c.fetched && !c.fact.known() {
			unknown = append(unknown, i)
		}
	}
	return p.read(unknown)
}

// dropLowestHits removes the n BM25 hits of the lowest rank that no other
// source proposed.
func (p *plan) dropLowestHits(n int) {
	drop := map[int]bool{}
	for r := len(p.cands); r > 0 && len(drop) < n; r-- {
		for i := range p.cands {
			if c := &p.cands[i]; c.sparseRank == r && c.from == fromBM25 {
				drop[i] = true
				break
			}
		}
	}
	kept := p.cands[:0]
	for i, c := range p.cands {
		if !drop[i] {
			kept = append(kept, c)
		}
	}
	p.cands = kept
	p.reindex()
}

// reindex rebuilds p.pos after candidates were removed.
func (p *plan) reindex() {
	clear(p.pos)
	for i := range p.cands {
		p.pos[p.cands[i].id] = i
	}
}
