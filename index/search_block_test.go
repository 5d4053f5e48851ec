package index

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestWindowEqualsExhaustive checks the block-at-a-time spans
// (search_block.go) against the exhaustive search, scores bit for bit
// (tolerance 0), over corpora large enough that a mid-frequency term's
// block spans more ids than windowSpan: spans cut at windowSpan,
// several essential lists in one span, non-essential blocks read,
// deletions and session context. Even seeds run with spans of 2,048
// ids (the corpora are smaller than the default span). It fails unless
// every one of those paths was taken.
func TestWindowEqualsExhaustive(t *testing.T) {
	defer func(w uint32) { windowSpan = w }(windowSpan)
	def := windowSpan
	seeds := 10
	if testing.Short() {
		seeds = 3
	}
	var spans, cut, neRead, wide, rdBlocks, queries int
	for seed := 1; seed <= seeds; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			windowSpan = def
			if seed%2 == 0 {
				windowSpan = 2048
			}
			rng := rand.New(rand.NewPCG(uint64(seed), 23))
			vocab := 300 + rng.IntN(3000)
			x, err := Open("", Options{Analyzer: SimpleAnalyzer{}, FS: vfs.NewMem(), FlushDocs: -1,
				DisableBackgroundMerge: true, SessionContext: seed%2 == 1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			x.searched = func(s *searcher) {
				spans += s.spans
				cut += s.cut
				neRead += s.neRead
				wide += s.wide
				rdBlocks += s.rdBlocks
				s.spans, s.cut, s.neRead, s.wide, s.rdBlocks = 0, 0, 0, 0, 0
			}
			docs := genCorpus(rng, 5000+rng.IntN(8000), 0, vocab)
			for i := 0; i < len(docs); {
				n := min(1000+rng.IntN(4000), len(docs)-i)
				if err := x.Add(docs[i : i+n]); err != nil {
					t.Fatal(err)
				}
				i += n
				if rng.IntN(2) == 0 {
					if err := x.Flush(); err != nil {
						t.Fatal(err)
					}
				}
				var del []uint64
				for j := 0; j < rng.IntN(30); j++ {
					del = append(del, docs[rng.IntN(i)].ID)
				}
				if err := x.Delete(del); err != nil {
					t.Fatal(err)
				}
			}
			var dst []Hit
			for q := 0; q < 120; q++ {
				query := randQuery(rng, vocab)
				if rng.IntN(3) == 0 { // a frequent term with the others
					query += fmt.Sprintf(" w%d", rng.IntN(8))
				}
				k := []int{1, 2, 5, 10, 30}[rng.IntN(5)]
				got, err := x.Search(query, nil, k, dst)
				if err != nil {
					t.Fatal(err)
				}
				dst = got
				want, err := x.SearchExhaustive(query, nil, k)
				if err != nil {
					t.Fatal(err)
				}
				sameHits(t, fmt.Sprintf("query %q k=%d", query, k), got, want, 0)
				queries++
			}
		})
	}
	t.Logf("%d queries: %d spans block at a time, %d cut at windowSpan, %d non-essential blocks read, %d ranges past a dense list's blocks, %d blocks read past the first", queries, spans, cut, neRead, wide, rdBlocks)
	if spans == 0 || cut == 0 || neRead == 0 || wide == 0 || rdBlocks == 0 {
		t.Errorf("spans %d, cut %d, non-essential reads %d, wide ranges %d, blocks read past the first %d: want every path taken", spans, cut, neRead, wide, rdBlocks)
	}
}

// TestWideRangeBlockBounds: a dense non-essential term whose block bounds
// rise a little block after block (its tf grows with the id in two
// teeth, every record's length the same) beside a rare essential one. maxScore's
// ranges run past the dense term's blocks, and each block read must add
// its own bound (readNE) and the range's bound must be the most of them
// (reach): the first block's would prune the later, better documents.
// Exact against the exhaustive search, bit for bit.
func TestWideRangeBlockBounds(t *testing.T) {
	x, err := Open("", Options{Analyzer: SimpleAnalyzer{}, FS: vfs.NewMem(), FlushDocs: -1, DisableBackgroundMerge: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	const n, length = 12000, 50
	docs := make([]*Doc, n)
	for i := range docs {
		var w []string
		if i%4 == 0 { // the dense term: a quarter of the ids
			for range 10 + i/400%15 + 2*(i/6000) { // two rising teeth, the second higher
				w = append(w, "c")
			}
		}
		if i%48 == 0 {
			w = append(w, "r")
		}
		for j := len(w); j < length; j++ {
			w = append(w, fmt.Sprintf("f%d", (i+j)%97))
		}
		docs[i] = &Doc{ID: uint64(i + 1), Agent: "a", Text: strings.Join(w, " ")}
	}
	if err := x.Add(docs); err != nil {
		t.Fatal(err)
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	var wide, rdBlocks int
	x.searched = func(s *searcher) {
		wide += s.wide
		rdBlocks += s.rdBlocks
		s.wide, s.rdBlocks = 0, 0
	}
	for _, k := range []int{1, 3, 10, 30} {
		got, err := x.Search("r c", nil, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := x.SearchExhaustive("r c", nil, k)
		if err != nil {
			t.Fatal(err)
		}
		sameHits(t, fmt.Sprintf("k=%d", k), got, want, 0)
	}
	if wide == 0 || rdBlocks == 0 {
		t.Errorf("wide ranges %d, blocks read past the first %d: the path was not taken", wide, rdBlocks)
	}
}
