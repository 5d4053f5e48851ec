package engine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/lazymem/lazymem/vecmath"
)

// denseChunk is how many records ModeDense fetches and embeds at a time.
const denseChunk = 4096

// DefaultMaxDenseScan is the default Query.MaxDenseScan: the most records
// a ModeDense recall embeds and scores. Dense mode is the eager reference:
// it embeds every filtered record it has no cached vector for, which on an
// unfiltered tenant of millions of records is hours of a remote embedder.
const DefaultMaxDenseScan = 100_000

// dense is the ModeDense variant of the sources, selective, fuse and
// assemble stages: every filtered record is fetched, constructed, embedded
// through the cache and scored by cosine (the eager-RAG reference), then
// the recency prior and the speaker boost apply. p.cands ends as the
// returned records, best first.
func (p *plan) dense(ctx context.Context) error {
	q, st := p.q, &p.res.Stats
	if st.Filtered > q.MaxDenseScan {
		return fmt.Errorf("%w: a dense recall would score the %d records passing the filters, query.max_dense_scan is %d: narrow the filters or raise the limit",
			ErrBudget, st.Filtered, q.MaxDenseScan)
	}
	qv, ls, err := p.db.cache.get(ctx, []string{queryNS(p.filter.Agents)}, []string{p.denseText}, nil)
	if err != nil {
		return err
	}
	p.qvec = qv[0]
	st.Embedded, st.CacheHits, st.DiskHits = ls.computed, ls.hits+ls.diskHits, ls.diskHits
	st.Candidates = st.Filtered
	ids := p.bm.ToArray()
	scores, times, err := p.denseScores(ctx, ids)
	if err != nil {
		return err
	}
	ts := time.Now()
	fused := make([]float32, len(scores))
	copy(fused, scores)
	for i := range fused {
		if q.RecencyHalfLife > 0 {
			fused[i] *= float32(recencyFactor(times[i], q, p.now))
		}
		if p.speakers != nil && fused[i] > 0 && p.speakers.Contains(ids[i]) {
			fused[i] *= float32(q.SpeakerBoost)
		}
	}
	top := vecmath.TopK(fused, q.K)
	p.cands = make([]cand, len(top))
	p.fused = make([]float32, len(top))
	for j, i := range top {
		p.cands[j] = cand{id: uint64(ids[i]), dense: scores[i], denseRank: j + 1}
		p.fused[j] = fused[i]
		// The boost applied (fused > 0): say so in the reasons.
		p.cands[j].speaker = p.speakers != nil && fused[i] > 0 && p.speakers.Contains(ids[i])
	}
	if err := p.db.fetch(p.cands, nil); err != nil {
		return err
	}
	for j, i := range top {
		c := &p.cands[j]
		if !c.fetched || math.IsInf(float64(scores[i]), -1) {
			continue
		}
		p.top = append(p.top, j)
		m := Memory{Record: c.rec, Score: float64(fused[i]), Dense: float64(scores[i])}
		if q.Explain {
			m.Reasons = reasons(c, q, p.now)
		}
		p.res.Memories = append(p.res.Memories, m)
	}
	st.Durations.Score = time.Since(ts)
	return nil
}

// denseScores fetches, constructs, embeds (through the cache) and scores
// the records ids in chunks of denseChunk; a record deleted meanwhile
// scores -Inf. It returns each record's cosine and time.
func (p *plan) denseScores(ctx context.Context, ids []uint32) ([]float32, []time.Time, error) {
	st := &p.res.Stats
	dim := p.db.cache.dim
	scores := make([]float32, len(ids))
	times := make([]time.Time, len(ids))
	var flat []float32
	for lo := 0; lo < len(ids); lo += denseChunk {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		hi := min(lo+denseChunk, len(ids))
		tf := time.Now()
		cands := make([]cand, hi-lo)
		for i := range cands {
			cands[i].id = uint64(ids[lo+i])
		}
		if err := p.db.fetch(cands, nil); err != nil {
			return nil, nil, err
		}
		texts := make([]string, len(cands))
		ns := make([]string, len(cands))
		for i := range cands {
			texts[i] = p.db.construct(&cands[i].rec)
			ns[i] = cands[i].rec.Agent
			times[lo+i] = cands[i].rec.Time
		}
		te := time.Now()
		st.Durations.Fetch += te.Sub(tf)
		vecs, ls, err := p.db.cache.get(ctx, ns, texts, nil)
		if err != nil {
			return nil, nil, err
		}
		st.Embedded += ls.computed
		st.CacheHits += ls.hits + ls.diskHits
		st.DiskHits += ls.diskHits
		st.Shared += ls.shared
		flat = slices.Grow(flat[:0], len(vecs)*dim)[:len(vecs)*dim]
		for i, v := range vecs {
			copy(flat[i*dim:], v)
		}
		if err := vecmath.DotBatch(p.qvec, flat, dim, scores[lo:hi]); err != nil {
			return nil, nil, fmt.Errorf("lazymem: engine: dense scoring: %w", err)
		}
		for i := range cands {
			if !cands[i].fetched { // deleted meanwhile
				scores[lo+i] = float32(math.Inf(-1))
			}
		}
		st.Durations.Embed += time.Since(te)
	}
	return scores, times, nil
}
