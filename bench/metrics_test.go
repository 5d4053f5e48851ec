package bench

import (
	"errors"
	"testing"
	"time"
)

func hits(ids ...uint64) []Hit {
	h := make([]Hit, len(ids))
	for i, id := range ids {
		h[i] = Hit{ID: id, Score: float64(len(ids) - i)}
	}
	return h
}

func TestOverlap(t *testing.T) {
	cases := []struct {
		a, b []Hit
		k    int
		want float64
	}{
		{nil, nil, 10, 1},
		{hits(1, 2, 3), nil, 10, 0},
		{hits(1, 2, 3), hits(3, 2, 1), 10, 1},            // order does not matter
		{hits(1, 2, 3, 4), hits(1, 2, 5, 6), 10, 0.5},    // 2 of 4
		{hits(1, 2, 3), hits(1, 2, 3, 4), 10, 0.75},      // shorter list: divide by the longer
		{hits(1, 2, 3, 4), hits(1, 2, 9, 4), 2, 1},       // only the first k count
		{hits(1, 2, 3, 4), hits(2, 1, 9, 8), 3, 2.0 / 3}, // 1,2 common in top-3
		{hits(1, 2), hits(1, 1), 10, 0.5},                // a duplicate counts once
	}
	for i, c := range cases {
		if got := Overlap(c.a, c.b, c.k); got != c.want {
			t.Errorf("case %d: Overlap = %v, want %v", i, got, c.want)
		}
		if got := Overlap(c.b, c.a, c.k); got != c.want && !(len(c.a) == 2 && c.b[0].ID == c.b[1].ID) {
			t.Errorf("case %d reversed: Overlap = %v, want %v", i, got, c.want)
		}
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	if p := Percentile(d, 0.5); p != 50 {
		t.Errorf("p50 = %v", p)
	}
	if p := Percentile(d, 0.99); p != 99 {
		t.Errorf("p99 = %v", p)
	}
	if p := Percentile(d, 1); p != 100 {
		t.Errorf("p100 = %v", p)
	}
	if p := Percentile(d[:1], 0.99); p != 1 {
		t.Errorf("single = %v", p)
	}
	if p := Percentile(nil, 0.5); p != 0 {
		t.Errorf("empty = %v", p)
	}
	l := Summarize("x", 10, []time.Duration{5, 1, 3}, 9)
	if l.P50 != 3 || l.Max != 5 || l.Mean != 3 || l.MeanHits != 3 {
		t.Errorf("summary %+v", l)
	}
}

// fixed is an Engine that answers from a table, for testing Compare.
type fixed struct {
	name string
	ans  map[string][]Hit
}

func (f fixed) Name() string { return f.name }
func (f fixed) Search(q *Query, k int, dst []Hit) ([]Hit, error) {
	h := f.ans[q.Text]
	if len(h) > k {
		h = h[:k]
	}
	return append(dst, h...), nil
}

func TestCompare(t *testing.T) {
	a := fixed{"a", map[string][]Hit{"x": hits(1, 2), "y": hits(3, 4), "z": nil}}
	b := fixed{"b", map[string][]Hit{"x": hits(2, 1), "y": hits(3, 5), "z": hits(7)}}
	qs := []Query{{Text: "x"}, {Text: "y"}, {Text: "z"}}
	g, err := Compare(a, b, qs, 10)
	if err != nil {
		t.Fatal(err)
	}
	if g.Identical != 1 || g.MinOverlap != 0 || g.EmptyA != 1 || g.EmptyB != 0 {
		t.Fatalf("%+v", g)
	}
	if want := (1 + 0.5 + 0) / 3; g.MeanOverlap != want {
		t.Fatalf("mean %v want %v", g.MeanOverlap, want)
	}
	if _, err := Compare(a, b, nil, 10); !errors.Is(err, ErrNoQueries) {
		t.Fatalf("no queries: %v", err)
	}
	if _, err := Measure(a, qs, 0, 1); !errors.Is(err, ErrBadK) {
		t.Fatalf("k=0: %v", err)
	}
	l, err := Measure(a, qs, 1, 2)
	if err != nil || l.Queries != 6 || l.MeanHits != 4.0/6 {
		t.Fatalf("measure %+v %v", l, err)
	}
}

func TestPlainQueries(t *testing.T) {
	qs := []Query{{Text: "pool timeout"}, {Text: "pool HikariCP"}, {Text: "req_3630 pool"}, {Text: "v2.1"}, {Text: "déjà vu"}, {Text: "alpha beta gamma"}}
	got := PlainQueries(qs)
	if len(got) != 2 || got[0].Text != "pool timeout" || got[1].Text != "alpha beta gamma" {
		t.Fatalf("PlainQueries = %+v", got)
	}
}

func TestOptionsValidate(t *testing.T) {
	o := BleveOptions{BatchSize: -1}
	if err := o.Validate(); !errors.Is(err, ErrOptions) {
		t.Fatalf("BatchSize -1: %v", err)
	}
	o.BatchSize = 0
	o.EnsureDefaults()
	if o.BatchSize != 1000 || o.SettleTimeout <= 0 || o.Validate() != nil {
		t.Fatalf("defaults %+v", o)
	}
	if _, err := BuildSideBySide(SideBySideOptions{}); !errors.Is(err, ErrOptions) {
		t.Fatalf("no Dir: %v", err)
	}
}
