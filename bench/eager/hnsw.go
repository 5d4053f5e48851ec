package eager

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand"
	"sort"
	"sync"

	"github.com/coder/hnsw"

	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/vecmath"
)

// dotDistance is 1 - cosine for unit vectors, with our dot kernel. The
// hash embedder's vectors are unit length (or zero: distance 1 from
// everything, never NaN, where hnsw.CosineDistance would divide by zero).
func dotDistance(a, b []float32) float32 { return 1 - vecmath.Dot(a, b) }

const dotDistanceName = "lazymem-dot"

var registerOnce sync.Once

// hnswBase keeps one coder/hnsw graph per agent, keyed by ordinal, so the
// agent scope is exact; time windows are post-filtered with oversampling.
type hnswBase struct {
	common
	graphs map[string]*hnsw.Graph[int]
}

func newHNSW(opts Options) *hnswBase {
	registerOnce.Do(func() { hnsw.RegisterDistanceFunc(dotDistanceName, dotDistance) })
	return &hnswBase{common: newCommon(opts), graphs: map[string]*hnsw.Graph[int]{}}
}

func (h *hnswBase) Name() string { return "hnsw" }

func (h *hnswBase) graph(agent string) *hnsw.Graph[int] {
	g := h.graphs[agent]
	if g == nil {
		f := fnv.New64a()
		_, _ = io.WriteString(f, agent)
		g = &hnsw.Graph[int]{
			M:        h.opts.HNSWM,
			Ml:       h.opts.HNSWMl,
			EfSearch: h.opts.HNSWEfSearch,
			Distance: dotDistance,
			Rng:      rand.New(rand.NewSource(h.opts.Seed ^ int64(f.Sum64()))),
		}
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
			h.graph(batch[i].Agent).Add(hnsw.MakeNode(first+i, vecs[i]))
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
	// coder/hnsw stops expanding as soon as one step brings no closer
	// node once it holds the number asked for, so asking for only k gives
	// poor recall: ask for at least EfSearch and keep the best k.
	want := max(h.firstAsk(q.Agent, w, k), h.opts.HNSWEfSearch)
	total := g.Len()
	type hit struct {
		ord  int
		dist float32
	}
	var hits []hit
	for {
		want = min(want, total)
		ef := g.EfSearch
		g.EfSearch = max(ef, want)
		nodes := g.Search(qv, want)
		g.EfSearch = ef
		hits = hits[:0]
		for _, n := range nodes {
			if w.has(h.times[n.Key]) {
				hits = append(hits, hit{n.Key, dotDistance(qv, n.Value)})
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

// Bytes is the size of every graph as hnsw.Graph.Export writes it (vectors
// once per layer the node is on, neighbour lists) plus the stored text.
func (h *hnswBase) Bytes() int64 {
	var cw countWriter
	for _, g := range h.graphs {
		if err := g.Export(&cw); err != nil {
			return -1
		}
	}
	return cw.n + h.textBytes()
}

func (h *hnswBase) Close() error {
	if h.closed {
		return ErrClosed
	}
	h.closed = true
	h.graphs, h.texts, h.times = nil, nil, nil
	return nil
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}
