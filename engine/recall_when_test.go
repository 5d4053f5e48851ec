package engine

import (
	"context"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestWhenQuestion: a when question prefers the record that states a time
// over one that shares more of its words; the same words asked as a what
// question do not; the time words are recognised in English and Chinese.
func TestWhenQuestion(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	db, err := Open("s", Options{FS: vfs.NewMem(), DisableDiskCache: true, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	recs := []Record{
		{Agent: "a", Session: "s1", Role: "mel", Time: now.Add(-72 * time.Hour), Text: "The charity race was rewarding."},
		{Agent: "a", Session: "s2", Role: "mel", Time: now.Add(-48 * time.Hour), Text: "I did the charity race last Saturday with my sister and it was rewarding."},
		{Agent: "a", Session: "s3", Role: "mel", Time: now.Add(-24 * time.Hour), Text: "Painting is how I relax."},
	}
	if _, err := db.AppendBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	first := func(text string) string {
		t.Helper()
		res, err := db.Recall(ctx, Query{Agent: "a", Text: text, K: 2, Mode: ModeSparse})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 {
			t.Fatalf("%q: no memory", text)
		}
		return res.Memories[0].Session
	}
	if got := first("When did Mel run the charity race?"); got != "s2" {
		t.Errorf("when question: first memory of %s, want s2 (states a time)", got)
	}
	if got := first("What did Mel say about the charity race?"); got != "s1" {
		t.Errorf("what question: first memory of %s, want s1 (the most words)", got)
	}
	for _, c := range []struct {
		text string
		want bool
	}{
		{"We decided to launch the mobile app on March 20.", true},
		{"I've had them for 3 years now", true},
		{"想腊月二十七出发，正月初六回来。", true},
		{"会员积分系统十一月二十八号上线。", true},
		{"I marched for veterans' rights", false},
		{"the marketing team has 20 people", false},
		{"Painting is how I relax.", false},
	} {
		if got := timeStatement.MatchString(c.text); got != c.want {
			t.Errorf("timeStatement(%q) = %v, want %v", c.text, got, c.want)
		}
	}
	for _, c := range []struct {
		text string
		want bool
	}{
		{"When did Melanie paint a sunrise?", true},
		{"How long has Nate had his turtles?", true},
		{"In which year did Audrey adopt her dogs?", true},
		{"会员积分系统什么时候上线？", true},
		{"What did Melanie paint?", false},
		{"Say when you are ready", false},
	} {
		if got := whenQuestion.MatchString(c.text); got != c.want {
			t.Errorf("whenQuestion(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}
