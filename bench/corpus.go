package bench

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"
)

// Doc is one record as the side-by-side comparison feeds it to every engine.
// It mirrors index.Doc so the Bleve side does not depend on the index package;
// ID is the log id (ordinal + 1: id 0 means "no record").
type Doc struct {
	ID      uint64
	Time    int64 // unix nanoseconds
	Agent   string
	Session string
	Role    string
	Text    string
	Meta    []Field // sorted by Key; values in the generator's order
}

// Field is one metadata key with its values.
type Field struct {
	Key    string
	Values []string
}

// Query is one broad-stage query: BM25 text, an optional agent scope, an
// optional session scope and an optional [Since, Until) window in unix
// nanoseconds (0 = unbounded). Class labels the query for per-class reports
// ("" for the workload's queries).
type Query struct {
	Text         string
	Agent        string
	Session      string
	Since, Until int64
	Class        string
}

// Hit is one ranked result: the record id and the engine's own score.
// Scores are only comparable within one engine.
type Hit struct {
	ID    uint64
	Score float64
}

// Engine is a searchable index under comparison. Search appends the top k
// hits of q to dst[:0], best first, and returns it.
type Engine interface {
	Name() string
	Search(q *Query, k int, dst []Hit) ([]Hit, error)
}

// Corpus is a materialised workload: records in id order and queries.
type Corpus struct {
	Docs    []Doc
	Queries []Query
}

// TextBytes is the total size of the records' text, the figure ingest
// throughput is reported against (b.SetBytes).
func (c *Corpus) TextBytes() int64 {
	var n int64
	for i := range c.Docs {
		n += int64(len(c.Docs[i].Text))
	}
	return n
}

// Latency summarises per-query wall times of one engine at one k.
type Latency struct {
	Engine   string
	K        int
	Queries  int           // queries timed (rounds x distinct queries)
	P50, P99 time.Duration // nearest-rank percentiles
	Mean     time.Duration
	Max      time.Duration
	MeanHits float64 // mean result count: shows whether filters left k candidates
}

func (l Latency) String() string {
	return fmt.Sprintf("%s k=%d queries=%d p50=%v p99=%v mean=%v max=%v hits=%.1f",
		l.Engine, l.K, l.Queries, l.P50, l.P99, l.Mean, l.Max, l.MeanHits)
}

// Percentile returns the nearest-rank p-quantile (0 < p <= 1) of sorted
// durations; 0 for an empty slice.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	// nearest rank: ceil(p*n), 1-based
	r := int(math.Ceil(p * float64(len(sorted))))
	if r < 1 {
		r = 1
	}
	if r > len(sorted) {
		r = len(sorted)
	}
	return sorted[r-1]
}

// Summarize turns raw per-query durations into a Latency. It sorts d.
func Summarize(engine string, k int, d []time.Duration, hits int) Latency {
	slices.Sort(d)
	l := Latency{Engine: engine, K: k, Queries: len(d)}
	if len(d) == 0 {
		return l
	}
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	l.P50 = Percentile(d, 0.50)
	l.P99 = Percentile(d, 0.99)
	l.Mean = sum / time.Duration(len(d))
	l.Max = d[len(d)-1]
	l.MeanHits = float64(hits) / float64(len(d))
	return l
}

// Measure runs every query of qs rounds times against e at top-k, timing
// each Search call on its own, and summarises the durations. The first
// round is not discarded: callers warm up with a separate Measure call when
// they want a warm figure.
func Measure(e Engine, qs []Query, k, rounds int) (Latency, error) {
	if len(qs) == 0 {
		return Latency{}, ErrNoQueries
	}
	if k <= 0 {
		return Latency{}, ErrBadK
	}
	if rounds < 1 {
		rounds = 1
	}
	d := make([]time.Duration, 0, len(qs)*rounds)
	hits := 0
	for r := 0; r < rounds; r++ {
		var n int
		var err error
		if d, n, err = timeQueries(e, qs, k, d); err != nil {
			return Latency{}, err
		}
		hits += n
	}
	return Summarize(e.Name(), k, d, hits), nil
}

