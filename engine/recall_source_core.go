package engine

import (
	"context"
	"fmt"
	"github.com/lazymem/lazymem/index"
	"math"
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/lazymem/lazymem/engine/consolidate"
	"github.com/lazymem/lazymem/vecmath"
)

// Tier selects which memories a recall searches.
type Tier string

// Tiers.
const (
	// TierAll (the default): raw records and core units, fused.
	TierAll Tier = "all"
	// TierCore: core units only.
	TierCore Tier = "core"
	// TierRaw: raw records only.
	TierRaw Tier = "raw"
)

// Kinds of a Memory.
const (
	KindRaw  = "raw"
	KindCore = "core"
)

func (q *Query) prepareTier() error {
	switch q.Tier {
	case "":
		q.Tier = TierAll
	case TierAll, TierCore, TierRaw:
	default:
		return fieldErr("query.tier", ErrUnknown, fmt.Sprintf("%q, want all, core or raw", string(q.Tier)))
	}
	return nil
}

// fromCore marks a candidate proposed by the core source.
const fromCore sourceSet = 1 << 7

// allSources are the raw candidate sources, then the core source.
var allSources = append(slices.Clip(broadSources), coreSource{})

// sources are the candidate sources of p's tier.
func (p *plan) sources() []source {
	switch p.q.Tier {
	case TierRaw:
		return broadSources
	case TierCore:
		return []source{coreSource{}}
	}
	return allSources
}

// coreSource searches the core memory through the records it cites: BM25
// over the cited records of the searched agents (within the query's
// filters) proposes them as candidates, so they are fetched, embedded and
// fused like any other, on the same scale; a unit then takes its score
// from its best source (see mergeCore). The cited records of an agent are
// few, so this search is a small bitmap intersection.
type coreSource struct{}

// coreHit is a unit a recall reached through a candidate it cites.
type coreHit struct {
	u   consolidate.Unit
	vec []float32
}

func (coreSource) candidates(_ context.Context, p *plan) error {
	st := &p.res.Stats
	if st.Filtered == 0 || strings.TrimSpace(p.text) == "" {
		return nil
	}
	cs := p.db.core
	cited := roaring.New()
	types := typeCues(p.q.Text)
	var listed []uint64 // sources of the live units of a type the query names
	cs.mu.Lock()
	for _, a := range p.filter.Agents {
		if bm := cs.cited[a]; bm != nil {
			cited.Or(bm)
		}
		for _, uid := range cs.byAgent[a] {
			if u := &cs.units[uid].u; u.Live() && slices.Contains(types, u.Type) {
				listed = append(listed, u.SourceIDs...)
			}
		}
	}
	cs.mu.Unlock()
	cited.And(p.bm)
	if cited.IsEmpty() {
		return nil
	}
	for _, id := range listed {
		if id <= math.MaxUint32 && p.bm.Contains(uint32(id)) {
			p.propose(id, fromCore)
		}
	}
	hits, err := p.db.idx.SearchTerms(p.text, p.terms, cited, index.FilterKey{}, p.q.K, nil)
	if err != nil {
		return fmt.Errorf("lazymem: engine: core search: %w", err)
	}
	for _, h := range hits {
		c, added := p.propose(h.ID, fromCore)
		if added {
			c.sparse = h.Score
		}
	}
	return nil
}

