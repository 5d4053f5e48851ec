package index

import (
	"math/rand/v2"
	"testing"
)

// TestMemTermArena checks that postings appended to memTerms sharing one
// arena (interleaved, as in a mutable segment, in both of its halves) read back intact, block by
// block and whole, with the right block metadata, across chunk, block and
// page boundaries.
func TestMemTermArena(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var a postArena
	dfs := []int{1, 2, 3, 4, 5, 127, 128, 129, 255, 256, 257, 1000, 150000}
	terms := make([]memTerm, len(dfs))
	type post struct{ doc, tf, dl uint32 }
	want := make([][]post, len(dfs))
	// Interleave the terms' appends; docs strictly increase per term.
	doc := uint32(0)
	for left := true; left; {
		left = false
		for i, df := range dfs {
			if len(want[i]) == df {
				continue
			}
			left = true
			doc += 1 + uint32(rng.IntN(3))
			p := post{doc, 1 + uint32(rng.IntN(9)), 1 + uint32(rng.IntN(500))}
			want[i] = append(want[i], p)
			terms[i].add(&a, i&1, p.doc, p.tf, p.dl)
		}
	}
	if len(a.half[0].pages) < 2 || len(a.half[1].pages) < 1 {
		t.Fatalf("test should cross an arena page and use both halves, used %d and %d pages", len(a.half[0].pages), len(a.half[1].pages))
	}
	for i := range terms {
		mt := &terms[i]
		if mt.df() != dfs[i] {
			t.Fatalf("term %d: df %d, want %d", i, mt.df(), dfs[i])
		}
		docs, tfs := mt.appendPostings(&a, []uint32{99}, []uint32{99})
		if len(docs) != dfs[i]+1 || docs[0] != 99 || tfs[0] != 99 {
			t.Fatalf("term %d: appendPostings returned %d postings or clobbered the prefix", i, len(docs)-1)
		}
		for j, p := range want[i] {
			if docs[j+1] != p.doc || tfs[j+1] != p.tf {
				t.Fatalf("term %d posting %d: (%d, %d), want (%d, %d)", i, j, docs[j+1], tfs[j+1], p.doc, p.tf)
			}
		}
		for bi := range mt.nBlocks() {
			blk := want[i][bi*blockSize : min((bi+1)*blockSize, dfs[i])]
			m := mt.block(&a, bi)
			wm := blockMeta{last: blk[len(blk)-1].doc, minDL: ^uint32(0)}
			for _, p := range blk {
				wm.maxTF, wm.minDL = max(wm.maxTF, p.tf), min(wm.minDL, p.dl)
			}
			if m.last != wm.last || m.maxTF != wm.maxTF || m.minDL != wm.minDL {
				t.Fatalf("term %d block %d: meta %+v, want %+v", i, bi, *m, wm)
			}
		}
	}
}
