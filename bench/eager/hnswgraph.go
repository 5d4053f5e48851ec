package eager

import (
	"cmp"
	"math/rand"
	"slices"
)

// hnswGraph is a hierarchical navigable small world graph (Malkov and
// Yashunin, 2018) over unit vectors, distance 1 - dot: the eager baseline's
// approximate index, written here because the library it replaced
// (coder/hnsw v0.6) stopped a search at the first step that brought no
// closer node, which on hash vectors left its top 10 at 24-35% of the exact
// one (docs/benchmarks/suite.md). This one follows the paper: a layer's
// search stops when the nearest unexpanded candidate is farther than the
// worst of the ef kept, and neighbours are chosen by the paper's heuristic
// (a candidate is kept when it is closer to the new node than to every
// neighbour kept before it), which keeps the graph navigable where vectors
// form clusters.
//
// Not safe for concurrent use.
type hnswGraph struct {
	m, m0 int     // neighbours a node keeps above layer 0, and on layer 0
	efC   int     // candidate list size while inserting
	pUp   float64 // probability that a node also lives one layer higher
	rng   *rand.Rand

	vecs  [][]float32
	keys  []int
	links [][][]int32 // links[node][layer]: the node's neighbours on layer
	entry int32       // -1 when empty
	top   int         // the entry node's layer

	seen  []uint32 // seen[node] == epoch: visited in the current search
	epoch uint32
}

// newHNSWGraph returns an empty graph: m neighbours a node (2m on layer 0),
// efConstruction candidates while inserting, pUp the chance of each further
// layer (the level of a node is geometric).
func newHNSWGraph(m, efConstruction int, pUp float64, rng *rand.Rand) *hnswGraph {
	return &hnswGraph{m: m, m0: 2 * m, efC: max(efConstruction, m), pUp: pUp, rng: rng, entry: -1}
}

// Len returns the number of nodes.
func (g *hnswGraph) Len() int { return len(g.vecs) }

func (g *hnswGraph) dist(q []float32, n int32) float32 { return dotDistance(q, g.vecs[n]) }

// Add inserts v under key. v is kept, not copied.
func (g *hnswGraph) Add(key int, v []float32) {
	level := 0
	for g.rng.Float64() < g.pUp && level < 16 {
		level++
	}
	n := int32(len(g.vecs))
	g.vecs, g.keys = append(g.vecs, v), append(g.keys, key)
	g.links = append(g.links, make([][]int32, level+1))
	g.seen = append(g.seen, 0)
	if g.entry < 0 {
		g.entry, g.top = n, level
		return
	}
	ep := []hnswHit{{g.entry, g.dist(v, g.entry)}}
	for l := g.top; l > level; l-- {
		ep = g.searchLayer(v, ep, 1, l)
	}
	for l := min(level, g.top); l >= 0; l-- {
		cands := g.searchLayer(v, ep, g.efC, l)
		most := g.m
		if l == 0 {
			most = g.m0
		}
		nb := g.selectNeighbours(cands, g.m)
		g.links[n][l] = nb
		for _, o := range nb {
			g.links[o][l] = append(g.links[o][l], n)
			if len(g.links[o][l]) > most {
				g.shrink(o, l, most)
			}
		}
		ep = cands
	}
	if level > g.top {
		g.entry, g.top = n, level
	}
}

// shrink cuts node o's neighbours on layer l to most, by the heuristic.
func (g *hnswGraph) shrink(o int32, l, most int) {
	nbs := g.links[o][l]
	cands := make([]hnswHit, len(nbs))
	for i, x := range nbs {
		cands[i] = hnswHit{x, dotDistance(g.vecs[o], g.vecs[x])}
	}
	sortHits(cands)
	g.links[o][l] = g.selectNeighbours(cands, most)
}

// selectNeighbours picks at most m of cands (nearest first) by the paper's
// heuristic, then fills up with the nearest skipped ones (the paper's
// keepPrunedConnections), so that a node in a tight cluster still has m
// links.
func (g *hnswGraph) selectNeighbours(cands []hnswHit, m int) []int32 {
	out := make([]int32, 0, m)
	var skipped []int32
	for _, c := range cands {
		if len(out) == m {
			break
		}
		keep := true
		for _, s := range out {
			if dotDistance(g.vecs[c.node], g.vecs[s]) < c.dist {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, c.node)
		} else {
			skipped = append(skipped, c.node)
		}
	}
	for _, s := range skipped {
		if len(out) == m {
			break
		}
		out = append(out, s)
	}
	return out
}