// timeQueries runs qs once on e at top-k and appends each query's wall time
// to d. It returns the total number of hits.
func timeQueries(e Engine, qs []Query, k int, d []time.Duration) ([]time.Duration, int, error) {
	var dst []Hit
	hits := 0
	for i := range qs {
		t0 := time.Now()
		var err error
		dst, err = e.Search(&qs[i], k, dst[:0])
		el := time.Since(t0)
		if err != nil {
			return d, hits, fmt.Errorf("lazymem: bench: %s query %d: %w", e.Name(), i, err)
		}
		d = append(d, el)
		hits += len(dst)
	}
	return d, hits, nil
}

// Overlap is the fraction of ids two top-k lists share: |A ∩ B| / max(|A|, |B|)
// over their first k hits. Two empty lists agree fully (1). The measure is
// set-based: the order inside the top k does not matter.
func Overlap(a, b []Hit, k int) float64 {
	if len(a) > k {
		a = a[:k]
	}
	if len(b) > k {
		b = b[:k]
	}
	n := max(len(a), len(b))
	if n == 0 {
		return 1
	}
	ids := make(map[uint64]struct{}, len(a))
	for _, h := range a {
		ids[h.ID] = struct{}{}
	}
	common := 0
	for _, h := range b {
		if _, ok := ids[h.ID]; ok {
			common++
			delete(ids, h.ID) // a duplicate id in b must not count twice
		}
	}
	return float64(common) / float64(n)
}

// Agreement summarises the top-k overlap of two engines over a query set.
type Agreement struct {
	A, B        string
	Subset      string // which queries: "" = all
	K           int
	Queries     int
	MeanOverlap float64 // mean of Overlap over the queries
	MinOverlap  float64
	Identical   int // queries whose top-k id sets are equal
	EmptyA      int // queries for which A returned nothing
	EmptyB      int
}

func (g Agreement) String() string {
	return fmt.Sprintf("%s vs %s top-%d over %d queries: mean overlap %.4f, min %.2f, identical sets %d/%d (empty: %d / %d)",
		g.A, g.B, g.K, g.Queries, g.MeanOverlap, g.MinOverlap, g.Identical, g.Queries, g.EmptyA, g.EmptyB)
}

// Compare runs every query on a and b at top-k and reports how far their
// result sets agree.
func Compare(a, b Engine, qs []Query, k int) (Agreement, error) {
	if len(qs) == 0 {
		return Agreement{}, ErrNoQueries
	}
	if k <= 0 {
		return Agreement{}, ErrBadK
	}
	g := Agreement{A: a.Name(), B: b.Name(), K: k, Queries: len(qs), MinOverlap: 1}
	var ha, hb []Hit
	sum := 0.0
	for i := range qs {
		var err error
		if ha, err = a.Search(&qs[i], k, ha[:0]); err != nil {
			return Agreement{}, fmt.Errorf("lazymem: bench: %s query %d: %w", a.Name(), i, err)
		}
		if hb, err = b.Search(&qs[i], k, hb[:0]); err != nil {
			return Agreement{}, fmt.Errorf("lazymem: bench: %s query %d: %w", b.Name(), i, err)
		}
		o := Overlap(ha, hb, k)
		sum += o
		g.MinOverlap = min(g.MinOverlap, o)
		if o == 1 {
			g.Identical++
		}
		if len(ha) == 0 {
			g.EmptyA++
		}
		if len(hb) == 0 {
			g.EmptyB++
		}
	}
	g.MeanOverlap = sum / float64(len(qs))
	return g, nil
}

// PlainQueries keeps the queries whose words are all plain lowercase ASCII
// letters. On those, lazymem's analyzer and Bleve's "en" analyzer produce
// the same kind of terms (no camelCase, snake_case or dotted identifier
// for lazymem to split into parts while Bleve keeps it whole), so the top-k
// agreement on them isolates the scoring formulas.
func PlainQueries(qs []Query) []Query {
	var out []Query
	for _, q := range qs {
		if plain(q.Text) {
			out = append(out, q)
		}
	}
	return out
}

func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != ' ' && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}

// sortMeta turns a metadata map into Fields sorted by key, so that every
// engine sees the same order whatever Go's map iteration does.
func sortMeta(m map[string][]string) []Field {
	if len(m) == 0 {
		return nil
	}
	out := make([]Field, 0, len(m))
	for k, v := range m {
		out = append(out, Field{Key: k, Values: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}
