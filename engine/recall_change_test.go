package engine

import (
	"context"
	"testing"
	"time"
)

// TestChangeEarlier checks a question about the earlier state ranks the
// original statement above the one stating the change, and that a
// question about the current state is left to supersession.
func TestChangeEarlier(t *testing.T) {
	ctx := context.Background()
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t0 := time.Date(2027, 3, 10, 20, 0, 0, 0, time.UTC)
	recs := []Record{
		{Agent: "a", Session: "s1", Role: "user", Text: "学校通知我四月十五号上一节区级公开课，内容是浮力。", Time: t0},
		{Agent: "a", Session: "s2", Role: "user", Text: "今天去超市买了点水果。", Time: t0.Add(24 * time.Hour)},
		{Agent: "a", Session: "s3", Role: "user", Text: "公开课时间变了，区里统一调整，改到四月二十二号。", Time: t0.Add(19 * 24 * time.Hour)},
	}
	if _, err := db.AppendBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []Mode{ModeSparse, ModeLazy} {
		res, err := db.Recall(ctx, Query{Agent: "a", Text: "公开课最初安排在哪一天？", K: 3, Mode: mode, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 || res.Memories[0].Text != recs[0].Text {
			t.Fatalf("%s: top %v: want the original statement first (%v)", mode, res.Memories, res.Stats.Notes)
		}
	}
	if !changeStatement.MatchString("the launch moved to Dec 15") || changeStatement.MatchString("the launch is on Dec 1") {
		t.Fatal("changeStatement: English patterns")
	}
}

// TestEarlierStateNoRecencyPrior: a question about the earlier state is
// answered by the older record on its own words; the recency prior, which
// would lift a newer record sharing fewer of them, is off for it (and on
// for the same question without the earlier-state word). Supersession
// reversed (olderFirst) is off here: it would reorder the two on its own.
func TestEarlierStateNoRecencyPrior(t *testing.T) {
	defer func(v bool) { olderFirst = v }(olderFirst)
	olderFirst = false
	ctx := context.Background()
	now := time.Date(2027, 5, 10, 20, 0, 0, 0, time.UTC)
	recs := []Record{
		{Agent: "a", Session: "s1", Role: "user", Text: "团建打算去莫干山。", Time: now.Add(-90 * 24 * time.Hour)},
		{Agent: "a", Session: "s2", Role: "user", Text: "团建打算去的人今天报个名。", Time: now.Add(-24 * time.Hour)},
		{Agent: "a", Session: "s3", Role: "user", Text: "今天去超市买了点水果。", Time: now.Add(-2 * time.Hour)},
	}
	db := memStore(t, now, recs)
	for _, mode := range []Mode{ModeSparse, ModeLazy} {
		for _, c := range []struct {
			q    string
			want int
		}{{"团建原来打算去做什么？", 0}, {"团建打算去做什么？", 1}} {
			res, err := db.Recall(ctx, Query{Agent: "a", Text: c.q, K: 3, Mode: mode, Now: now, Explain: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Memories) == 0 || res.Memories[0].Text != recs[c.want].Text {
				t.Errorf("%s %q: top %v: want %q", mode, c.q, res.Memories, recs[c.want].Text)
			}
		}
	}
}