// Search returns the keys of the k nodes nearest q that a search with ef
// candidates (at least k) finds, nearest first, and their distances.
func (g *hnswGraph) Search(q []float32, k, ef int) []hnswHit {
	if g.entry < 0 || k <= 0 {
		return nil
	}
	ep := []hnswHit{{g.entry, g.dist(q, g.entry)}}
	for l := g.top; l > 0; l-- {
		ep = g.searchLayer(q, ep, 1, l)
	}
	res := g.searchLayer(q, ep, max(ef, k), 0)
	if len(res) > k {
		res = res[:k]
	}
	for i := range res {
		res[i].node = int32(g.keys[res[i].node])
	}
	return res
}

// hnswHit is a node (or, from Search, a key) and its distance to the query.
type hnswHit struct {
	node int32
	dist float32
}

// searchLayer is the paper's SEARCH-LAYER: the ef nodes nearest q reachable
// on layer l from the entry points ep, nearest first.
func (g *hnswGraph) searchLayer(q []float32, ep []hnswHit, ef, l int) []hnswHit {
	g.epoch++
	if g.epoch == 0 { // wrapped: forget every old mark
		clear(g.seen)
		g.epoch = 1
	}
	cand := hitHeap{near: true} // nearest on top: what to expand next
	res := hitHeap{}            // farthest on top: the worst kept
	for _, e := range ep {
		g.seen[e.node] = g.epoch
		cand.push(e)
		res.push(e)
		if len(res.h) > ef {
			res.pop()
		}
	}
	for len(cand.h) > 0 {
		c := cand.pop()
		if len(res.h) >= ef && c.dist > res.h[0].dist {
			break
		}
		if l >= len(g.links[c.node]) {
			continue
		}
		for _, o := range g.links[c.node][l] {
			if g.seen[o] == g.epoch {
				continue
			}
			g.seen[o] = g.epoch
			d := g.dist(q, o)
			if len(res.h) < ef || d < res.h[0].dist {
				cand.push(hnswHit{o, d})
				res.push(hnswHit{o, d})
				if len(res.h) > ef {
					res.pop()
				}
			}
		}
	}
	out := res.h
	sortHits(out)
	return out
}

// sortHits orders hits nearest first, then by node.
func sortHits(h []hnswHit) {
	slices.SortFunc(h, func(a, b hnswHit) int {
		if c := cmp.Compare(a.dist, b.dist); c != 0 {
			return c
		}
		return cmp.Compare(a.node, b.node)
	})
}

// Bytes is the graph's payload: each vector once, each link as 4 bytes,
// each key as 8.
func (g *hnswGraph) Bytes() int64 {
	var n int64
	for i, v := range g.vecs {
		n += int64(4*len(v)) + 8
		for _, l := range g.links[i] {
			n += int64(4 * len(l))
		}
	}
	return n
}

// hitHeap is a binary heap of hits: the nearest on top when near, else
// the farthest.
type hitHeap struct {
	h    []hnswHit
	near bool
}

// above reports whether a belongs above b.
func (h *hitHeap) above(a, b hnswHit) bool {
	if h.near {
		return a.dist < b.dist
	}
	return a.dist > b.dist
}

func (h *hitHeap) push(x hnswHit) {
	h.h = append(h.h, x)
	for i := len(h.h) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.above(h.h[i], h.h[p]) {
			break
		}
		h.h[i], h.h[p] = h.h[p], h.h[i]
		i = p
	}
}

func (h *hitHeap) pop() hnswHit {
	top := h.h[0]
	n := len(h.h) - 1
	h.h[0] = h.h[n]
	h.h = h.h[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && h.above(h.h[c+1], h.h[c]) {
			c++
		}
		if !h.above(h.h[c], h.h[i]) {
			break
		}
		h.h[i], h.h[c] = h.h[c], h.h[i]
		i = c
	}
	return top
}
