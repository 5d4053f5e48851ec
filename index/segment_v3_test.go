package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestSingleBlockTerms: terms of df around one block (1 to 2 blocks and
// a bit, tfs of every width) read back from a version 3 file as the
// mutable segment held them: every posting and tf, every Seek, the
// corners bounding each posting, and each term's hits (pruned equal to
// exhaustive and to the hits before the flush).
func TestSingleBlockTerms(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 3))
	dfs := []int{1, 2, 3, 64, 127, 128, 129, 255, 256, 257, 400}
	const n = 600
	texts := make([][]string, n)
	for _, df := range dfs {
		for _, i := range rng.Perm(n)[:df] {
			tf := 1
			switch rng.IntN(8) {
			case 0:
				tf = 1 + rng.IntN(40)
			case 1:
				tf = 2
			}
			for range tf {
				texts[i] = append(texts[i], fmt.Sprintf("d%d", df))
			}
		}
	}
	docs := make([]*Doc, n)
	for i := range docs {
		docs[i] = &Doc{ID: uint64(i + 1), Time: int64(i), Agent: "a", Session: "s", Text: strings.Join(texts[i], " ") + " filler"}
	}
	x, err := Open("", Options{Analyzer: SimpleAnalyzer{}, FlushDocs: -1, DisableBackgroundMerge: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if err := x.Add(docs); err != nil {
		t.Fatal(err)
	}
	type posting struct{ doc, tf uint32 }
	read := func(s *segment, term string) []posting {
		var ti termInfo
		if !s.term(term, &ti) {
			t.Fatalf("term %s missing", term)
		}
		var p postingsIter
		p.reset(&ti)
		var out []posting
		for p.Next() {
			out = append(out, posting{p.At(), p.TF()})
		}
		if p.Err() != nil {
			t.Fatal(p.Err())
		}
		return out
	}
	before := map[string][]posting{}
	hits := map[string][]Hit{}
	for _, df := range dfs {
		term := fmt.Sprintf("d%d", df)
		before[term] = read(x.mut, term)
		if hits[term], err = x.Search(term, nil, 10, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	s := x.segs[0]
	if s.mut != nil || !s.v3 {
		t.Fatal("the flushed segment is not a version 3 file")
	}
	sc := scorer{k1: 1.2, b: 0.75, avgdl: 3}
	for _, df := range dfs {
		term := fmt.Sprintf("d%d", df)
		got := read(s, term)
		if !slices.Equal(got, before[term]) {
			t.Fatalf("%s: sealed postings %v, mutable %v", term, got, before[term])
		}
		var ti termInfo
		s.term(term, &ti)
		if ti.single != (df <= blockSize) {
			t.Fatalf("%s: single = %v", term, ti.single)
		}
		var p postingsIter
		p.reset(&ti)
		for bi := 0; bi < p.nBlocks; bi++ {
			c, last := p.corners(bi)
			lo, hi := bi*blockSize, min((bi+1)*blockSize, len(got))
			if last != got[hi-1].doc {
				t.Fatalf("%s block %d: last %d, want %d", term, bi, last, got[hi-1].doc)
			}
			for _, g := range got[lo:hi] {
				if c.bound(&sc, 1) < sc.score(1, g.tf, s.docLen(g.doc)) {
					t.Fatalf("%s block %d: corners %+v do not bound %+v", term, bi, c, g)
				}
			}
		}
		for k := 0; k < 50; k++ {
			d := uint32(rng.IntN(n + 3))
			p.reset(&ti)
			i, _ := slices.BinarySearchFunc(got, d, func(g posting, d uint32) int { return int(g.doc) - int(d) })
			ok := p.Seek(d)
			if ok != (i < len(got)) || (ok && p.At() != got[i].doc) {
				t.Fatalf("%s: Seek(%d) = %v at %d, want doc index %d of %d", term, d, ok, p.At(), i, len(got))
			}
		}
		// Rising targets, near (Seek's scan of the next postings) and far
		// (its search of the block).
		for _, step := range []int{1, 3, 12, 40, 700} {
			p.reset(&ti)
			for d := uint32(rng.IntN(step + 1)); d < uint32(n+3); d += uint32(1 + rng.IntN(step)) {
				i, _ := slices.BinarySearchFunc(got, d, func(g posting, d uint32) int { return int(g.doc) - int(d) })
				ok := p.Seek(d)
				if ok != (i < len(got)) || (ok && p.At() != got[i].doc) {
					t.Fatalf("%s: step %d: Seek(%d) = %v at %d, want doc index %d of %d", term, step, d, ok, p.At(), i, len(got))
				}
			}
		}
		h, err := x.Search(term, nil, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		sameHits(t, term+" after the flush", h, hits[term], 0)
		ex, err := x.SearchExhaustive(term, nil, 10)
		if err != nil {
			t.Fatal(err)
		}
		sameHits(t, term+" pruned vs exhaustive", h, ex, 0)
	}
}
