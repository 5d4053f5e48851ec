package index

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestSessionContextSmall: a turn matches the words of its session's
// previous turn, never those of another session or agent, and a deleted
// predecessor gives way to the live one before it.
func TestSessionContextSmall(t *testing.T) {
	docs := []*Doc{
		{ID: 1, Agent: "a", Session: "s", Text: "which adoption agency did you pick"},
		{ID: 2, Agent: "a", Session: "s", Text: "the one in denver"},
		{ID: 3, Agent: "a", Session: "t", Text: "lunch"},
		{ID: 4, Agent: "b", Session: "s", Text: "zebra"},
		{ID: 5, Agent: "a", Session: "", Text: "orchid"},
		{ID: 6, Agent: "a", Session: "", Text: "tulip"},
	}
	src := &memSource{docs: docs}
	x, err := Open("", Options{Analyzer: SimpleAnalyzer{}, SessionContext: true}, src)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	ids := func(q string) []uint64 {
		t.Helper()
		hits, err := x.Search(q, nil, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []uint64
		for _, h := range hits {
			out = append(out, h.ID)
		}
		return out
	}
	check := func(q string, want ...uint64) {
		t.Helper()
		if got := ids(q); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%q: hits %v, want %v", q, got, want)
		}
	}
	check("agency", 1, 2) // the answer carries the question's words
	check("denver", 2)    // and not the other way round
	check("lunch", 3)     // another session of the agent: no context
	check("zebra", 4)     // another agent's session "s": no context
	check("orchid", 5)    // no session: no context
	// Delete turn 2: the next turn of the session takes turn 1's words.
	if err := x.Delete([]uint64{2}); err != nil {
		t.Fatal(err)
	}
	src.docs = append(src.docs, &Doc{ID: 7, Agent: "a", Session: "s", Text: "ok"})
	if err := x.Add(src.docs[6:]); err != nil {
		t.Fatal(err)
	}
	check("agency", 1, 7)
	check("denver")
	if m := x.Metrics(); m.ContextErrors != 0 {
		t.Fatalf("context errors %d", m.ContextErrors)
	}
}

