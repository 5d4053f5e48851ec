package index

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestConcurrent runs adds (with automatic flushes), deletions, searches
// and filters at once while the background merger works, then checks the
// result against a rebuild from the same log. Run it under -race.
func TestConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	docs := genCorpus(rng, 3000, 1, 120)
	fs := vfs.NewMem()
	opts := Options{Analyzer: SimpleAnalyzer{}, FS: fs, FlushDocs: 150, MergeFactor: 3, MergeMinDocs: 100}
	x, err := Open("idx", opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	var deleted sync.Map
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rr := rand.New(rand.NewPCG(seed, 1))
			var dst []Hit
			for {
				select {
				case <-stop:
					return
				default:
				}
				f, err := x.Filter(randFilter(rr, docs))
				if err != nil {
					t.Error(err)
					return
				}
				if dst, err = x.Search(randQuery(rr, 120), f, 10, dst); err != nil {
					t.Error(err)
					return
				}
				if dst, err = x.Search(randQuery(rr, 120), nil, 5, dst); err != nil {
					t.Error(err)
					return
				}
				// The filter read in place while Add writes the fields.
				if dst, err = x.SearchWhere(randQuery(rr, 120), &Filter{Agents: []string{"a1"}}, 10, dst); err != nil {
					t.Error(err)
					return
				}
			}
		}(uint64(r))
	}
	for i := 0; i < len(docs); i += 50 {
		if err := x.Add(docs[i : i+50]); err != nil {
			t.Fatal(err)
		}
		if i%300 == 0 && i > 0 {
			id := docs[rng.IntN(i)].ID
			deleted.Store(id, true)
			if err := x.Delete([]uint64{id}); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(stop)
	wg.Wait()
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	m := x.Metrics()
	t.Logf("metrics %+v", m)
	if m.Flushes == 0 {
		t.Fatal("no flush happened")
	}
	var del []uint64
	deleted.Range(func(k, _ any) bool { del = append(del, k.(uint64)); return true })
	src := &memSource{docs: docs}
	qs := []string{"w1 w2", "w5", "w7 w1 w30", "w2 w3 w4 w5"}
	fl := []*Filter{{Agents: []string{"a1"}}, {Roles: []string{"user"}, Since: docs[500].Time}}
	if err := sameIndex(x, src, del, qs, fl); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	// and the persisted state reopens to the same index
	y, err := Open("idx", opts, src)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	if err := sameIndex(y, src, del, qs, fl); err != nil {
		t.Fatal(err)
	}
}
