package eager

import (
	"context"
	"fmt"
	"sort"

	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/vecmath"
)

// flat is exact search: each agent's vectors lie row after row in one
// float32 array, in ingest (= time) order, so a time window is a row range
// and a query is one vecmath.DotBatch over it plus vecmath.TopK.
type flat struct {
	common
	dim    int
	agents map[string]*flatShard
	scores []float32
}

type flatShard struct {
	vecs  []float32
	ords  []int
	times []int64 // non-decreasing when ingest is in time order
	// sorted is false once a record arrives out of time order: the window
	// is then applied row by row instead of by binary search.
	sorted bool
}

func newFlat(opts Options) *flat {
	return &flat{common: newCommon(opts), dim: opts.Embedder.Dim(), agents: map[string]*flatShard{}}
}

func (f *flat) Name() string { return "flat" }

func (f *flat) Ingest(ctx context.Context, recs []workload.Record) error {
	return f.embedAll(ctx, recs, func(first int, batch []workload.Record, _ []string, vecs [][]float32) error {
		for i := range batch {
			r := &batch[i]
			s := f.agents[r.Agent]
			if s == nil {
				s = &flatShard{sorted: true}
				f.agents[r.Agent] = s
			}
			t := r.Time.UnixNano()
			if n := len(s.times); n > 0 && t < s.times[n-1] {
				s.sorted = false
			}
			s.vecs = append(s.vecs, vecs[i]...)
			s.ords = append(s.ords, first+i)
			s.times = append(s.times, t)
		}
		return nil
	})
}

func (f *flat) Query(ctx context.Context, q workload.Query, k int) ([]int, error) {
	qv, err := f.embedQuery(ctx, q.Text)
	if err != nil {
		return nil, err
	}
	s := f.agents[q.Agent]
	if s == nil || k <= 0 {
		return nil, nil
	}
	w := windowOf(q)
	lo, hi := 0, len(s.ords)
	if w.set && s.sorted {
		lo = sort.Search(len(s.times), func(i int) bool { return s.times[i] >= w.lo })
		hi = sort.Search(len(s.times), func(i int) bool { return s.times[i] >= w.hi })
	}
	if lo >= hi {
		return nil, nil
	}
	n := hi - lo
	if cap(f.scores) < n {
		f.scores = make([]float32, n)
	}
	scores := f.scores[:n]
	if err := vecmath.DotBatch(qv, s.vecs[lo*f.dim:hi*f.dim], f.dim, scores); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBackend, err)
	}
	if w.set && !s.sorted {
		kept := 0
		for i := range scores {
			if !w.has(s.times[lo+i]) {
				scores[i] = float32NegInf
			} else {
				kept++
			}
		}
		k = min(k, kept)
	}
	top := vecmath.TopK(scores, k)
	out := make([]int, len(top))
	for i, j := range top {
		out[i] = s.ords[lo+j]
	}
	return out, nil
}

// Bytes: the vectors (4 bytes a dimension), an 8-byte ordinal and an
// 8-byte time per record, and the stored text.
func (f *flat) Bytes() int64 {
	var n int64
	for _, s := range f.agents {
		n += int64(len(s.vecs))*4 + int64(len(s.ords))*16
	}
	return n + f.textBytes()
}

func (f *flat) Close() error {
	if f.closed {
		return ErrClosed
	}
	f.closed = true
	f.agents, f.texts, f.times, f.scores = nil, nil, nil, nil
	return nil
}