// TestSessionContextOracle: over a random corpus added in random batches,
// flushed into segments, reopened (the tail re-indexed from the source, the
// predecessors read back through TextSource), with deletions and a change
// of the setting (a full rebuild), every search equals a naive BM25 over
// each document's text followed by its predecessor's (seeds 3 and 4: with
// inherited terms at half the weight of own ones, BM25F-style; seeds 5 and
// 6: ContextSample, inherited terms at full and at half weight), and the
// pruned search equals the exhaustive one.
func TestSessionContextOracle(t *testing.T) {
	seeds := 6
	if testing.Short() {
		seeds = 2
	}
	for seed := 1; seed <= seeds; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			const vocab = 300
			all := genCorpus(rng, 2500, 1, vocab)
			for i, d := range all {
				if i%13 == 0 {
					d.Session = ""
				}
			}
			fs := vfs.NewMem()
			opts := Options{FS: fs, SessionContext: true, FlushDocs: 400, MergeMinDocs: 300, DisableBackgroundMerge: seed%2 == 0}
			own, inherited := 1, 1
			switch seed {
			case 3, 4: // inherited terms weigh half: 8 and 4 eighths
				opts.ContextWeight = 0.5
				own, inherited = 8, 4
			case 5: // a sample, in sixteenths
				opts.ContextSample = true
				own, inherited = 16, 16
			case 6:
				opts.ContextSample, opts.ContextWeight = true, 0.5
				own, inherited = 16, 8
			}
			src := &memSource{}
			x, err := Open("idx", opts, src)
			if err != nil {
				t.Fatal(err)
			}
			addInBatches(t, rng, x, src, all)
			o := &oracle{docs: all, deleted: map[uint64]bool{}, an: opts.EnsureDefaults().Analyzer, k1: 1.2, b: 0.75, context: true, own: own, inherited: inherited, sample: opts.ContextSample}
			compare := func(what string, x *Index) {
				t.Helper()
				checkOracle(t, rng, x, o, all, vocab, 40, what, true)
			}
			compare("live", x)
			if err := x.Close(); err != nil { // unflushed documents are rebuilt
				t.Fatal(err)
			}
			x, err = Open("idx", opts, src)
			if err != nil {
				t.Fatal(err)
			}
			// With background work off, every full segment was flushed
			// inside Add and nothing is left to rebuild.
			if m := x.Metrics(); (m.Rebuilt == 0 && !opts.DisableBackgroundMerge) || m.ContextErrors != 0 {
				t.Fatalf("reopen: rebuilt %d, context errors %d", m.Rebuilt, m.ContextErrors)
			}
			compare("reopened", x)
			// Delete 5% of the documents: the index keeps the context it
			// was built with until a rebuild.
			var del []uint64
			for _, d := range all {
				if rng.IntN(20) == 0 {
					del = append(del, d.ID)
					o.deleted[d.ID] = true
				}
			}
			if err := x.Delete(del); err != nil {
				t.Fatal(err)
			}
			if err := x.Flush(); err != nil {
				t.Fatal(err)
			}
			x.Close()
			// Switching the setting off and on rebuilds everything.
			off := opts
			off.SessionContext = false
			y, err := Open("idx", off, src)
			if err != nil {
				t.Fatal(err)
			}
			if m := y.Metrics(); m.Dropped == 0 {
				t.Fatalf("setting changed, nothing dropped: %+v", m)
			}
			o.context = false
			compare("without context", y)
			if err := y.Flush(); err != nil {
				t.Fatal(err)
			}
			y.Close()
			x, err = Open("idx", opts, src)
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			if m := x.Metrics(); m.Dropped == 0 || m.ContextErrors != 0 {
				t.Fatalf("setting back on: %+v", m)
			}
			o.context = true
			compare("rebuilt after deletions", x)
		})
	}
}

// TestSessionContextAnalyzed: with session context, Analyze (run before the
// ids are known, chunks on several goroutines) + AddAnalyzed indexes the
// same terms as Add, in batches that cut sessions across chunks and
// batches, before and after deletions.
func TestSessionContextAnalyzed(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 3))
	corpus := genCorpus(rng, 3000, 1, 300)
	for i, d := range corpus {
		if i%17 == 0 {
			d.Session = ""
		}
	}
	opts := Options{SessionContext: true, FlushDocs: 700, MergeMinDocs: 500}
	sa, sb := &memSource{}, &memSource{}
	a, err := Open("", opts, sa)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open("", opts, sb)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	check := func(what string) {
		t.Helper()
		for q := 0; q < 40; q++ {
			query := randQuery(rng, 300)
			ha, err := a.Search(query, nil, 20, nil)
			if err != nil {
				t.Fatal(err)
			}
			hb, err := b.Search(query, nil, 20, nil)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(ha) != fmt.Sprint(hb) {
				t.Fatalf("%s: query %q: Add gives %v, AddAnalyzed %v", what, query, ha, hb)
			}
		}
	}
	for lo := 0; lo < len(corpus); {
		n := []int{1, 100, 300, 700}[rng.IntN(4)]
		batch := corpus[lo:min(lo+n, len(corpus))]
		lo += len(batch)
		if lo > len(corpus)/2 && lo-len(batch) <= len(corpus)/2 {
			check("first half")
			var del []uint64
			for _, d := range corpus[:lo-len(batch)] {
				if rng.IntN(10) == 0 {
					del = append(del, d.ID)
				}
			}
			if err := a.Delete(del); err != nil {
				t.Fatal(err)
			}
			if err := b.Delete(del); err != nil {
				t.Fatal(err)
			}
		}
		sa.docs, sb.docs = corpus[:lo], corpus[:lo]
		if err := a.Add(batch); err != nil {
			t.Fatal(err)
		}
		addAnalyzedCopies(t, b, batch)
	}
	check("all")
}

