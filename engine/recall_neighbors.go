package engine

import (
	"fmt"

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
	type key struct{ agent, session string }
	groups := map[key][]int{}
	for i := range p.cands {
		c := &p.cands[i]
		if (c.fetched || c.fact.known()) && !c.lowInfo && c.rec.Session != "" && p.fused[i] > 0 {
			k := key{c.rec.Agent, c.rec.Session}
			groups[k] = append(groups[k], i)
		}
	}
	base := append([]float32(nil), p.fused...)
	for k, members := range groups {
		if len(members) < 2 {
			continue
		}
		sb, err := p.db.idx.Filter(&index.Filter{Agents: []string{k.agent}, Sessions: []string{k.session}})
		if err != nil {
			return fmt.Errorf("lazymem: engine: session filter: %w", err)
		}
		at := make(map[uint64]int, len(members)) // position in the session -> candidate
		pos := make([]uint64, len(members))
		for j, i := range members {
			pos[j] = sb.Rank(uint32(p.cands[i].id))
			at[pos[j]] = i
		}
		for j, i := range members {
			for _, nb := range []struct {
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
					p.fused[i] += float32(nb.w) * (base[n] - base[i])
					p.cands[i].neighbours = true
				}
			}
		}
	}
	return nil
}
