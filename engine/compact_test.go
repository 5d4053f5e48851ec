package engine

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/lazymem/lazymem/internal/storetest"
)

// TestCompactStaleSuccessor: a record that inherited a deleted record's
// words through session context and was not indexed again (here a Forget
// stopped between the deletion and the re-indexing, as a crash or a
// retention pass over Forget's bound leaves it) matches those words until
// Compact, which indexes it again and rewrites the index's files without
// them.
func TestCompactStaleSuccessor(t *testing.T) {
	dir := t.TempDir()
	o := Options{DisableEmbedder: true}
	o.Index.FlushDocs = 2 // the words are in sealed segment files
	db, err := Open(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	ctx := context.Background()
	ids, err := db.AppendBatch(ctx, []Record{
		{Agent: "a", Session: "s", Role: "user", Text: "the quokka vault code is swordfish"},
		{Agent: "a", Session: "s", Role: "assistant", Text: "Noted, I will keep it safe."},
		{Agent: "a", Session: "s2", Role: "user", Text: "I painted a sunrise."},
	})
	if err != nil {
		t.Fatal(err)
	}
	db.mu.RLock()
	in, err := db.forgetIntent(roaring.BitmapOf(uint32(ids[0])))
	if err == nil {
		err = db.applyForget(ctx, in, false)
	}
	db.mu.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	q := Query{Agent: "a", Text: "quokka swordfish", Mode: ModeSparse, SessionTurns: -1, FallbackScan: -1, NoExpansion: true}
	matches := func() []Memory {
		t.Helper()
		r, err := db.Recall(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return r.Memories
	}
	if got := matches(); len(got) != 1 || got[0].ID != ids[1] {
		t.Fatalf("before Compact: %+v, want the reply on the words it inherited (the test cannot fail otherwise)", got)
	}
	if err := db.idx.Flush(); err != nil {
		t.Fatal(err)
	}
	term := db.opts.Index.Analyzer.Terms(nil, "swordfish")[0]
	if len(storetest.Find(storetest.Images(t, filepath.Join(dir, "index")), []byte(term))) == 0 {
		t.Fatalf("before Compact no index file holds %q: the check below cannot fail", term)
	}
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if got := matches(); len(got) != 0 {
		t.Fatalf("after Compact: %+v still matches the deleted record's words", got)
	}
	if m := db.idx.Metrics(); m.Amended != 1 {
		t.Fatalf("amended %d, want the reply", m.Amended)
	}
	if where := storetest.Find(storetest.Images(t, filepath.Join(dir, "index")), []byte(term)); len(where) != 0 {
		t.Fatalf("after Compact %q is still in %v", term, where)
	}
	r, err := db.Recall(ctx, Query{Agent: "a", Text: "keep it safe", Mode: ModeSparse})
	if err != nil || len(r.Memories) == 0 || r.Memories[0].ID != ids[1] {
		t.Fatalf("the reply itself: %+v, %v", r.Memories, err)
	}
}
