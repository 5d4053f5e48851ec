package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/lazymem/lazymem/vecmath"
)

// selective constructs only the candidates: vectors by record id from
// memory; the rest are constructed and looked up (or embedded) through the
// cache with the query, then scored by cosine. Fusion needs every
// candidate's fact (its time for the recency prior and supersession, the
// question and low-information flags): from the DB's fact table, else from
// the record. So a candidate is read from the log only when its vector is
// not cached by id (its text is embedded) or its fact is not known; the
// others are read only if they are returned (assemble). ModeSparse without
// a recency prior skips the stage; with one it only needs the facts.
func (p *plan) selective(ctx context.Context) error {
	q, st := p.q, &p.res.Stats
	recency := q.RecencyHalfLife > 0
	lazy := q.Mode == ModeLazy
	if !recency && !lazy {
		return nil
	}
	var vecs [][]float32
	if lazy {
		vecs = make([][]float32, len(p.cands))
		for i := range p.cands {
			if v, ok := p.db.cache.getID(p.cands[i].id); ok {
				vecs[i] = v
				st.CacheHits++
			}
		}
	}
	p.db.facts.lookup(p.cands)
	if lazy {
		if err := p.byKey(vecs); err != nil {
			return err
		}
	}
	read := make([]int, 0, len(p.cands))
	for i := range p.cands {
		if !p.cands[i].fact.known() || (lazy && vecs[i] == nil) {
			read = append(read, i)
		}
	}
	if err := p.read(read); err != nil {
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

// byKey looks up, by the cache key their facts hold, the vectors of the
// candidates the memory tier did not hold by id: found on disk, they need
// not be read from the log.
func (p *plan) byKey(vecs [][]float32) error {
	var keys []string
	var ids []uint64
	var at []int
	for i := range p.cands {
		if c := &p.cands[i]; vecs[i] == nil && c.fact.keyed() {
			keys = append(keys, string(c.fact.key[:]))
			ids = append(ids, c.id)
			at = append(at, i)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	got, ls, err := p.db.cache.lookup(keys, ids)
	if err != nil {
		return err
	}
	for j, i := range at {
		vecs[i] = got[j]
	}
	st := &p.res.Stats
	st.CacheHits += ls.hits + ls.diskHits
	st.DiskHits += ls.diskHits
	return nil
}

// read reads the candidates at sel from the log (those not read yet) and
// learns their facts.
func (p *plan) read(sel []int) error {
	var rest []int
	for _, i := range sel {
		if !p.cands[i].fetched && !p.cands[i].damaged {
			rest = append(rest, i)
		}
	}
	if len(rest) == 0 {
		return nil
	}
	if err := p.db.fetch(p.cands, rest); err != nil {
		return err
	}
	p.db.facts.learn(p.cands, rest)
	return nil
}

// embed fills the nil entries of vecs (the candidates without a vector by
// id) and p.qvec through the cache, in one batch with the query first.
func (p *plan) embed(ctx context.Context, vecs [][]float32) error {
	st := &p.res.Stats
	texts := make([]string, 1, len(p.cands)+1)
	texts[0] = p.denseText
	keys := make([]string, 1, len(p.cands)+1)
	keys[0] = cacheKey(queryNS(p.filter.Agents), p.denseText)
	ids := make([]uint64, 1, len(p.cands)+1) // ids[0] = 0: the query
	var missAt []int
	for i := range p.cands {
		if c := &p.cands[i]; vecs[i] == nil && c.fetched {
			t := p.db.construct(&c.rec)
			texts = append(texts, t)
			keys = append(keys, cacheKey(c.rec.Agent, t))
			ids = append(ids, c.id)
			missAt = append(missAt, i)
		}
	}
	got, ls, err := p.db.cache.getKeyed(ctx, keys, texts, ids)
	if err != nil {
		return err
	}
	for j, i := range missAt {
		vecs[i] = got[j+1]
	}
	p.db.facts.setKeys(p.cands, missAt, keys[1:])
	p.qvec = got[0]
	st.Embedded += ls.computed
	st.DiskHits += ls.diskHits
	st.Shared += ls.shared
	st.CacheHits += ls.hits + ls.diskHits
	return nil
}

// construct is the text embedded for r: Options.Construct of r without
// its leading and trailing pleasantries ("好的，", "thanks!"), which say
// nothing about what the record is about.
func (db *DB) construct(r *Record) string {
	if s := theLexicon().stripPleasantries(r.Text); s != r.Text {
		c := *r
		c.Text = s
		return db.opts.Construct(&c)
	}
	return db.opts.Construct(r)
}

// scoreDense sets every candidate's cosine with the query and its rank.
func (p *plan) scoreDense(vecs [][]float32) error {
	p.vecs = vecs
	dim := p.db.cache.dim
	// The rows are copied into a pooled buffer (~70 KB for 47 candidates
	// of 384 dimensions). Profile lesson (1M Zipf, agent filter, warm
	// recall): a fresh buffer each recall was a large allocation, often on
	// pages the process had not touched yet (its heap growing towards the
	// collector's goal), so the copy into it page-faulted; on a VM whose
	// fault costs ~10 µs that copy was a fifth of the warm recall. In a
	// heap at its steady size the pool still saves the allocation and its
	// clearing (steady agent recalls p50 0.92-1.00 -> 0.79-0.84 ms).
	fp := flatPool.Get().(*[]float32)
	defer flatPool.Put(fp)
	flat := slices.Grow((*fp)[:0], len(p.cands)*dim)[:len(p.cands)*dim]
	*fp = flat
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

// flatPool holds the row buffers scoreDense copies candidate vectors
// into (*[]float32).
var flatPool = sync.Pool{New: func() any { return new([]float32) }}

// damaged counts the candidates fetch could not read.
func damaged(cands []cand) int {
	n := 0
	for i := range cands {
		if cands[i].damaged {
			n++
		}
	}
	return n
}