// TestContextWeight: with inherited terms weaker than own ones, a statement
// outranks the short reply that inherits its words; with equal weights
// length normalisation ranks the reply first.
func TestContextWeight(t *testing.T) {
	docs := []*Doc{
		{ID: 1, Agent: "a", Session: "s", Text: "we need to talk about many things today starting with the schedule for the next weeks"},
		{ID: 2, Agent: "a", Session: "s", Text: "the quarterly budget draft is one point two million and we must cut the travel spending"},
		{ID: 3, Agent: "a", Session: "s", Text: "ok fine"},
	}
	first := func(w float64) uint64 {
		t.Helper()
		src := &memSource{}
		x, err := Open("", Options{Analyzer: SimpleAnalyzer{}, SessionContext: true, ContextWeight: w}, src)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		src.docs = docs
		if err := x.Add(docs); err != nil {
			t.Fatal(err)
		}
		hits, err := x.Search("budget", nil, 10, nil)
		if err != nil || len(hits) != 2 {
			t.Fatalf("weight %v: %v %v", w, hits, err)
		}
		return hits[0].ID
	}
	if got := first(1); got != 3 {
		t.Errorf("equal weights: %d first, want the reply (3): the case the weight is for", got)
	}
	if got := first(0.5); got != 2 {
		t.Errorf("inherited at half weight: %d first, want the statement (2)", got)
	}
	if _, err := Open("", Options{SessionContext: true, ContextWeight: 1.5}, &memSource{}); !errors.Is(err, ErrOptions) {
		t.Errorf("ContextWeight 1.5: %v", err)
	}
}

// TestContextSample: with ContextSample a short reply inherits a share of
// its long predecessor no larger than its own length, so the statement
// outranks the reply on the statement's word at full weight (which
// TestContextWeight shows the reply winning without sampling), and a
// reply never scores above its predecessor on a word it only inherits.
func TestContextSample(t *testing.T) {
	docs := []*Doc{
		{ID: 1, Agent: "a", Session: "s", Text: "we need to talk about many things today starting with the schedule for the next weeks"},
		{ID: 2, Agent: "a", Session: "s", Text: "the quarterly budget draft is one point two million and we must cut the travel spending"},
		{ID: 3, Agent: "a", Session: "s", Text: "ok fine"},
		{ID: 4, Agent: "a", Session: "s", Text: "noted"},
		{ID: 5, Agent: "b", Session: "t", Text: "which adoption agency did you pick"},
		{ID: 6, Agent: "b", Session: "t", Text: "the one in denver we visited twice before we decided"},
	}
	src := &memSource{}
	x, err := Open("", Options{Analyzer: SimpleAnalyzer{}, SessionContext: true, ContextSample: true}, src)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	src.docs = docs
	if err := x.Add(docs); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q    string
		want []uint64
	}{
		{"budget", []uint64{2, 3}}, // the statement first, then its reply
		{"ok", []uint64{3, 4}},     // "noted" inherits half of "ok fine"
		{"agency", []uint64{5, 6}}, // a long answer inherits its whole question, below it
		{"schedule", []uint64{1, 2}},
	} {
		hits, err := x.Search(c.q, nil, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []uint64
		for _, h := range hits {
			got = append(got, h.ID)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: got %v, want %v (%v)", c.q, got, c.want, hits)
		}
	}
	// The reply's length is its own plus at most as much inherited.
	x.mu.RLock()
	dl := x.mut.docLen(3)
	x.mu.RUnlock()
	if want := uint32(sampleScale * (2 + 2)); dl != want {
		t.Errorf("reply length %d, want %d (own 2 words and 2 inherited, in sixteenths)", dl, want)
	}
}
