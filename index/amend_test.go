package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// successors returns the documents whose session predecessor is one of
// del: for each deleted document, the next live document of its agent and
// session.
func successors(all []*Doc, deleted map[uint64]bool, del []uint64) []uint64 {
	gone := map[uint64]bool{}
	for _, id := range del {
		gone[id] = true
	}
	seen := map[uint64]bool{}
	var out []uint64
	for i, d := range all {
		if !gone[d.ID] || d.Session == "" {
			continue
		}
		for _, e := range all[i+1:] {
			if e.Agent == d.Agent && e.Session == d.Session && !deleted[e.ID] {
				if !seen[e.ID] {
					seen[e.ID] = true
					out = append(out, e.ID)
				}
				break
			}
		}
	}
	return out
}

// TestReindexOracle: documents whose predecessor was deleted, indexed
// again with Reindex, are searched exactly as a naive BM25 over each live
// document's text and its live predecessor's (what a rebuild of the whole
// index gives), after several rounds of deletions (amended documents
// deleted and amended again among them), after the segments are merged,
// and after a reopen (the amended documents analysed again from the
// source); the pruned search equals the exhaustive one throughout. Without
// Reindex the same comparison fails (the successors keep the deleted
// words).
func TestReindexOracle(t *testing.T) {
	for seed := 1; seed <= 4; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 11))
			const vocab = 300
			all := genCorpus(rng, 2000, 1, vocab)
			fs := vfs.NewMem()
			opts := Options{FS: fs, SessionContext: true, FlushDocs: 400, MergeMinDocs: 300, DisableBackgroundMerge: seed%2 == 0}
			own, inherited := 1, 1
			switch seed {
			case 3: // BM25F-style weights
				opts.ContextWeight = 0.5
				own, inherited = 8, 4
			case 2, 4: // a sample of the predecessor, as the engine indexes
				opts.ContextSample, opts.ContextWeight = true, 0.5
				own, inherited = 16, 8
			}
			src := &memSource{}
			x, err := Open("idx", opts, src)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { x.Close() }()
			addInBatches(t, rng, x, src, all)
			o := &oracle{docs: all, deleted: map[uint64]bool{}, an: opts.EnsureDefaults().Analyzer, k1: 1.2, b: 0.75, context: true, own: own, inherited: inherited, sample: opts.ContextSample}
			compare := func(what string, x *Index, exact bool) int {
				t.Helper()
				return checkOracle(t, rng, x, o, all, vocab, 60, what, exact)
			}
			compare("before deletions", x, true)
			// Rounds 0 and 1 forget in windows of recent history, the second
			// above the first's successors (the amendment segment grows in
			// place); the others anywhere (it is built anew).
			var grown *segment
			for round := range 5 {
				lo, hi := 0, len(all)
				switch round {
				case 0:
					lo, hi = len(all)/2, len(all)*6/10
				case 1:
					lo, hi = len(all)*3/4, len(all)*85/100
				}
				var del []uint64
				for _, d := range all[lo:hi] {
					if !o.deleted[d.ID] && rng.IntN(12) == 0 {
						del = append(del, d.ID)
						o.deleted[d.ID] = true
					}
				}
				if err := x.Delete(del); err != nil {
					t.Fatal(err)
				}
				if round == 0 && compare("stale", x, false) == 0 {
					t.Fatal("the successors' stale words change no search: the test cannot fail")
				}
				succ := successors(all, o.deleted, del)
				slices.Sort(succ)
				if got := x.Successors(roaring.BitmapOf(u32s(del)...)); !slices.Equal(got, succ) {
					t.Fatalf("round %d: Successors = %v, want %v", round, got, succ)
				}
				stale := x.StaleSuccessors()
				for _, id := range stale {
					if _, ok := slices.BinarySearch(succ, id); !ok {
						t.Fatalf("round %d: StaleSuccessors holds %d, not a successor of this round's deletions", round, id)
					}
				}
				if round == 0 && !slices.Equal(stale, succ) {
					t.Fatalf("round 0: StaleSuccessors = %v, want %v", stale, succ)
				}
				n, err := x.Reindex(succ)
				if err != nil {
					t.Fatal(err)
				}
				if stale := x.StaleSuccessors(); len(stale) != 0 {
					t.Fatalf("round %d: after Reindex StaleSuccessors = %v", round, stale)
				}
				if n < len(succ) || uint64(n) != x.Metrics().Amended {
					t.Fatalf("round %d: %d successors, amendment segment holds %d, metrics %d", round, len(succ), n, x.Metrics().Amended)
				}
				compare(fmt.Sprintf("round %d", round), x, true)
				if round == 2 {
					purge(t, x)
					compare("purged", x, true)
				}
				switch round {
				case 0:
					grown = x.amend
				case 1:
					if x.amend != grown {
						t.Fatal("round 1: the amendment segment was built anew, not grown")
					}
				case 2:
					if x.amend == grown {
						t.Fatal("round 2: the amendment segment grew where documents were amended again or below it")
					}
				}
			}
			if err := x.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := x.Settle(); err != nil {
				t.Fatal(err)
			}
			compare("settled", x, true)
			if err := x.Close(); err != nil {
				t.Fatal(err)
			}
			x, err = Open("idx", opts, src)
			if err != nil {
				t.Fatal(err)
			}
			if x.Metrics().Amended == 0 {
				t.Fatal("reopened: no amended document")
			}
			compare("reopened", x, true)
			purge(t, x) // which amended documents were purged is not persisted
			compare("reopened and purged", x, true)
			if err := x.Close(); err != nil {
				t.Fatal(err)
			}
			if x, err = Open("idx", opts, src); err != nil {
				t.Fatal(err)
			}
			compare("purged and reopened", x, true)
		})
	}
}

