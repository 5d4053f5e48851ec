package engine

import (
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
		{"organized the meeting", nil},
		{"", nil},
	} {
		if got := inflectionSiblings(c.text); !slices.Equal(got, c.want) {
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
