package engine

import (
	"context"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// ruleStore holds three records of agent "a" in sessions s1, s2 and s3,
// written three, two and one days before a fixed now, and returns a
// function giving the session of the first memory a sparse recall of a
// question returns: the shape of every ranking rule's end-to-end test.
func ruleStore(t *testing.T, s1, s2, s3 string) func(question string) string {
	t.Helper()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	db, err := Open("s", Options{FS: vfs.NewMem(), DisableDiskCache: true, Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	recs := []Record{
		{Agent: "a", Session: "s1", Role: "mel", Time: now.Add(-72 * time.Hour), Text: s1},
		{Agent: "a", Session: "s2", Role: "mel", Time: now.Add(-48 * time.Hour), Text: s2},
		{Agent: "a", Session: "s3", Role: "mel", Time: now.Add(-24 * time.Hour), Text: s3},
	}
	if _, err := db.AppendBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	return func(question string) string {
		t.Helper()
		res, err := db.Recall(ctx, Query{Agent: "a", Text: question, K: 2, Mode: ModeSparse})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 {
			t.Fatalf("%q: no memory", question)
		}
		return res.Memories[0].Session
	}
}

// matchCase is one text and whether a rule's pattern must match it.
type matchCase struct {
	text string
	want bool
}

// checkMatches reports every case where match disagrees with want.
func checkMatches(t *testing.T, name string, match func(string) bool, cases []matchCase) {
	t.Helper()
	for _, c := range cases {
		if got := match(c.text); got != c.want {
			t.Errorf("%s(%q) = %v, want %v", name, c.text, got, c.want)
		}
	}
}
