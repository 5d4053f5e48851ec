package engine_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lazymem/lazymem/engine"
)

// neighbourDB holds one dialogue whose answer turn shares no word with the
// question: the question's words are two turns before it, in the same
// speaker's previous turn, and in an unrelated session that mentions them
// more weakly.
func neighbourDB(t *testing.T) *engine.DB {
	t.Helper()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	db, err := engine.Open(t.TempDir(), engine.Options{Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	at := func(d, m int) time.Time { return now.AddDate(0, 0, -d).Add(time.Duration(m) * time.Minute) }
	recs := []engine.Record{
		{Time: at(30, 0), Agent: "a", Session: "s1", Role: "Mel", Text: "Last night we watched the meteor shower from the campsite, the meteor shower was amazing."},
		{Time: at(30, 1), Agent: "a", Session: "s1", Role: "Caro", Text: "Wow, that must have been breathtaking! Tell me more."},
		{Time: at(30, 2), Agent: "a", Session: "s1", Role: "Mel", Text: "So tiny watching it, in awe of the universe, so many little moments like that."},
		{Time: at(30, 3), Agent: "a", Session: "s1", Role: "Caro", Text: "I love that. Nature puts things in perspective."},
		{Time: at(10, 0), Agent: "a", Session: "s2", Role: "Caro", Text: "My cousin wants to see a meteor shower some day, she reads about astronomy."},
		{Time: at(10, 1), Agent: "a", Session: "s2", Role: "Mel", Text: "Tell her to try a dark place far from the city lights."},
		{Time: at(10, 2), Agent: "a", Session: "s2", Role: "Caro", Text: "Good idea, I will pass it on."},
	}
	for i := range recs {
		recs[i].Meta = map[string][]string{"key": {strings.Fields(recs[i].Session + "-" + string(rune('0'+i)))[0]}}
	}
	if _, err := db.AppendBatch(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestNeighbourLendsToAnswer: "how did Mel feel watching the meteor
// shower?" is answered two turns after the turn that names the shower; the
// neighbour rule brings that turn into the top 3 and says so in Reasons,
// while the turn that names it stays first.
func TestNeighbourLendsToAnswer(t *testing.T) {
	db := neighbourDB(t)
	res, err := db.Recall(context.Background(), engine.Query{Agent: "a", Text: "How did Mel feel while watching the meteor shower?", K: 3, Explain: true, Mode: engine.ModeSparse})
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	rank, reasons := 0, []string(nil)
	for i, m := range res.Memories {
		texts = append(texts, m.Text)
		if strings.HasPrefix(m.Text, "So tiny") {
			rank, reasons = i+1, m.Reasons
		}
	}
	if len(texts) == 0 || !strings.Contains(texts[0], "meteor shower was amazing") {
		t.Fatalf("top: %q, want the turn that names the shower first", texts)
	}
	if rank == 0 {
		t.Fatalf("the answer two turns later is not in the top 3: %q", texts)
	}
	if !slices.Contains(reasons, "session neighbours") {
		t.Errorf("answer's reasons %q: want \"session neighbours\"", reasons)
	}
}

// TestNamedDatePrior: without ParseTime, a date the question names ranks
// that day's records first but filters nothing out.
func TestNamedDatePrior(t *testing.T) {
	db := neighbourDB(t)
	day := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC) // session s2's day
	q := engine.Query{Agent: "a", Text: "what did Caro say about the meteor shower on " + day.Format("January 2, 2006") + "?", K: 7, Explain: true, Mode: engine.ModeSparse}
	res, err := db.Recall(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) < 2 {
		t.Fatalf("%d memories: the prior must not filter", len(res.Memories))
	}
	if got := res.Memories[0]; got.Session != "s2" || !slices.Contains(got.Reasons, "named date x2") {
		t.Errorf("first: %s %q %q, want s2's meteor turn boosted by the named date", got.Session, got.Text, got.Reasons)
	}
	if !slices.ContainsFunc(res.Memories, func(m engine.Memory) bool { return m.Session == "s1" }) {
		t.Errorf("no record of s1: the named date is a prior, not a window")
	}
	if res.Stats.TimeExpr != "" || !slices.ContainsFunc(res.Stats.Notes, func(n string) bool { return strings.Contains(n, "names a date") }) {
		t.Errorf("stats: time expr %q (want none: ParseTime is off), notes %q (want the named date's)", res.Stats.TimeExpr, res.Stats.Notes)
	}
	// The same question with ParseTime filters: only s2's records.
	q.ParseTime = true
	if res, err = db.Recall(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Memories {
		if m.Session != "s2" {
			t.Errorf("ParseTime: %s %q outside the window", m.Session, m.Text)
		}
	}
}

// TestNeighbourSource: the answer two turns after the hit shares no word
// with the question, so BM25 does not find it; the neighbour source
// proposes it in a dialogue (and the neighbour rule lifts it into the top
// 3), not in a meeting of three speakers; its candidates stay within
// Query.Candidates.
func TestNeighbourSource(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return now.Add(time.Duration(m-60) * time.Minute) }
	for _, c := range []struct {
		name    string
		between string // the speaker of the turn between the hit and the answer
		want    bool
	}{
		{"dialogue", "Caro", true},
		{"meeting", "Jon", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			db, err := engine.Open(t.TempDir(), engine.Options{Clock: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			recs := []engine.Record{
				{Time: at(0), Agent: "a", Session: "s1", Role: "Caro", Text: "How was your weekend away?"},
				{Time: at(1), Agent: "a", Session: "s1", Role: "Mel", Text: "We watched the meteor shower from the campsite, the meteor shower was amazing."},
				{Time: at(2), Agent: "a", Session: "s1", Role: c.between, Text: "Wow, must have been breathtaking!"},
				{Time: at(3), Agent: "a", Session: "s1", Role: "Mel", Text: "So tiny, in awe of the universe."},
				{Time: at(4), Agent: "a", Session: "s1", Role: "Caro", Text: "Nature puts things in perspective."},
				{Time: at(30), Agent: "a", Session: "s2", Role: "Caro", Text: "My cousin wants to see a meteor shower some day."},
				{Time: at(31), Agent: "a", Session: "s2", Role: "Mel", Text: "Tell her to go somewhere dark."},
			}
			if _, err := db.AppendBatch(context.Background(), recs); err != nil {
				t.Fatal(err)
			}
			for _, mode := range []engine.Mode{engine.ModeSparse, engine.ModeLazy} {
				res, err := db.Recall(context.Background(), engine.Query{Agent: "a", Text: "How did Mel feel while watching the meteor shower?", K: 3, Candidates: 5, Explain: true, Mode: mode})
				if err != nil {
					t.Fatal(err)
				}
				found := slices.ContainsFunc(res.Memories, func(m engine.Memory) bool { return strings.HasPrefix(m.Text, "So tiny") })
				if found != c.want || (res.Stats.Neighbours > 0) != c.want {
					t.Errorf("%s: answer in the top 3 %v, %d neighbours proposed; want %v", mode, found, res.Stats.Neighbours, c.want)
				}
				if res.Stats.Candidates > 5 {
					t.Errorf("%s: %d candidates, want at most Candidates (5)", mode, res.Stats.Candidates)
				}
			}
		})
	}
}
