package index

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestFilterCacheEqualsUncached runs the same filtered searches on two
// indexes holding the same documents, one keeping the filters' forms
// (filtercache.go) and one not, through flushes, deletions, merges and
// more adds, under both evaluation strategies: the hits must be the same,
// scores to the bit, and the cache must have answered searches.
func TestFilterCacheEqualsUncached(t *testing.T) {
	for _, tc := range []struct {
		ratio  float64
		budget int64
	}{{0.001, 0}, {2, 0}, {1e6, 0}, {2, 48 << 10}} {
		t.Run(fmt.Sprintf("ratio=%v/budget=%d", tc.ratio, tc.budget), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.ratio*10)+uint64(tc.budget), 11))
			open := func(budget int64) *Index {
				x, err := Open("", Options{Analyzer: SimpleAnalyzer{}, FS: vfs.NewMem(), FlushDocs: -1,
					DisableBackgroundMerge: true, MergeFactor: 2, MergeMinDocs: 50,
					FilterDrivenRatio: tc.ratio, FilterCacheBytes: budget}, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { x.Close() })
				return x
			}
			on, off := open(tc.budget), open(-1)
			if on.fcache == nil || off.fcache != nil {
				t.Fatal("the cache is not on in one index and off in the other")
			}
			vocab := 200
			docs := genCorpus(rng, 9000, 0, vocab)
			both := func(f func(x *Index) error) {
				for _, x := range []*Index{on, off} {
					if err := f(x); err != nil {
						t.Fatal(err)
					}
				}
			}
			check := func(round int) {
				for q := 0; q < 150; q++ {
					query := randQuery(rng, vocab)
					var f *Filter
					switch q % 3 {
					case 0:
						f = &Filter{Agents: []string{fmt.Sprintf("a%d", rng.IntN(4))}}
					case 1:
						f = randFilter(rng, docs)
					default:
						f = &Filter{Agents: []string{fmt.Sprintf("a%d", rng.IntN(4))}, Roles: []string{"user"}}
					}
					what := fmt.Sprintf("round %d query %q filter %+v", round, query, *f)
					got, err := on.SearchWhere(query, f, 10, nil)
					if err != nil {
						t.Fatal(err)
					}
					want, err := off.SearchWhere(query, f, 10, nil)
					if err != nil {
						t.Fatal(err)
					}
					sameHits(t, what+" (SearchWhere)", got, want, 0)
					// The engine's route: a caller-owned bitmap and its key,
					// narrowed in place.
					bm, key, err := on.FilterKeyed(f)
					if err != nil {
						t.Fatal(err)
					}
					if q%2 == 0 {
						roles, _ := on.Filter(&Filter{Roles: []string{"user", "tool"}})
						bm.And(roles)
					}
					got, err = on.SearchKeyed(query, bm, key, 10, nil)
					if err != nil {
						t.Fatal(err)
					}
					want, err = off.Search(query, bm, 10, nil)
					if err != nil {
						t.Fatal(err)
					}
					sameHits(t, what+" (SearchKeyed)", got, want, 0)
					// A key with another bitmap is ignored.
					other := bm.Clone()
					other.Add(uint32(docs[rng.IntN(len(docs))].ID))
					got, err = on.SearchKeyed(query, other, key, 10, nil)
					if err != nil {
						t.Fatal(err)
					}
					want, err = off.Search(query, other, 10, nil)
					if err != nil {
						t.Fatal(err)
					}
					sameHits(t, what+" (another bitmap)", got, want, 0)
				}
			}
			for i, round := 0, 0; i < len(docs); round++ {
				n := min(1500, len(docs)-i)
				both(func(x *Index) error { return x.Add(docs[i : i+n]) })
				i += n
				both(func(x *Index) error { return x.Flush() })
				if round%2 == 1 {
					var del []uint64
					for j := 0; j < 40; j++ {
						del = append(del, docs[rng.IntN(i)].ID)
					}
					both(func(x *Index) error { return x.Delete(del) })
				}
				if round == 3 {
					both(func(x *Index) error { _, err := x.mergeOnce(true); return err })
				}
				check(round)
			}
			c := on.fcache
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.served == 0 {
				t.Fatal("no search was answered from the cache")
			}
			if c.bytes > c.limit {
				t.Fatalf("cache holds %d bytes over its budget %d", c.bytes, c.limit)
			}
			var sum int64
			for _, k := range c.ring {
				e := c.m[k]
				sum += e.size()
				if k.num == 0 || e.ids == nil {
					t.Fatalf("entry %+v: no segment or no ids", k)
				}
			}
			if sum != c.bytes || len(c.ring) != len(c.m) {
				t.Fatalf("accounting: ring %d entries %d bytes, map %d entries, counted %d bytes", len(c.ring), sum, len(c.m), c.bytes)
			}
			t.Logf("%d entries, %d bytes, %d segment searches served", len(c.m), c.bytes, c.served)
		})
	}
}

func TestGallop(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for trial := 0; trial < 2000; trial++ {
		bm := roaring.New()
		for i := rng.IntN(200); i > 0; i-- {
			bm.Add(uint32(rng.IntN(1000)))
		}
		ids := bm.ToArray()
		from := 0
		if len(ids) > 0 {
			from = rng.IntN(len(ids) + 1)
		}
		v := uint32(rng.IntN(1100))
		want := from
		for want < len(ids) && ids[want] < v {
			want++
		}
		if got := gallop(ids, from, v); got != want {
			t.Fatalf("gallop(%v, %d, %d) = %d, want %d", ids, from, v, got, want)
		}
	}
}

// TestFilterCacheConcurrent searches from several goroutines while adds
// and flushes go on, with a budget that forces evictions (run it under
// -race): each answer equals the exhaustive one when no add came between
// the two.
func TestFilterCacheConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	x, err := Open("", Options{Analyzer: SimpleAnalyzer{}, FS: vfs.NewMem(), FlushDocs: -1,
		DisableBackgroundMerge: true, FilterCacheBytes: 24 << 10}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	docs := genCorpus(rng, 8000, 0, 100)
	if err := x.Add(docs[:6000]); err != nil {
		t.Fatal(err)
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func(g int) {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for q := 0; q < 200; q++ {
				query := randQuery(r, 100)
				f := &Filter{Agents: []string{fmt.Sprintf("a%d", r.IntN(4))}}
				bm, key, err := x.FilterKeyed(f)
				if err != nil {
					done <- err
					return
				}
				n0 := x.Metrics().Docs
				got, err := x.SearchKeyed(query, bm, key, 10, nil)
				if err != nil {
					done <- err
					return
				}
				want, err := x.SearchExhaustive(query, bm, 10)
				if err != nil {
					done <- err
					return
				}
				if x.Metrics().Docs != n0 {
					continue // an add between the two: other statistics
				}
				for i := range want {
					if i >= len(got) || got[i].ID != want[i].ID {
						done <- fmt.Errorf("query %q agent %v: got %v, want %v", query, f.Agents, got, want)
						return
					}
				}
			}
			done <- nil
		}(g)
	}
	// Adds land in the mutable segment's range only, so the sealed
	// segment's entries stay valid while they go on.
	for i := 6000; i < len(docs); i += 500 {
		if err := x.Add(docs[i : i+500]); err != nil {
			t.Fatal(err)
		}
	}
	for g := 0; g < 4; g++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if x.fcache.served == 0 {
		t.Fatal("no search was answered from the cache")
	}
}