// purge runs Purge on x, which holds postings of deleted or amended
// documents in its sealed segments, and checks that none is left.
func purge(t *testing.T, x *Index) {
	t.Helper()
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	if voidPostings(t, x) == 0 {
		t.Fatal("before Purge: no posting of a deleted or amended document: the check cannot fail")
	}
	n, err := x.Purge()
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("Purge rewrote no segment")
	}
	if v := voidPostings(t, x); v != 0 {
		t.Fatalf("after Purge: %d postings of deleted or amended documents in the segments", v)
	}
	if n, err := x.Purge(); err != nil || n != 0 {
		t.Fatalf("a second Purge rewrote %d segments (%v), want none", n, err)
	}
}

// voidPostings counts the postings of deleted or amended documents in x's
// sealed segments, and fails on a term without postings.
func voidPostings(t *testing.T, x *Index) int {
	t.Helper()
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := 0
	var ti termInfo
	var p postingsIter
	for _, s := range x.sealed() {
		for i := 0; i < s.nTerms; i++ {
			s.entry(i, &ti)
			p.reset(&ti)
			k := 0
			for p.Next() {
				k++
				if d := p.At(); x.tomb.Contains(d) || x.amended.Contains(d) {
					n++
				}
			}
			if err := p.Err(); err != nil {
				t.Fatal(err)
			}
			if k == 0 {
				t.Fatalf("segment %d: term %q without postings", s.num, s.termAt(i))
			}
		}
	}
	return n
}

// TestManifestVersion: a MANIFEST with no amended id stays version 1 (older
// binaries open it); with some it is version 2 and keeps them.
func TestManifestVersion(t *testing.T) {
	for _, c := range []struct {
		amended *roaring.Bitmap
		ver     byte
	}{{nil, 1}, {roaring.New(), 1}, {roaring.BitmapOf(7, 70000), 2}} {
		b, err := appendManifest(nil, &manifest{nextNum: 3, segs: []manifestSeg{{1, 1, 9}}, tomb: roaring.BitmapOf(2), amended: c.amended, sig: "s"})
		if err != nil {
			t.Fatal(err)
		}
		if b[8] != c.ver {
			t.Fatalf("amended %v: version %d, want %d", c.amended, b[8], c.ver)
		}
		m, err := decodeManifest(b)
		if err != nil {
			t.Fatal(err)
		}
		if want := c.amended; want != nil && !m.amended.Equals(want) || m.sig != "s" || !m.tomb.Equals(roaring.BitmapOf(2)) {
			t.Fatalf("round trip: %+v", m)
		}
	}
}

func u32s(ids []uint64) []uint32 {
	out := make([]uint32, len(ids))
	for i, id := range ids {
		out[i] = uint32(id)
	}
	return out
}

