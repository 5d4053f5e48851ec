package engine_test

import (
	"context"
	"testing"

	"github.com/lazymem/lazymem/bench/meeting"
	"github.com/lazymem/lazymem/engine"
)

// TestFeedbackMeeting: with pseudo-relevance feedback on, the bilingual
// meeting's decision questions still rank the core unit citing their
// evidence first. "What did we agree on for the launch date?" has its
// evidence in Chinese; its best English hits hold only "date", and before
// the coverage guard their words (also, give, time, budget) became
// feedback terms and ranked an action item first.
func TestFeedbackMeeting(t *testing.T) {
	ctx := context.Background()
	m, err := meeting.Generate(meeting.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	db := openT(t, t.TempDir(), nil)
	defer db.Close()
	ids := ingestMeeting(t, db, m)
	if _, err := db.EndSession(ctx, "meet", "review"); err != nil {
		t.Fatal(err)
	}
	for _, qt := range []string{
		"我们关于产品上线时间达成了什么共识？",
		"预算问题最后怎么处理的？",
		"What did we agree on for the launch date?",
	} {
		var q *meeting.Question
		for i := range m.Questions {
			if m.Questions[i].Text == qt {
				q = &m.Questions[i]
			}
		}
		if q == nil {
			t.Fatalf("question %q not in the meeting", qt)
		}
		res := recall(t, db, engine.Query{Agent: "meet", Text: qt, K: 10, FeedbackDocs: 2})
		if len(res.Memories) == 0 {
			t.Fatalf("%q: no memories", qt)
		}
		top := res.Memories[0]
		want := ids[m.Keys[q.Evidence[0]]]
		if top.Kind != engine.KindCore || top.Unit == nil || !containsID(top.Unit.SourceIDs, want) {
			t.Errorf("%q with feedback: first memory %s %q, want the core unit citing %d (notes %q)", qt, top.Kind, top.Text, want, res.Stats.Notes)
		}
	}
}
