package engine

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestInflectionSiblings(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"what fixed the consumer rebalancing?", []string{"rebalance"}},
		{"how many rebalances", []string{"rebalanced"}},
		{"any experience with Rust?", []string{"experienced"}},
		{"what referenced it?", []string{"reference"}},
		{"Experiences and experiencing", []string{"experienced", "experience"}},
		// Porter2 keeps these together already: nothing to add.
		{"balanced balance", nil},
		{"organized the meeting", []string{"organised"}},
		{"", nil},
		// An irregular verb's base form after do-support searches its
		// other forms; a past form in the question does not.
		{"When did Caroline go to the support group?", []string{"went", "gone"}},
		{"what did I buy last week", []string{"bought"}},
		{"what came out of the meeting?", nil},
		{"I won't go", nil},
		// The other of the British and American spellings.
		{"who will organise the offsite?", []string{"organize"}},
		{"analyzed", []string{"analysed"}},
		{"raised seized travelled", nil},
	} {
		if got, irr := inflectionSiblings(c.text); !slices.Equal(append(got, irr...), c.want) {
			t.Errorf("inflectionSiblings(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// TestInflectionSiblingsRecall: a question saying "rebalancing" finds the
// record saying "rebalances" (Porter2: "rebalanc" against "rebal"), and
// does not without the siblings.
func TestInflectionSiblingsRecall(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	recs := turns("a", "ops", now.Add(-48*time.Hour),
		[2]string{"user", "We set max.poll.records to 50 and the rebalances stopped."},
		[2]string{"user", "The consumer lag dashboard is in Grafana."},
		[2]string{"user", "Payments deploys go out on Tuesdays."},
		[2]string{"user", "Remind me to renew the TLS certificate."})
	db := memStore(t, now, recs)
	first := func() string {
		return topText(t, db, Query{Agent: "a", Text: "what fixed the rebalancing?", K: 3, Now: now})
	}
	if got := first(); got != recs[0].Text {
		t.Errorf("first %q, want the rebalances", got)
	}
	noInflect = true
	defer func() { noInflect = false }()
	if got := first(); got == recs[0].Text {
		t.Errorf("the rebalances first without the siblings too: the test no longer tests them")
	}
}

func TestIrregularParses(t *testing.T) {
	m, err := parseIrregular(irregularText)
	if err != nil {
		t.Fatal(err)
	}
	if got := m["went"]; !slices.Equal(got, []string{"go", "went", "gone"}) {
		t.Errorf("went: %q", got)
	}
	for _, bad := range []string{"go\n", "go went\ngo gone\n", "Go Went\n"} {
		if _, err := parseIrregular(bad); err == nil {
			t.Errorf("parseIrregular(%q): no error", bad)
		}
	}
}

// TestIrregularRecall: "what did I write?" finds "I bought ...", and does
// not without the irregular forms.
func TestIrregularRecall(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	var recs []Record
	for i, text := range []string{
		"The weather was awful all weekend.",
		"My sister visits in January.",
		"I wrote a long letter to the landlord.",
		"The team offsite is planned for March.",
		"Remind me to call the dentist on Monday.",
		"The kids start swimming lessons next week.",
	} {
		recs = append(recs, turns("a", fmt.Sprintf("chat-%d", i), now.Add(-time.Duration(48-i)*time.Hour), [2]string{"user", text})...)
	}
	db := memStore(t, now, recs)
	first := func() string {
		return topText(t, db, Query{Agent: "a", Text: "what did I write?", K: 3, Now: now})
	}
	if got := first(); got != recs[2].Text {
		t.Errorf("first %q, want the letter", got)
	}
	noIrregular = true
	defer func() { noIrregular = false }()
	if got := first(); got == recs[2].Text {
		t.Errorf("the letter first without the irregular forms too: the test no longer tests them")
	}
}

// TestSpellingRecall: a question in British spelling finds the record in
// American spelling ("minimised" / "minimized": Porter2 "minimis" /
// "minim"), and does not without the sibling.
func TestSpellingRecall(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	var recs []Record
	for i, text := range []string{
		"The weather was awful all weekend.",
		"Priya minimized the risk by testing early.",
		"My sister visits in January.",
		"The team offsite is planned for March.",
	} {
		recs = append(recs, turns("a", fmt.Sprintf("chat-%d", i), now.Add(-time.Duration(48-i)*time.Hour), [2]string{"user", text})...)
	}
	db := memStore(t, now, recs)
	first := func() string {
		return topText(t, db, Query{Agent: "a", Text: "who minimised it?", K: 3, Now: now})
	}
	if got := first(); got != recs[1].Text {
		t.Errorf("first %q, want Priya", got)
	}
	noSpelling = true
	defer func() { noSpelling = false }()
	if got := first(); got == recs[1].Text {
		t.Errorf("Priya first without the spelling sibling too: the test no longer tests it")
	}
}
