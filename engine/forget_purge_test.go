package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lazymem/lazymem/internal/storetest"
)

// TestForgetPurge is the forgetting acceptance test: agent A's session S is
// forgotten while four writers append to A and B; every other record is
// intact; S is absent from Get and every recall mode; no successor ranks
// on words it inherited from a forgotten turn; and after Compact no file
// of the store holds S's distinctive tokens, their index terms or their
// embedding-cache keys.
func TestForgetPurge(t *testing.T) {
	dir := t.TempDir()
	o := storeOptions()
	o.Log.SegmentRecords = 32 // S ends up in sealed, compressed segments
	o.Index.FlushDocs = 16    // and in sealed index segments
	db, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	ctx := context.Background()

	// Session S of A: distinctive tokens; session T of A: a question whose
	// answer (kept) inherits its words; B has its own sessions.
	var sRecs []Record
	for i := range 40 {
		sRecs = append(sRecs, Record{Agent: "A", Session: "S", Role: "user",
			Text: fmt.Sprintf("the quixotical flamingoes %d were marmaladed in zanzibarian crates", i)})
	}
	// Session U of B, forgotten after the first Compact: the second
	// Compact of the process (names and words counted, not walked again)
	// must purge it as the first purged S.
	var uRecs []Record
	for i := range 40 {
		uRecs = append(uRecs, Record{Agent: "B", Session: "gloamingsession-U", Role: "user",
			Text: fmt.Sprintf("the periwinkled oboists %d sang in quagmirish meadows", i)})
	}
	tQ := Record{Agent: "A", Session: "T", Role: "user", Text: "which xylophonist performed at the gazebo?"}
	tA := Record{Agent: "A", Session: "T", Role: "assistant", Text: "It was Ingrid, on Sunday."}
	var base []Record
	for i := range 60 {
		base = append(base, Record{Agent: []string{"A", "B"}[i%2], Session: fmt.Sprintf("w%d", i%3), Role: "user",
			Text: fmt.Sprintf("ordinary note number %d about the garden", i)})
	}
	all := append(append(append(append([]Record{}, base[:30]...), sRecs...), uRecs...), base[30:]...)
	all = append(all, tQ, tA)
	ids, err := db.AppendBatch(ctx, all)
	if err != nil {
		t.Fatal(err)
	}
	tQID := ids[len(ids)-2]
	// Embed S's records (they become candidates of a lazy recall).
	if _, err := db.Recall(ctx, Query{Agent: "A", Text: "quixotical flamingoes marmaladed", Mode: ModeLazy, K: 50, Candidates: 100}); err != nil {
		t.Fatal(err)
	}
	var sKeys []string
	for _, r := range sRecs {
		sKeys = append(sKeys, cacheKey("A", db.opts.Construct(&r)))
	}
	if got := db.cache.metrics().Computed; got < 40 {
		t.Fatalf("only %d texts embedded: S is not in the cache", got)
	}

	// Four writers append to A and B while S is forgotten.
	written := make([]map[uint64]Record, 4)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 4 {
		written[w] = map[uint64]Record{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				r := Record{Agent: []string{"A", "B"}[w%2], Session: "live", Role: "user",
					Text: fmt.Sprintf("writer %d line %d", w, i), Time: storeClock.Add(time.Duration(i) * time.Second)}
				id, err := db.Append(ctx, r)
				if err != nil {
					t.Error(err)
					return
				}
				r.ID = id
				written[w][id] = r
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	res, err := db.Forget(ctx, Selector{Agent: "A", Sessions: []string{"S"}})
	if err != nil {
		t.Fatal(err)
	}
	res2, err := db.Forget(ctx, Selector{IDs: []uint64{tQID}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	close(stop)
	wg.Wait()
	if res.Forgotten != 40 || res2.Forgotten != 1 || res2.Reindexed == 0 {
		t.Fatalf("forgot %+v and %+v, want 40 and 1 (with re-indexing)", res, res2)
	}

	forgotten := map[uint64]bool{tQID: true}
	for _, r := range res.Ranges {
		for id := r.First; id <= r.Last; id++ {
			forgotten[id] = true
		}
	}
	check := func(stage string) {
		t.Helper()
		n, nbytes := 0, 0
		for i, r := range all {
			id := ids[i]
			got, err := db.Get(ctx, id)
			if forgotten[id] {
				if err == nil {
					t.Fatalf("%s: forgotten record %d still served", stage, id)
				}
				continue
			}
			if err != nil || got.Text != r.Text || got.Agent != r.Agent {
				t.Fatalf("%s: record %d changed: %+v %v", stage, id, got, err)
			}
			n++
			nbytes += len(got.Text)
		}
		for _, m := range written {
			for id, r := range m {
				got, err := db.Get(ctx, id)
				if err != nil || got.Text != r.Text || got.Agent != r.Agent || !got.Time.Equal(r.Time) {
					t.Fatalf("%s: concurrently written record %d changed: %+v %v", stage, id, got, err)
				}
				n++
				nbytes += len(got.Text)
			}
		}
		if want := len(all) - len(forgotten) + len(written[0]) + len(written[1]) + len(written[2]) + len(written[3]); n != want {
			t.Fatalf("%s: %d records intact, want %d", stage, n, want)
		}
		for _, m := range []Mode{ModeSparse, ModeLazy, ModeDense} {
			for _, q := range []string{"quixotical flamingoes marmaladed zanzibarian", "xylophonist gazebo"} {
				// No fallback pass: what is checked is whether anything
				// still matches the forgotten words.
				r, err := db.Recall(ctx, Query{Agent: "A", Text: q, Mode: m, K: 100, SessionTurns: -1, FallbackScan: -1})
				if err != nil {
					t.Fatal(err)
				}
				for _, mem := range r.Memories {
					if forgotten[mem.ID] {
						t.Fatalf("%s: %s recall %q served forgotten record %d", stage, m, q, mem.ID)
					}
					if m == ModeSparse {
						t.Fatalf("%s: sparse recall %q matched record %d (%q) on forgotten words", stage, q, mem.ID, mem.Text)
					}
				}
			}
		}
		if v, ok := db.cache.getID(ids[30]); ok {
			t.Fatalf("%s: the memory tier still holds forgotten record %d's vector %v", stage, ids[30], v[:2])
		}
	}
	check("after Forget")
	tokens := []string{"quixotical", "flamingoes", "marmaladed", "zanzibarian", "xylophonist", "gazebo"}
	an := db.opts.Index.Analyzer
	var terms []string
	for _, tok := range tokens {
		terms = append(terms, an.Terms(nil, tok)...)
	}
	// Before Compact an index segment file holds the words the forgotten
	// question's answer inherited (merges keep an amended record's old
	// postings; they may drop S's with its records), so the check below
	// can fail.
	if err := db.idx.Flush(); err != nil {
		t.Fatal(err)
	}
	inherited := an.Terms(nil, "xylophonist")[0]
	if where := storetest.Find(storetest.Images(t, filepath.Join(dir, "index")), []byte(inherited)); len(where) == 0 {
		t.Fatalf("before Compact, no index file holds the inherited term %q", inherited)
	}
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	check("after Compact")

	ims := storetest.Images(t, dir)
	for _, s := range append(tokens, terms...) {
		if where := storetest.Find(ims, []byte(s)); len(where) > 0 {
			t.Errorf("%q is still in %s", s, strings.Join(where, ", "))
		}
	}
	for _, k := range sKeys {
		if where := storetest.Find(ims, []byte(k)); len(where) > 0 {
			t.Errorf("cache key %x is still in %s", k, strings.Join(where, ", "))
		}
	}
	// The scan can find things: the kept records' words are there.
	if len(storetest.Find(ims, []byte("garden"))) == 0 || len(storetest.Find(ims, []byte("Ingrid"))) == 0 {
		t.Fatal("the scan finds nothing at all: it is broken")
	}
	uWords := []string{"periwinkled", "oboists", "quagmirish", "gloamingsession-U"}
	for _, s := range uWords {
		if len(storetest.Find(ims, []byte(s))) == 0 {
			t.Fatalf("before the second Forget no file holds %q: the check below proves nothing", s)
		}
	}

	// A second Forget and Compact in the same process.
	res3, err := db.Forget(ctx, Selector{Agent: "B", Sessions: []string{"gloamingsession-U"}})
	if err != nil {
		t.Fatal(err)
	}
	if res3.Forgotten != len(uRecs) {
		t.Fatalf("forgot %+v, want %d", res3, len(uRecs))
	}
	for _, r := range res3.Ranges {
		for id := r.First; id <= r.Last; id++ {
			forgotten[id] = true
		}
	}
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	check("after the second Compact")
	ims = storetest.Images(t, dir)
	for _, s := range uWords {
		if where := storetest.Find(ims, []byte(s)); len(where) > 0 {
			t.Errorf("after the second Compact %q is still in %s", s, strings.Join(where, ", "))
		}
	}
}
