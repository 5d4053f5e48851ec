package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lazymem/lazymem/engine/embed"
	"github.com/lazymem/lazymem/internal/testembed"
)

// TestSemanticFill: a question in other words than its answer shares a
// word with a few other records, so BM25 finds enough of them that the
// K/2 fallback does not run; with a semantic embedder the fallback pass
// fills the unused candidate budget with the latest records and the
// embedder finds the answer among them. Without the fill the answer is no
// candidate at all; with the lexical hash embedder the fill does not run.
func TestSemanticFill(t *testing.T) {
	now := time.Date(2026, 12, 20, 18, 0, 0, 0, time.UTC)
	t0 := now.Add(-48 * time.Hour)
	const answer = "From January, Paws & Co. delivers the kibble every Monday."
	// One note a session: no session neighbour of a hit is proposed.
	recs := turns("shelter", "", t0,
		[2]string{"user", "Happy new year to the whole team, a little early!"},
		[2]string{"user", "The new website goes live next week."},
		[2]string{"user", "Last year we placed 300 dogs in homes."},
		[2]string{"user", "The new intern starts on Monday."},
		[2]string{"user", "Year-end inventory is on Friday."},
		[2]string{"user", "We need a new printer for the front desk."},
		[2]string{"user", "Volunteers walk the dogs at seven."},
		[2]string{"user", answer},
		[2]string{"user", "The vet visits on Thursdays."},
		[2]string{"user", "Please keep the back gate closed."},
	)
	for i := range recs {
		recs[i].Session = fmt.Sprintf("note-%d", i)
	}
	emb := testembed.Concepts{{"kibble", "dog food", "pet food"}, {"january", "new year"}, {"supply", "supplies", "deliver"}}
	// Expansion off: the glossary's mates bridge "pet food" and "kibble"
	// lexically; the test is about what the embedder finds beyond BM25.
	q := Query{Agent: "shelter", Text: "Who will supply pet food after the new year?", K: 10, Now: now, NoExpansion: true}
	open := func(e embed.Embedder) *DB {
		return memStoreWith(t, Options{Embedder: e, Clock: func() time.Time { return now }}, recs)
	}
	find := func(db *DB) (rank int, st RecallStats) {
		res, err := db.Recall(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range res.Memories {
			if m.Text == answer {
				return i + 1, res.Stats
			}
		}
		return 0, res.Stats
	}
	db := open(emb)
	rank, st := find(db)
	if 2*st.Hits < q.K {
		t.Fatalf("%d BM25 hits: the K/2 fallback runs, the test proves nothing", st.Hits)
	}
	if rank == 0 || rank > 3 || st.Fallback == 0 {
		t.Errorf("semantic embedder: answer at rank %d (0: absent), fallback %d records, want it in the top 3 through the fill", rank, st.Fallback)
	}
	fallbackFill = false
	rank, st = find(db)
	fallbackFill = true
	if rank != 0 || st.Fallback != 0 {
		t.Errorf("without the fill: answer at rank %d, fallback %d records; want no answer, no fallback (the test cannot fail)", rank, st.Fallback)
	}
	h, err := embed.NewHash(embed.HashOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, st := find(open(h)); st.Fallback != 0 {
		t.Errorf("hash embedder: %d records from the fallback pass, want none (the fill is for semantic embedders)", st.Fallback)
	}
	// The hash embedder behind a wrapper of another name that passes its
	// recommendation on is still lexical (it used to be recognised by
	// its name); one that does not is taken for a semantic embedder, as
	// embed.FusionAdvisor says.
	if _, st := find(open(passing{renamed{h}})); st.Fallback != 0 {
		t.Errorf("the hash embedder renamed, its advice passed on: %d records from the fallback pass, want none", st.Fallback)
	}
	if _, st := find(open(renamed{h})); st.Fallback == 0 {
		t.Errorf("the hash embedder renamed, no advice: no fallback pass, want the fill of a semantic embedder")
	}
}

// renamed is an embedder under another name ("metered"), without the
// inner one's fusion advice.
type renamed struct{ embed.Embedder }

func (renamed) Name() string { return "metered" }

// passing is a wrapper that passes the inner embedder's advice on.
type passing struct{ renamed }

func (a passing) RecommendedFusion() embed.Fusion {
	return a.Embedder.(embed.FusionAdvisor).RecommendedFusion()
}
