package engine

import (
	"fmt"
	"math"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/lazymem/lazymem/vecmath"
)

// fuse scores every candidate from its sparse and dense evidence, the
// recency prior and the speaker boost, and picks the top Query.K.
func (p *plan) fuse() {
	p.fused = fuse(p.cands, p.q, p.now, p.speakers)
	p.top = vecmath.TopK(p.fused, p.q.K)
}

// fuse computes the fused score of every candidate.
func fuse(cands []cand, q *Query, now time.Time, speakers *roaring.Bitmap) []float32 {
	out := make([]float32, len(cands))
	if len(cands) == 0 {
		return out
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
		default:
			if c.sparseRank > 0 {
				s += ws / float64(DefaultRRFK+c.sparseRank)
			}
			if c.denseRank > 0 {
				s += wd / float64(DefaultRRFK+c.denseRank)
			}
		}
		if q.RecencyHalfLife > 0 && c.fetched {
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
	if q.RecencyHalfLife > 0 && c.fetched {
		rs = append(rs, fmt.Sprintf("recency x%.2f", recencyFactor(c.rec.Time, q, now)))
	}
	return rs
}
