package engine

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestEmptyWindowSearchedAsWords: a parsed time window that holds no
// record is dropped and its expression searched as words ("一月中旬" is
// what was said, not when); a window that holds records still filters.
func TestEmptyWindowSearchedAsWords(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	recs := []Record{
		{Role: "陆阳", Text: "天气预报说一月中旬有寒潮，户外太冷了。", Time: now.Add(-14 * time.Hour)},
		{Role: "苏晴", Text: "嗯嗯。", Time: now.Add(-14*time.Hour + time.Minute)},
		{Role: "方婷", Text: "今天上午把场地定下来了。", Time: now.Add(-2 * time.Hour)},
	}
	for i := range recs {
		recs[i].Agent, recs[i].Session = "a", "s"
	}
	db := memStore(t, now, recs)
	for _, mode := range []Mode{ModeSparse, ModeLazy} {
		res, err := db.Recall(ctx, Query{Agent: "a", Text: "谁说一月中旬有寒潮？", K: 3, Mode: mode, Now: now, ParseTime: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 || res.Memories[0].Text != recs[0].Text || res.Stats.TimeExpr != "" || !res.Stats.Since.IsZero() {
			t.Fatalf("%s: got %v (time expr %q, since %v, notes %v), want the cold-wave turn first and no window", mode, res.Memories, res.Stats.TimeExpr, res.Stats.Since, res.Stats.Notes)
		}
		// A window that holds a record still filters.
		res, err = db.Recall(ctx, Query{Agent: "a", Text: "今天上午定了什么？", K: 3, Mode: mode, Now: now, ParseTime: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Stats.TimeExpr == "" || len(res.Memories) != 1 || res.Memories[0].Text != recs[2].Text {
			t.Fatalf("%s: this morning: got %v (time expr %q), want the morning's turn alone", mode, res.Memories, res.Stats.TimeExpr)
		}
	}
}

// TestEmptyWindowStaysWhenUnsaid: an empty window whose expression no
// record says stays a window: a quiet yesterday answers nothing, not last
// week's records.
func TestEmptyWindowStaysWhenUnsaid(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	db := memStore(t, now, []Record{{Agent: "a", Session: "s", Role: "u", Text: "we discussed the launch plan", Time: now.Add(-7 * 24 * time.Hour)}})
	res, err := db.Recall(context.Background(), Query{Agent: "a", Text: "what did we discuss yesterday?", K: 3, Now: now, ParseTime: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) != 0 || res.Stats.TimeExpr == "" {
		t.Fatalf("got %v (time expr %q, notes %v), want nothing from an empty yesterday", res.Memories, res.Stats.TimeExpr, res.Stats.Notes)
	}
}

// TestUnmatchedDayWindow: a weekday whose window holds records sharing
// none of the question's words names the day of what is asked, not of
// what was said: the window is dropped when a record outside it says the
// day with the question's words ("马老师礼拜六加的那堂课在哪上？" on a
// Thursday; the class is this Saturday's, named on Wednesday).
func TestUnmatchedDayWindow(t *testing.T) {
	now := time.Date(2027, 3, 18, 10, 0, 0, 0, time.Local) // a Thursday
	recs := append(turns("a", "sat", now.AddDate(0, 0, -5),
		[2]string{"user", "今天在校区门口摆摊招生，留了电话的四十多个。"},
		[2]string{"assistant", "记下了：校区门口招生，留电话四十多人。"}),
		turns("a", "wed", now.AddDate(0, 0, -1),
			[2]string{"user", "马老师礼拜六上午加一堂课，九点到十一点，在二楼教室讲错题。"},
			[2]string{"assistant", "好的。"})...)
	db := memStore(t, now, recs)
	first := func(text string) string {
		return topText(t, db, Query{Agent: "a", Text: text, K: 3, Now: now, ParseTime: true, Mode: ModeSparse})
	}
	if got := first("马老师礼拜六加的那堂课在哪上？"); got != recs[2].Text {
		t.Errorf("got %q first, want Wednesday's class", got)
	}
	noUnmatchedWindow = true
	defer func() { noUnmatchedWindow = false }()
	if got := first("马老师礼拜六加的那堂课在哪上？"); got == recs[2].Text {
		t.Errorf("Wednesday's class first without the rule too: the test no longer tests it")
	}
}

// TestNearestTheMoment: a question that names a moment and asks nothing
// else ("what were we discussing about two hours ago?") ranks the turns
// nearest it first, not the window's latest.
func TestNearestTheMoment(t *testing.T) {
	now := time.Date(2026, 12, 1, 11, 30, 0, 0, time.UTC)
	var recs []Record
	for i := range 13 { // 08:40 to 10:40, every ten minutes
		recs = append(recs, Record{Agent: "a", Session: "m", Role: "ann", Time: now.Add(time.Duration(-170+10*i) * time.Minute),
			Text: fmt.Sprintf("item %d: %s", i, []string{"the venue holds four hundred", "the budget goes up", "rehearsals move to Thursday", "posters are due Friday"}[i%4])})
	}
	db := memStore(t, now, recs)
	res, err := db.Recall(context.Background(), Query{Agent: "a", Text: "what did we say about two hours ago?", K: 3, Now: now, ParseTime: true})
	if err != nil {
		t.Fatal(err)
	}
	moment := now.Add(-2 * time.Hour)
	for _, m := range res.Memories {
		if d := m.Time.Sub(moment); d < -20*time.Minute || d > 20*time.Minute {
			t.Fatalf("got %v at %v among the top 3 (notes %v), want turns within 20 minutes of %v", m.Text, m.Time, res.Stats.Notes, moment)
		}
	}
}