// BenchmarkSuccessors: the successors of the oldest 5% of 1M documents
// (100 agents, each with sessions of 20 turns), as a retention pass asks
// for them; the index holds its locks meanwhile.
//
//	go test ./index -run '^$' -bench BenchmarkSuccessors
func BenchmarkSuccessors(b *testing.B) {
	const n, agents, turns = 1_000_000, 100, 20
	x, err := Open("", Options{SessionContext: true, DisableBackgroundMerge: true}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	docs := make([]*Doc, 0, 10_000)
	for id := uint64(1); id <= n; id++ {
		a := id % agents
		docs = append(docs, &Doc{ID: id, Time: int64(id), Agent: fmt.Sprintf("a%d", a), Session: fmt.Sprintf("a%d-s%d", a, id/(agents*turns)), Text: "w1 w2"})
		if len(docs) == cap(docs) {
			if err := x.Add(docs); err != nil {
				b.Fatal(err)
			}
			docs = docs[:0]
		}
	}
	gone := roaring.New()
	gone.AddRange(1, n/20+1000) // a session straddles the edge
	if err := x.Delete(slices.Collect(func(yield func(uint64) bool) {
		for id := uint64(1); id < n/20+1000; id++ {
			if !yield(id) {
				return
			}
		}
	})); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var got []uint64
	for range b.N {
		got = x.Successors(gone)
	}
	b.ReportMetric(float64(len(got)), "successors")
}

// TestHolding: without session context, Holding names exactly the live
// documents of the filter whose text holds every term of the given text,
// across flushed, merged and mutable segments and after deletions.
func TestHolding(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	all := genCorpus(rng, 3000, 1, 60)
	x, err := Open("", Options{FlushDocs: 700, MergeMinDocs: 500, DisableBackgroundMerge: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if err := x.Add(all); err != nil {
		t.Fatal(err)
	}
	deleted := map[uint64]bool{}
	var del []uint64
	for _, d := range all {
		if rng.IntN(10) == 0 {
			del = append(del, d.ID)
			deleted[d.ID] = true
		}
	}
	if err := x.Delete(del); err != nil {
		t.Fatal(err)
	}
	an := x.opts.Analyzer
	holds := func(d *Doc, terms []string) bool {
		own := an.Terms(nil, d.Text)
		for _, t := range terms {
			if !slices.Contains(own, t) {
				return false
			}
		}
		return true
	}
	checked := 0
	for q := range 200 {
		text := all[rng.IntN(len(all))].Text
		if q%3 == 0 { // a few of its words
			f := strings.Fields(text)
			text = strings.Join(f[:min(len(f), 2)], " ")
		}
		filter, err := x.Filter(&Filter{Agents: []string{fmt.Sprintf("a%d", rng.IntN(4))}})
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := x.Holding(text, filter)
		if err != nil {
			t.Fatal(err)
		}
		terms := an.Terms(nil, text)
		if !ok {
			if len(terms) != 0 {
				t.Fatalf("%q: not ok with terms %v", text, terms)
			}
			continue
		}
		want := roaring.New()
		for _, d := range all {
			if !deleted[d.ID] && filter.Contains(uint32(d.ID)) && holds(d, terms) {
				want.Add(uint32(d.ID))
			}
		}
		if !got.Equals(want) {
			t.Fatalf("%q: Holding = %v, want %v", text, got.ToArray(), want.ToArray())
		}
		checked += int(want.GetCardinality())
	}
	if checked == 0 {
		t.Fatal("no query held by any document: the test checks nothing")
	}
}

// TestReindexConcurrent: Reindex (built anew and grown) while documents
// are added and searched on other goroutines; run under the race detector
// by make test. Afterwards the searches equal the oracle's.
func TestReindexConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 5))
	const vocab = 200
	all := genCorpus(rng, 3000, 1, vocab)
	src := &memSource{}
	opts := Options{SessionContext: true, FlushDocs: 500, MergeMinDocs: 400}
	x, err := Open("", opts, src)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	src.docs = all // the log holds them before they are indexed
	if err := x.Add(all[:1500]); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // the adder
		for n := 1500; n < len(all); n += 100 {
			if err := x.Add(all[n : n+100]); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Go(func() { // a searcher
		qr := rand.New(rand.NewPCG(3, 3))
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := x.Search(randQuery(qr, vocab), nil, 10, nil); err != nil {
				t.Error(err)
				return
			}
		}
	})
	deleted := map[uint64]bool{}
	for round := range 6 {
		lo := 200 * round
		var del []uint64
		for _, d := range all[lo : lo+200] {
			if rng.IntN(8) == 0 {
				del = append(del, d.ID)
				deleted[d.ID] = true
			}
		}
		if err := x.Delete(del); err != nil {
			t.Fatal(err)
		}
		if _, err := x.ReindexFunc(func() ([]uint64, error) {
			return x.Successors(roaring.BitmapOf(u32s(del)...)), nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
	o := &oracle{docs: all, deleted: deleted, an: opts.EnsureDefaults().Analyzer, k1: 1.2, b: 0.75, context: true, own: 1, inherited: 1}
	checkOracle(t, rng, x, o, all, vocab, 60, "after", true)
}
