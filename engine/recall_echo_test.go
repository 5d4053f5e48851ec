package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lazymem/lazymem/engine"
)

// TestAssistantEchoes: in a chat with an assistant, the user's statement
// passes the assistant's shorter echo of it, the assistant's answer passes
// the user's question it answers, and the details the user gives when the
// assistant asks pass the opening; between two people (the same texts,
// other roles) no rule applies.
func TestAssistantEchoes(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	texts := [][2]string{
		{"u", "We signed Lily up for piano lessons with a teacher called Mrs Wang, every Saturday at ten in the morning at the music school."},
		{"a", "Noted: Lily's piano lessons are Saturdays at ten."},
		{"u", "Do the ferry tickets to the island need booking ahead?"},
		{"a", "Yes, book them on the harbour app at least three days before the holiday."},
		{"u", "The weather was lovely and the hotel breakfast was good."},
		{"a", "Glad to hear the breakfast was good."},
		{"u", "My knee hurt after the long walk on the beach."},
		{"a", "Rest it for a day and keep the walks short."},
		{"u", "Our holiday plans changed."},
		{"a", "What happened?"},
		{"u", "We will drive to my mother's instead of taking the train, so the cat can come along."},
		{"a", "Driving with the cat sounds like a good idea."},
	}
	open := func(user, assistant string) *engine.DB {
		t.Helper()
		db, err := engine.Open(t.TempDir(), engine.Options{Clock: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		var recs []engine.Record
		for i, tx := range texts {
			role := user
			if tx[0] == "a" {
				role = assistant
			}
			recs = append(recs, engine.Record{Time: now.Add(time.Duration(i-20) * time.Minute), Agent: "a", Session: "s1", Role: role, Text: tx[1]})
		}
		if _, err := db.AppendBatch(ctx, recs); err != nil {
			t.Fatal(err)
		}
		return db
	}
	first := func(db *engine.DB, q string) (string, []string) {
		t.Helper()
		res, err := db.Recall(ctx, engine.Query{Agent: "a", Text: q, K: 3, Explain: true, NoExpansion: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 {
			t.Fatalf("%q: no memory", q)
		}
		return res.Memories[0].Text, res.Memories[0].Reasons
	}
	chat := open("user", "assistant")
	if got, why := first(chat, "What about Lily's piano lessons?"); !strings.HasPrefix(got, "We signed Lily") {
		t.Errorf("echo: first memory %q (%q), want the user's statement", got, why)
	}
	if got, why := first(chat, "Do the ferry tickets need booking ahead?"); !strings.HasPrefix(got, "Yes, book them") {
		t.Errorf("answer: first memory %q (%q), want the assistant's answer", got, why)
	}
	if got, why := first(chat, "How did our holiday plans change?"); !strings.HasPrefix(got, "We will drive") {
		t.Errorf("opening: first memory %q (%q), want the details after the assistant's question", got, why)
	}
	// A question to the assistant asks for its own words: no echo rule.
	if got, why := first(chat, "What did you note about Lily's piano lessons?"); !strings.HasPrefix(got, "Noted:") {
		t.Errorf("question to the assistant: first memory %q (%q), want the assistant's note", got, why)
	}
	people := open("Ann", "Bob")
	if got, why := first(people, "What about Lily's piano lessons?"); !strings.HasPrefix(got, "Noted:") {
		t.Errorf("between people: first memory %q (%q), want the reply (no echo rule)", got, why)
	}
	if got, why := first(people, "Do the ferry tickets need booking ahead?"); !strings.HasPrefix(got, "Do the ferry") {
		t.Errorf("between people: first memory %q (%q), want the question (no answer rule)", got, why)
	}
	if got, why := first(people, "How did our holiday plans change?"); !strings.HasPrefix(got, "Our holiday plans") {
		t.Errorf("between people: first memory %q (%q), want the opening (no rule)", got, why)
	}
}
