package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lazymem/lazymem/engine"
)

// TestSubjectSpeaker: a question naming two speakers asks about the one
// named first ("what did Jon say about Gina's store?"): his records keep
// the speaker boost and hers do not, so his remark outranks her longer
// talk of her store; a question about both together ("Jon and Gina")
// boosts both, as before.
func TestSubjectSpeaker(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	db, err := engine.Open(t.TempDir(), engine.Options{Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	at := func(d int) time.Time { return now.AddDate(0, 0, -d) }
	recs := []engine.Record{
		{Time: at(20), Agent: "a", Session: "s1", Role: "Gina", Text: "My store opened, the store has a new shelf and the store front is painted."},
		{Time: at(20).Add(time.Minute), Agent: "a", Session: "s1", Role: "Jon", Text: "Great spot for a store, your hard work is paying off!"},
		{Time: at(10), Agent: "a", Session: "s2", Role: "Jon", Text: "The dance studio needs a new floor."},
		{Time: at(10).Add(time.Minute), Agent: "a", Session: "s2", Role: "Gina", Text: "I can help you paint the studio."},
		{Time: at(5), Agent: "a", Session: "s3", Role: "Sam", Text: "A weather report with nothing of the kind."},
	}
	if _, err := db.AppendBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	top := func(text string) (string, *engine.Result) {
		t.Helper()
		res, err := db.Recall(ctx, engine.Query{Agent: "a", Text: text, K: 3, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 {
			t.Fatalf("%q: no memory", text)
		}
		return res.Memories[0].Role, res
	}
	if role, res := top("What did Jon say about Gina's store?"); role != "Jon" {
		t.Errorf("subject question: first memory is %s's, want Jon's; notes %q", role, res.Stats.Notes)
	} else if !strings.Contains(strings.Join(res.Stats.Notes, "\n"), "about Jon") {
		t.Errorf("notes %q do not name the subject", res.Stats.Notes)
	}
	// Together: no subject, both boosted (no note).
	_, res := top("What store work have Jon and Gina done?")
	for _, n := range res.Stats.Notes {
		if strings.Contains(n, "the question is about") {
			t.Errorf("joint question took a subject: %q", n)
		}
	}
}
