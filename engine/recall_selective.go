package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/vecmath"
)

// selective constructs only the candidates: vectors by record id from
// memory; the rest are fetched, constructed and looked up (or embedded)
// through the cache with the query, then scored by cosine. ModeSparse
// without a recency prior skips it; with one it only fetches (the prior
// needs every candidate's time).
func (p *plan) selective(ctx context.Context) error {
	q, st := p.q, &p.res.Stats
	recency := q.RecencyHalfLife > 0
	lazy := q.Mode == ModeLazy
	if !recency && !lazy {
		return nil
	}
	var sel []int // nil: every candidate
	var vecs [][]float32
	if lazy {
		vecs = make([][]float32, len(p.cands))
		sel = make([]int, 0, len(p.cands))
		for i := range p.cands {
			if v, ok := p.db.cache.getID(p.cands[i].id); ok {
				vecs[i] = v
				st.CacheHits++
			} else {
				sel = append(sel, i)
			}
		}
	}
	if recency {
		sel = nil
	}
	if err := p.db.fetch(p.cands, sel); err != nil {
		return err
	}
	p.stageDone(&st.Durations.Fetch)
	if !lazy {
		return nil
	}
	if err := p.embed(ctx, vecs); err != nil {
		return err
	}
	p.stageDone(&st.Durations.Embed)
	return p.scoreDense(vecs)
}

// embed fills the nil entries of vecs (the candidates without a vector by
// id) and p.qvec through the cache, in one batch with the query first.
func (p *plan) embed(ctx context.Context, vecs [][]float32) error {
	st := &p.res.Stats
	texts := make([]string, 1, len(p.cands)+1)
	texts[0] = p.denseText
	ns := make([]string, 1, len(p.cands)+1)
	ns[0] = queryNS(p.filter.Agents)
	ids := make([]uint64, 1, len(p.cands)+1) // ids[0] = 0: the query
	var missAt []int
	for i := range p.cands {
		if vecs[i] == nil {
			texts = append(texts, p.db.opts.Construct(&p.cands[i].rec))
			ns = append(ns, p.cands[i].rec.Agent)
			ids = append(ids, p.cands[i].id)
			missAt = append(missAt, i)
		}
	}
	got, ls, err := p.db.cache.get(ctx, ns, texts, ids)
	if err != nil {
		return err
	}
	for j, i := range missAt {
		vecs[i] = got[j+1]
	}
	p.qvec = got[0]
	st.Embedded, st.DiskHits, st.Shared = ls.computed, ls.diskHits, ls.shared
	st.CacheHits += ls.hits + ls.diskHits
	return nil
}

// scoreDense sets every candidate's cosine with the query and its rank.
func (p *plan) scoreDense(vecs [][]float32) error {
	dim := p.db.cache.dim
	flat := make([]float32, len(p.cands)*dim)
	for i := range p.cands {
		copy(flat[i*dim:], vecs[i])
	}
	scores := make([]float32, len(p.cands))
	if err := vecmath.DotBatch(p.qvec, flat, dim, scores); err != nil {
		return fmt.Errorf("lazymem: engine: dense scoring: %w", err)
	}
	for r, i := range vecmath.TopK(scores, len(scores)) {
		p.cands[i].dense = scores[i]
		p.cands[i].denseRank = r + 1
	}
	return nil
}

// fetch reads the records of cands (all, or those at the indices sel) from
// the log in one pass.
func (db *DB) fetch(cands []cand, sel []int) error {
	idx := map[uint64]int{}
	var ids []uint64
	add := func(i int) {
		idx[cands[i].id] = i
		ids = append(ids, cands[i].id)
	}
	if sel == nil {
		for i := range cands {
			add(i)
		}
	} else {
		for _, i := range sel {
			add(i)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	var c codec.Record
	err := db.log.GetMany(ids, func(id uint64, payload []byte) error {
		if _, err := codec.DecodeRecord(payload, &c); err != nil {
			return fmt.Errorf("%w: id %d: %w", ErrCorrupt, id, err)
		}
		k := &cands[idx[id]]
		k.rec = fromCodec(id, &c)
		k.fetched = true
		return nil
	})
	if err != nil {
		return fmt.Errorf("lazymem: engine: fetch: %w", err)
	}
	return nil
}
