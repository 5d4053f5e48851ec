package index

import (
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestCheckpoint: a checkpoint taken while documents sit in the mutable
// segment and a background merge may run opens with the sealed
// segments loaded and the rest re-indexed from the source, with the
// tombstones kept, and answers as the index did when it was taken; the
// index goes on after it (a merge removing its inputs leaves the copy's
// links).
func TestCheckpoint(t *testing.T) {
	fs := vfs.NewMem()
	rng := rand.New(rand.NewPCG(3, 4))
	docs := genCorpus(rng, 1500, 1, 300)
	src := &memSource{docs: docs}
	x, err := Open("idx", Options{FS: fs, Analyzer: SimpleAnalyzer{}, FlushDocs: 400, MergeMinDocs: 300}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Add(docs[:1200]); err != nil {
		t.Fatal(err)
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := x.Add(docs[1200:]); err != nil { // stays in the mutable segment
		t.Fatal(err)
	}
	del := []uint64{docs[3].ID, docs[700].ID, docs[1300].ID}
	if err := x.Delete(del); err != nil {
		t.Fatal(err)
	}
	if err := x.Checkpoint("copy"); err != nil {
		t.Fatal(err)
	}
	sealed := x.Metrics().Docs + x.Metrics().Deleted - x.Metrics().MemDocs
	queries := make([]string, 30)
	wants := make([][]Hit, len(queries))
	for i := range queries {
		queries[i] = randQuery(rng, 300)
		if wants[i], err = x.Search(queries[i], nil, 10, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.Add(genCorpus(rng, 50, docs[len(docs)-1].ID+1, 300)); err != nil {
		t.Fatal(err)
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	c, err := Open("copy", Options{FS: fs, Analyzer: SimpleAnalyzer{}}, src)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	defer x.Close()
	m := c.Metrics()
	if m.Docs != 1497 || m.Deleted != 3 || m.Rebuilt != uint64(len(docs))-sealed || m.Dropped != 0 {
		t.Fatalf("copy: %d docs, %d deleted, %d re-indexed (want 1497, 3, %d), %d segments dropped", m.Docs, m.Deleted, m.Rebuilt, uint64(len(docs))-sealed, m.Dropped)
	}
	for i, q := range queries {
		got, err := c.Search(q, nil, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		sameHits(t, q, got, wants[i], 1e-9)
	}
}
