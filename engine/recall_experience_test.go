package engine

import (
	"context"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestExperienceQuestion: an experience question prefers the record that
// narrates one over a record that talks about the topic with as many of
// its words; the same words asked of one thing do not; the question and
// narration patterns.
func TestExperienceQuestion(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	db, err := Open("s", Options{FS: vfs.NewMem(), DisableDiskCache: true, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	recs := []Record{
		{Agent: "a", Session: "s1", Role: "mel", Time: now.Add(-72 * time.Hour), Text: "Charity events are so rewarding for everyone."},
		{Agent: "a", Session: "s2", Role: "mel", Time: now.Add(-48 * time.Hour), Text: "I joined charity events downtown, so rewarding."},
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
	if got := first("What charity events has Mel found rewarding?"); got != "s2" {
		t.Errorf("experience question: first memory of %s, want s2 (narrates one)", got)
	}
	if got := first("Why are charity events rewarding for Mel?"); got != "s1" {
		t.Errorf("why question: first memory of %s, want s1 (the most words)", got)
	}
	for _, c := range []struct {
		text string
		want bool
	}{
		{"What LGBTQ+ events has Caroline participated in?", true},
		{"Which cities has Jon visited?", true},
		{"What books has Tim read?", true},
		{"What has Melanie painted?", true},
		{"How many times has Joanna found new hiking trails?", true},
		{"What instruments does Melanie play?", true},
		{"What kind of books does Nate enjoy?", false},
		{"What is Caroline's identity?", false},
		{"What does Melanie do to destress?", false},
		{"Why did Gina start her store?", false},
		{"谁去过北京？", false},
	} {
		if got := experienceQuestion(c.text); got != c.want {
			t.Errorf("experienceQuestion(%q) = %v, want %v", c.text, got, c.want)
		}
	}
	for _, c := range []struct {
		text string
		want bool
	}{
		{"Last week I went to an LGBTQ+ pride parade.", true},
		{"I just signed up for a pottery class yesterday.", true},
		{"We've been to Paris twice.", true},
		{"I love painting landscapes.", false},
		{"You went to the parade?", false},
		{"Wow, that parade looked amazing!", false},
	} {
		if got := narration.MatchString(c.text); got != c.want {
			t.Errorf("narration(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}
