package eager

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand"
	"sort"

	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/vecmath"
)

// dotDistance is 1 - cosine for unit vectors, with our dot kernel. The
// hash embedder's vectors are unit length (or zero: distance 1 from
// everything, never NaN).
func dotDistance(a, b []float32) float32 { return 1 - vecmath.Dot(a, b) }

// hnswBase keeps one HNSW graph (hnswGraph) per agent, keyed by ordinal,
// so the agent scope is exact; time windows are post-filtered with
// oversampling.
type hnswBase struct {
	common
	graphs map[string]*hnswGraph
}

func newHNSW(opts Options) *hnswBase {
	return &hnswBase{common: newCommon(opts), graphs: map[string]*hnswGraph{}}
}

func (h *hnswBase) Name() string { return "hnsw" }

func (h *hnswBase) graph(agent string) *hnswGraph {
	g := h.graphs[agent]
	if g == nil {
		f := fnv.New64a()
		_, _ = io.WriteString(f, agent)
		g = newHNSWGraph(h.opts.HNSWM, h.opts.HNSWEfSearch, h.opts.HNSWMl, rand.New(rand.NewSource(h.opts.Seed^int64(f.Sum64()))))
		h.graphs[agent] = g
	}
	return g
}

func (h *hnswBase) Ingest(ctx context.Context, recs []workload.Record) error {
	return h.embedAll(ctx, recs, func(first int, batch []workload.Record, _ []string, vecs [][]float32) (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("%w: hnsw add: %v", ErrBackend, p)
			}
		}()
		for i := range batch {
			h.graph(batch[i].Agent).Add(first+i, vecs[i])
		}
		return nil
	})
}

func (h *hnswBase) Query(ctx context.Context, q workload.Query, k int) (out []int, err error) {
	qv, err := h.embedQuery(ctx, q.Text)
	if err != nil {
		return nil, err
	}
	g := h.graphs[q.Agent]
	if g == nil || k <= 0 {
		return nil, nil
	}
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("%w: hnsw search: %v", ErrBackend, p)
		}
	}()
	w := windowOf(q)
	// Ask for max(EfSearch, what the window's share calls for) and keep
	// the best k inside the window; double while fewer survive.
	want := max(h.firstAsk(q.Agent, w, k), h.opts.HNSWEfSearch)
	total := g.Len()
	type hit struct {
		ord  int
		dist float32
	}
	var hits []hit
	for {
		want = min(want, total)
		nodes := g.Search(qv, want, max(h.opts.HNSWEfSearch, want))
		hits = hits[:0]
		for _, n := range nodes {
			if w.has(h.times[n.node]) {
				hits = append(hits, hit{int(n.node), n.dist})
			}
		}
		if len(hits) >= k || want >= total {
			break
		}
		want *= 2
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].dist != hits[j].dist {
			return hits[i].dist < hits[j].dist
		}
		return hits[i].ord < hits[j].ord
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	out = make([]int, len(hits))
	for i, x := range hits {
		out[i] = x.ord
	}
	return out, nil
}

// Bytes is the size of every graph (each vector once, its links, its
// key; hnswGraph.Bytes) plus the stored text.
func (h *hnswBase) Bytes() int64 {
	var n int64
	for _, g := range h.graphs {
		n += g.Bytes()
	}
	return n + h.textBytes()
}

func (h *hnswBase) Close() error {
	if h.closed {
		return ErrClosed
	}
	h.closed = true
	h.graphs, h.texts, h.times = nil, nil, nil
	return nil
}
