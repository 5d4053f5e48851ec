package index

import (
	"fmt"
	"math/rand/v2"
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
	var spans, cut, neRead, queries int
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
				s.spans, s.cut, s.neRead = 0, 0, 0
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
	t.Logf("%d queries: %d spans block at a time, %d cut at windowSpan, %d non-essential blocks read", queries, spans, cut, neRead)
	if spans == 0 || cut == 0 || neRead == 0 {
		t.Errorf("spans %d, cut %d, non-essential reads %d: want every path taken", spans, cut, neRead)
	}
}

// TestPackedTF reads every tf of packed blocks alone (packedTF, behind
// ProbeTF) and compares it with the whole block's decode, for every
// width and block length, and refuses damaged blocks.
func TestPackedTF(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	out := make([]uint32, blockSize)
	for w := 0; w <= 32; w++ {
		for n := 1; n <= blockSize; n++ {
			tfs := make([]uint32, n)
			for j := range tfs {
				tfs[j] = 1 + uint32(rng.Uint64()&(uint64(1)<<w-1))
			}
			buf := appendPackedTFs(nil, tfs)
			if decodePackedTFs(buf, out[:n]) != len(buf) {
				t.Fatalf("w=%d n=%d: decodePackedTFs failed", w, n)
			}
			for j := 0; j < n; j++ {
				got, ok := packedTF(buf, n, j)
				if !ok || got != tfs[j] || got != out[j] {
					t.Fatalf("w=%d n=%d j=%d: packedTF %d %v, want %d", w, n, j, got, ok, tfs[j])
				}
			}
			if w > 0 {
				if _, ok := packedTF(buf[:len(buf)-1], n, 0); ok {
					t.Fatalf("w=%d n=%d: a short block read", w, n)
				}
			}
		}
	}
	if _, ok := packedTF([]byte{33, 0, 0, 0, 0, 0}, 1, 0); ok {
		t.Fatal("width 33 read")
	}
	if _, ok := packedTF(nil, 1, 0); ok {
		t.Fatal("empty block read")
	}
}
