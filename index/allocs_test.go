package index

import (
	"math/rand/v2"
	"testing"
)

// TestSearchAllocs: a query of a warmed searcher allocates nothing in
// steady state, unfiltered, with a filter bitmap, and through SearchWhere
// with a one-value filter (the index's own bitmap read in place). An AND
// of several clauses (agent and session, a time window) builds its result
// bitmap; those cases only log their count.
func TestSearchAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	rng := rand.New(rand.NewPCG(7, 7))
	x, err := Open("", Options{FlushDocs: -1, DisableBackgroundMerge: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	id := uint64(1)
	for i := 0; i < 3; i++ { // three sealed segments and a mutable one
		docs := genCorpus(rng, 500, id, 2000)
		if err := x.Add(docs); err != nil {
			t.Fatal(err)
		}
		id = docs[len(docs)-1].ID + 1
		if i < 2 {
			if err := x.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	bm, err := x.Filter(&Filter{Agents: []string{"a1"}})
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]Hit, 0, 10)
	const q = "w3 w17 w250 w1999 never"
	for _, c := range []struct {
		name string
		max  float64
		run  func() ([]Hit, error)
	}{
		{"none", 0, func() ([]Hit, error) { return x.Search(q, nil, 10, dst) }},
		{"bitmap", 0, func() ([]Hit, error) { return x.Search(q, bm, 10, dst) }},
		{"where/agent", 0, func() ([]Hit, error) { return x.SearchWhere(q, &Filter{Agents: []string{"a1"}}, 10, dst) }},
		{"where/nil", 0, func() ([]Hit, error) { return x.SearchWhere(q, nil, 10, dst) }},
		{"where/agent+session", -1, func() ([]Hit, error) {
			return x.SearchWhere(q, &Filter{Agents: []string{"a1"}, Sessions: []string{"s3"}}, 10, dst)
		}},
		{"where/window", -1, func() ([]Hit, error) {
			return x.SearchWhere(q, &Filter{Since: 1_700_000_000_000_000_000, Until: 1_700_000_000_000_000_000 + 3e14}, 10, dst)
		}},
	} {
		hits, err := c.run() // warm the searcher
		if err != nil || len(hits) == 0 {
			t.Fatalf("%s: %d hits, %v", c.name, len(hits), err)
		}
		n := testing.AllocsPerRun(50, func() { _, _ = c.run() })
		t.Logf("%s: %v", c.name, n)
		if c.max >= 0 && n > c.max {
			t.Errorf("%s: %v allocations a query, want at most %v", c.name, n, c.max)
		}
	}
}
