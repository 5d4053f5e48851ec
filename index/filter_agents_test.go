package index

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestFilterEveryAgent: a filter listing every agent reads the index's
// union of all agents (agented), which must hold exactly the ids indexed
// with an agent: records without one stay out, as do deleted ones, in the
// mutable segment, after flushes and merges, and after a reopen rebuilds
// the union from the sealed segments.
func TestFilterEveryAgent(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 11))
	fs := vfs.NewMem()
	opts := Options{Analyzer: SimpleAnalyzer{}, FS: fs, FlushDocs: -1, DisableBackgroundMerge: true,
		MergeFactor: 3, MergeMinDocs: 50}
	x, err := Open("idx", opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	docs := genCorpus(rng, 1200, 1, 80)
	for i, d := range docs {
		if i%7 == 3 {
			d.Agent = "" // a record of no agent
		}
	}
	o := &oracle{docs: docs[:0], deleted: map[uint64]bool{}, an: SimpleAnalyzer{}, k1: 1.2, b: 0.75}
	every := [][]string{
		{"a0", "a1", "a2", "a3"},
		{"a3", "a3", "a1", "a0", "a2"},
		{"a2", "a-absent", "a1", "a0", "a3"},
		{"a0", "a1", "a2", "a2"}, // not every agent, as many values
	}
	check := func(stage string) {
		t.Helper()
		for _, agents := range every {
			for _, f := range []*Filter{
				{Agents: agents},
				{Agents: agents, Roles: []string{"user"}},
				{Agents: agents, Since: docs[len(docs)/3].Time},
			} {
				got, err := x.Filter(f)
				if err != nil {
					t.Fatal(err)
				}
				if want := o.filter(f); !got.Equals(want) {
					t.Fatalf("%s: Filter(%+v): %d ids, want %d", stage, f, got.GetCardinality(), want.GetCardinality())
				}
				if got.Contains(uint32(docs[3].ID)) {
					t.Fatalf("%s: Filter(%+v) holds record %d, which has no agent", stage, f, docs[3].ID)
				}
			}
		}
		checkQueries(t, rng, x, o, docs, 80, 20)
	}
	for i := 0; i < len(docs); {
		n := min(1+rng.IntN(150), len(docs)-i)
		if err := x.Add(docs[i : i+n]); err != nil {
			t.Fatal(err)
		}
		i += n
		o.docs = docs[:i]
		check(fmt.Sprintf("after %d records", i))
		switch rng.IntN(4) {
		case 0:
			if err := x.Flush(); err != nil {
				t.Fatal(err)
			}
		case 1:
			var del []uint64
			for j := 0; j < 1+rng.IntN(10); j++ {
				d := docs[rng.IntN(i)].ID
				del = append(del, d)
				o.deleted[d] = true
			}
			if err := x.Delete(del); err != nil {
				t.Fatal(err)
			}
		case 2:
			if _, err := x.mergeOnce(true); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if x, err = Open("idx", opts, nil); err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	check("after a reopen")
}
