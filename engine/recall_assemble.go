package engine

// assemble turns the top candidates into memories: those not fetched yet
// are read from the log, those deleted meanwhile are dropped, and the
// reasons are written when the query asks for them.
func (p *plan) assemble() error {
	var rest []int
	for _, i := range p.top {
		if !p.cands[i].fetched {
			rest = append(rest, i)
		}
	}
	if len(rest) > 0 {
		if err := p.db.fetch(p.cands, rest); err != nil {
			return err
		}
	}
	p.res.Memories = make([]Memory, 0, len(p.top))
	for _, i := range p.top {
		c := &p.cands[i]
		if !c.fetched { // deleted between search and fetch
			continue
		}
		m := Memory{Record: c.rec, Score: float64(p.fused[i]), Sparse: c.sparse, Dense: float64(c.dense), Kind: KindRaw}
		if p.q.Explain {
			m.Reasons = reasons(c, p.q, p.now)
		}
		p.res.Memories = append(p.res.Memories, m)
	}
	p.mergeCore()
	return nil
}
