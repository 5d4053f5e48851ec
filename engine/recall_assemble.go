package engine

import (
	"fmt"

	"github.com/lazymem/lazymem/vecmath"
)

// assemble turns the top candidates into memories: those not read yet are
// read from the log; one that cannot be read (deleted meanwhile, or in a
// damaged log block) is dropped and the next best takes its place; the
// reasons are written when the query asks for them.
func (p *plan) assemble() error {
	if err := p.read(p.top); err != nil {
		return err
	}
	if lost := len(p.top) - fetchedIn(p.cands, p.top); lost > 0 && len(p.cands) > len(p.top) {
		// Rare: rank every candidate and read down the order until K are
		// readable.
		order := vecmath.TopK(p.fused, len(p.cands))
		top := make([]int, 0, p.q.K)
		for lo := 0; lo < len(order) && len(top) < p.q.K; {
			hi := min(len(order), lo+p.q.K-len(top))
			if err := p.read(order[lo:hi]); err != nil {
				return err
			}
			for _, i := range order[lo:hi] {
				if p.cands[i].fetched {
					top = append(top, i)
				}
			}
			lo = hi
		}
		p.top = top
	}
	if n := damaged(p.cands); n > 0 {
		p.res.Stats.Notes = append(p.res.Stats.Notes, fmt.Sprintf("%d candidates could not be read (a damaged log block) and were left out; lazymem verify names the damage", n))
	}
	p.res.Memories = make([]Memory, 0, len(p.top))
	for _, i := range p.top {
		c := &p.cands[i]
		if !c.fetched { // deleted between search and fetch
			continue
		}
		m := Memory{Record: c.rec, Score: float64(p.fused[i]), Sparse: c.sparse, Dense: float64(c.dense), Kind: KindRaw}
		if p.q.Explain {
			m.Reasons = reasons(c, p.priorQuery(), p.now)
		}
		p.res.Memories = append(p.res.Memories, m)
	}
	p.mergeCore()
	return nil
}

// fetchedIn counts the candidates at sel that were read.
func fetchedIn(cands []cand, sel []int) int {
	n := 0
	for _, i := range sel {
		if cands[i].fetched {
			n++
		}
	}
	return n
}
