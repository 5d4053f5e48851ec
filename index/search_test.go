package index

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

func TestSimpleSearch(t *testing.T) {
	x, err := Open("", Options{Analyzer: SimpleAnalyzer{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	docs := []*Doc{
		{ID: 1, Time: 10, Agent: "a", Text: "the connection pool is exhausted"},
		{ID: 2, Time: 20, Agent: "b", Text: "we decided to resize the connection pool to 50"},
		{ID: 3, Time: 30, Agent: "a", Text: "lunch was good"},
	}
	if err := x.Add(docs); err != nil {
		t.Fatal(err)
	}
	hits, err := x.Search("connection pool", nil, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].ID != 1 || hits[1].ID != 2 {
		t.Fatalf("hits %v", hits)
	}
	f, err := x.Filter(&Filter{Agents: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	hits, _ = x.Search("connection pool", f, 10, hits)
	if len(hits) != 1 || hits[0].ID != 1 {
		t.Fatalf("filtered hits %v", hits)
	}
	if err := x.Add([]*Doc{{ID: 3, Text: "x"}}); err == nil {
		t.Fatal("duplicate id accepted")
	}
	if err := x.Add([]*Doc{{ID: 1 << 32, Text: "x"}}); err == nil {
		t.Fatal("id beyond uint32 accepted")
	}
}

// TestPrunedEqualsExhaustive is acceptance point 1: over random corpora and
// queries, the pruned top-k equals the exhaustive BM25 (same ids, scores
// within 1e-6 relative), with and without filters, across several
// segments, after merges and deletions; the exhaustive one also equals a
// naive BM25 computed from the raw corpus.
func TestPrunedEqualsExhaustive(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 4
	}
	for seed := 1; seed <= seeds; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			vocab := 20 + rng.IntN(300)
			dir := ""
			fs := vfs.NewMem()
			if seed%2 == 0 {
				dir = "idx"
			}
			ratio := []float64{0.001, 2, 1e6}[seed%3]
			opts := Options{Analyzer: SimpleAnalyzer{}, FS: fs, FlushDocs: -1, DisableBackgroundMerge: true,
				MergeFactor: 3, MergeMinDocs: 50, FilterDrivenRatio: ratio}
			x, err := Open(dir, opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			docs := genCorpus(rng, 300+rng.IntN(1500), uint64(rng.IntN(3)), vocab)
			o := &oracle{docs: docs, deleted: map[uint64]bool{}, an: SimpleAnalyzer{}, k1: 1.2, b: 0.75}
			// ingest in batches with flushes, deletions and merges in between
			for i := 0; i < len(docs); {
				n := min(1+rng.IntN(200), len(docs)-i)
				if err := x.Add(docs[i : i+n]); err != nil {
					t.Fatal(err)
				}
				i += n
				switch rng.IntN(5) {
				case 0, 1:
					if err := x.Flush(); err != nil {
						t.Fatal(err)
					}
				case 2:
					var del []uint64
					for j := 0; j < 1+rng.IntN(20); j++ {
						d := docs[rng.IntN(i)].ID
						del = append(del, d)
						o.deleted[d] = true
					}
					if err := x.Delete(del); err != nil {
						t.Fatal(err)
					}
				case 3:
					if _, err := x.mergeOnce(rng.IntN(3) == 0); err != nil {
						t.Fatal(err)
					}
				}
			}
			m := x.Metrics()
			t.Logf("docs=%d segments=%d merges=%d deleted=%d late=%d", m.Docs, m.Segments, m.Merges, m.Deleted, m.LateDocs)
			if int(m.Docs) != len(o.live()) {
				t.Fatalf("Metrics.Docs %d, want %d", m.Docs, len(o.live()))
			}
			checkQueries(t, rng, x, o, docs, vocab, 150)
		})
	}
}

func checkQueries(t *testing.T, rng *rand.Rand, x *Index, o *oracle, docs []*Doc, vocab, nq int) {
	t.Helper()
	var dst []Hit
	for q := 0; q < nq; q++ {
		query := randQuery(rng, vocab)
		k := []int{1, 3, 10, 50, 1000}[rng.IntN(5)]
		var filter *roaring.Bitmap
		var where *Filter // the filter as SearchWhere takes it, when it has one
		viewed := false
		switch rng.IntN(6) {
		case 0:
			viewed = true
		case 1:
			f := randFilter(rng, docs)
			where, viewed = f, true
			var err error
			if filter, err = x.Filter(f); err != nil {
				t.Fatal(err)
			}
			if want := o.filter(f); !filter.Equals(want) {
				t.Fatalf("Filter(%+v): got %d ids, want %d", f, filter.GetCardinality(), want.GetCardinality())
			}
		case 2: // arbitrary caller bitmap, may hold deleted and absent ids
			filter = roaring.New()
			for j := 0; j < 1+rng.IntN(len(docs)); j++ {
				filter.Add(uint32(docs[rng.IntN(len(docs))].ID))
			}
			filter.Add(uint32(docs[len(docs)-1].ID + 5))
		case 3:
			filter = roaring.New()
			filter.AddRange(0, uint64(docs[len(docs)-1].ID)/2)
		case 4, 5:
			// A run of ids anywhere (a time window over records appended
			// in time order): searched unfiltered from its first id to its
			// last in each segment it meets; with holes, through the
			// filter within the same bounds.
			last := uint64(docs[len(docs)-1].ID)
			lo := uint64(rng.IntN(int(last) + 1))
			hi := lo + 1 + uint64(rng.IntN(int(last-lo)+2))
			filter = roaring.New()
			filter.AddRange(lo, hi)
			if rng.IntN(2) == 0 {
				for j := 0; j < 1+rng.IntN(5); j++ {
					filter.Remove(uint32(lo + uint64(rng.IntN(int(hi-lo)))))
				}
			}
		}
		got, err := x.Search(query, filter, k, dst)
		if err != nil {
			t.Fatal(err)
		}
		dst = got
		if viewed {
			w, err := x.SearchWhere(query, where, k, nil)
			if err != nil {
				t.Fatal(err)
			}
			sameHits(t, fmt.Sprintf("query %q k=%d SearchWhere(%+v) vs Search(Filter)", query, k, where), w, got, 0)
		}
		want, err := x.SearchExhaustive(query, filter, k)
		if err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("query %q k=%d filter=%v", query, k, filter != nil)
		sameHits(t, what+" pruned vs exhaustive", got, want, 1e-6)
		closeHits(t, what+" exhaustive vs naive", want, o.search(query, filter, k), 1e-9)
	}
}