// mergeCore adds the units citing the fused candidates to the memories and
// keeps the best K. A unit's score is Boost times the fusion of its best
// source's sparse score with the unit's own dense similarity; a superseded
// unit scores at most historyFactor of its successor, and a live unit at
// least what any unit it superseded scored, so history never outranks the
// current answer. TierCore returns units only.
func (p *plan) mergeCore() {
	if p.q.Tier == TierRaw || len(p.cands) == 0 {
		return
	}
	cs := p.db.core
	score := map[uint64]float64{} // unit id -> score
	best := map[uint64]int{}      // unit id -> its best candidate
	var units map[uint64]coreHit
	cs.mu.Lock()
	for i := range p.cands {
		if p.fused[i] <= 0 {
			continue
		}
		for _, uid := range cs.citedBy[p.cands[i].id] {
			e := cs.units[uid]
			if e == nil || !slices.Contains(p.filter.Agents, e.u.Agent) {
				continue
			}
			if j, ok := best[uid]; !ok || p.fused[i] > p.fused[j] {
				best[uid] = i
			}
		}
	}
	if len(best) > 0 {
		units = make(map[uint64]coreHit, len(best))
		// Follow supersession both ways so a chain is scored together.
		var walk func(id uint64)
		walk = func(id uint64) {
			if _, ok := units[id]; ok {
				return
			}
			e := cs.units[id]
			if e == nil {
				return
			}
			units[id] = coreHit{u: e.u, vec: e.vec}
			if e.u.SupersededBy != 0 {
				walk(e.u.SupersededBy)
			}
			for _, s := range e.u.Supersedes {
				walk(s)
			}
		}
		for id := range best {
			walk(id)
		}
	}
	cs.mu.Unlock()
	if len(units) == 0 {
		if p.q.Tier == TierCore {
			p.res.Memories = p.res.Memories[:0]
		}
		return
	}
	var maxS float64
	minD, maxD := float32(math.Inf(1)), float32(math.Inf(-1))
	for i := range p.cands {
		maxS = max(maxS, p.cands[i].sparse)
		minD, maxD = min(minD, p.cands[i].dense), max(maxD, p.cands[i].dense)
	}
	dense := map[uint64]float64{}
	revised := map[uint64]uint64{} // unit -> the newer record that passed its source
	qterms := p.unitTerms()
	for id, h := range units {
		i, ok := best[id]
		if !ok {
			continue
		}
		// A unit takes its source's evidence only if it says one of the
		// query's words itself: "ship the release on Friday", one of two
		// units of "We decided to ship the release on Friday. Alice will
		// write the changelog.", must not rank for "pool" because its
		// source inherits "pool" from the turn before it (session
		// context) or scores for the other sentence.
		sparse, s := p.cands[i].sparse, float64(p.fused[i])
		if len(qterms) > 0 && !holdsAny(unitText(&h.u), qterms) {
			sparse, s = 0, 0
		}
		if p.q.Mode == ModeLazy && p.q.Fusion == FusionWeighted && p.qvec != nil && h.vec != nil && maxS > 0 {
			d := vecmath.Dot(p.qvec, h.vec)
			dense[id] = float64(d)
			dn := 0.0
			if maxD > minD {
				dn = min(1, max(0, float64(d-minD)/float64(maxD-minD)))
			}
			own := (1-p.q.DenseWeight)*sparse/maxS + p.q.DenseWeight*dn
			s = max(s, own)
		}
		score[id] = p.db.opts.Core.Boost * s
		// A newer record passed one of the unit's sources as the answer
		// (supersession: "Actually make the pool size 64" over "Let's set
		// the pool size to 32"): it revises the unit too, which stays
		// below it whatever its boost.
		src := h.u.SourceIDs
		for newer, old := range p.newerOver {
			if slices.Contains(src, p.cands[old].id) && !slices.Contains(src, p.cands[newer].id) && float64(p.fused[newer])*(1-1e-6) < score[id] {
				score[id] = float64(p.fused[newer]) * (1 - 1e-6)
				revised[id] = p.cands[newer].id
			}
		}
	}
	// A question that names a unit type ("what are the action items?")
	// asks for the live units of that type themselves: they rank with the
	// best raw candidate, whatever words their sources share with it.
	if named := typeCues(p.q.Text); len(named) > 0 {
		var top float64
		for i := range p.cands {
			top = max(top, float64(p.fused[i]))
		}
		for id, h := range units {
			if _, ok := score[id]; ok && h.u.Live() && slices.Contains(named, h.u.Type) {
				score[id] = max(score[id], p.db.opts.Core.Boost*top)
			}
		}
	}
	// Supersession: a live unit gets the best score of its chain; every
	// superseded unit stays below its successor.
	ids := make([]uint64, 0, len(units))
	for id := range units {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids { // earlier ids first: push scores forward
		if s := units[id].u.SupersededBy; s != 0 {
			if _, ok := units[s]; ok {
				score[s] = max(score[s], score[id])
			}
		}
	}
	for k := len(ids) - 1; k >= 0; k-- { // later first: cap the history
		id := ids[k]
		if s := units[id].u.SupersededBy; s != 0 {
			score[id] = min(score[id], score[s]) * historyFactor
		}
	}
	mems := p.res.Memories
	if p.q.Tier == TierCore {
		mems = mems[:0]
	}
	for _, id := range ids {
		if score[id] <= 0 {
			continue
		}
		u := units[id].u
		m := Memory{
			Record: Record{Time: u.Time, Agent: u.Agent, Role: "core/" + u.Type.String(), Text: unitText(&u)},
			Kind:   KindCore, Unit: &u, Score: score[id], Dense: dense[id],
		}
		if i, ok := best[id]; ok {
			m.Sparse = p.cands[i].sparse
		}
		if p.q.Explain {
			m.Reasons = append(m.Reasons, fmt.Sprintf("core x%g", p.db.opts.Core.Boost))
			if i, ok := best[id]; ok {
				m.Reasons = append(m.Reasons, fmt.Sprintf("source %d", p.cands[i].id))
			}
			if !u.Live() {
				m.Reasons = append(m.Reasons, fmt.Sprintf("superseded by %d", u.SupersededBy))
			}
			if r, ok := revised[id]; ok {
				m.Reasons = append(m.Reasons, fmt.Sprintf("below newer record %d", r))
			}
		}
		mems = append(mems, m)
	}
	slices.SortStableFunc(mems, func(a, b Memory) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	if len(mems) > p.q.K {
		mems = mems[:p.q.K]
	}
	p.res.Memories = mems
}

// unitTerms returns the content terms of the query's BM25 text (its own
// words and their expansions, without frame words), which a unit must
// hold one of to take its source's evidence; empty when the query has
// none ("what did we decide?").
func (p *plan) unitTerms() map[string]bool {
	terms := contentTerms(p.text)
	for _, t := range p.terms {
		terms[t] = true
	}
	return terms
}

// typeCueWords name a unit type in a question: "what are the action
// items?" asks for every live action item, whatever words they share with
// it. Only words that name the type itself are cues ("负责", "who owns" ask
// about one task and are left to BM25).
var typeCueWords = []struct {
	t     consolidate.Type
	words []string
}{
	{consolidate.TypeActionItem, []string{"待办", "行动项", "action item", "to-do", "todo"}},
	{consolidate.TypeDecision, []string{"哪些决定", "做了什么决定", "decisions"}},
	{consolidate.TypePreference, []string{"哪些偏好", "preferences"}},
}

// typeCues returns the unit types text names.
func typeCues(text string) []consolidate.Type {
	low := strings.ToLower(text)
	var out []consolidate.Type
	for _, c := range typeCueWords {
		for _, w := range c.words {
			if strings.Contains(low, w) {
				out = append(out, c.t)
				break
			}
		}
	}
	return out
}
