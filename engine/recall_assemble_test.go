package engine

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestAssembleRefillsUnreadable: a returned candidate that cannot be read
// any more (deleted from the log after the index proposed it) gives its
// place to the next best: the recall still returns K memories, the others
// in the order they had. The recall is asked twice first, so that its
// candidates' facts and vectors are known and the top K are read only in
// assemble.
func TestAssembleRefillsUnreadable(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	db, err := Open(t.TempDir(), Options{Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var recs []Record
	for i := range 40 {
		recs = append(recs, Record{Agent: "a", Session: fmt.Sprintf("s%d", i/10), Time: now.Add(-time.Duration(40-i) * time.Hour),
			Text: fmt.Sprintf("the alpha rollout step %d needs review by team %d", i, i%7)})
	}
	if _, err := db.AppendBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	q := Query{Agent: "a", Text: "alpha rollout review team 3", K: 5}
	ids := func() []uint64 {
		res, err := db.Recall(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []uint64
		for _, m := range res.Memories {
			out = append(out, m.ID)
		}
		return out
	}
	ids()
	q.K = 6
	want := ids()
	q.K = 5
	if got := ids(); !slices.Equal(got, want[:5]) {
		t.Fatalf("top 5 %v, top 6 %v", got, want)
	}
	if err := db.log.Delete(ctx, []uint64{want[0]}); err != nil {
		t.Fatal(err)
	}
	p, err := db.recall(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, m := range p.res.Memories {
		got = append(got, m.ID)
	}
	if !slices.Equal(got, want[1:]) {
		t.Fatalf("after deleting %d from the log: %v, want %v", want[0], got, want[1:])
	}
	if i := p.pos[want[0]]; p.cands[i].fetched || !p.cands[i].fact.known() {
		t.Fatalf("the deleted candidate: fetched %v, fact known %v", p.cands[i].fetched, p.cands[i].fact.known())
	}
}
