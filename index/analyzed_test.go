package index

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestAddAnalyzedEqualsAdd feeds one corpus through Add and another copy
// through Analyze (ids unset, as the engine does before the log assigns
// them) + AddAnalyzed, in batches around the parallel threshold, and
// requires identical search results and filters.
func TestAddAnalyzedEqualsAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	corpus := genCorpus(rng, 3000, 1, 400)
	a, err := Open("", Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open("", Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	for lo := 0; lo < len(corpus); {
		n := []int{1, 100, 300, 700}[rng.IntN(4)]
		batch := corpus[lo:min(lo+n, len(corpus))]
		lo += len(batch)
		if err := a.Add(batch); err != nil {
			t.Fatal(err)
		}
		addAnalyzedCopies(t, b, batch)
	}
	for q := 0; q < 50; q++ {
		query := corpus[rng.IntN(len(corpus))].Text
		ha, err := a.Search(query, nil, 20, nil)
		if err != nil {
			t.Fatal(err)
		}
		hb, err := b.Search(query, nil, 20, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ha, hb) {
			t.Fatalf("query %q: Add gives %v, AddAnalyzed %v", query, ha, hb)
		}
	}
	fa, _ := a.Filter(&Filter{Agents: []string{corpus[0].Agent}})
	fb, _ := b.Filter(&Filter{Agents: []string{corpus[0].Agent}})
	if !fa.Equals(fb) || fa.IsEmpty() {
		t.Fatalf("filters differ or are empty: %d vs %d", fa.GetCardinality(), fb.GetCardinality())
	}
	// An analysis belongs to its batch.
	other := b.Analyze(corpus[:2])
	if err := b.AddAnalyzed(corpus[:3], other); err == nil {
		t.Fatal("AddAnalyzed accepted the analysis of another batch")
	}
	late := b.Analyze(corpus[:1])
	if err := b.AddAnalyzed(corpus[:1], late); err == nil {
		t.Fatal("AddAnalyzed accepted an id already indexed")
	}
}

// addAnalyzedCopies adds copies of batch to x the way the engine does:
// Analyze before the ids are known (they are zero), then AddAnalyzed with
// the ids set.
func addAnalyzedCopies(t *testing.T, x *Index, batch []*Doc) {
	t.Helper()
	copies := make([]*Doc, len(batch))
	for i, d := range batch {
		c := *d
		c.ID = 0
		copies[i] = &c
	}
	an := x.Analyze(copies)
	for i := range copies {
		copies[i].ID = batch[i].ID
	}
	if err := x.AddAnalyzed(copies, an); err != nil {
		t.Fatal(err)
	}
}
