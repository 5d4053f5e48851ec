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

// ruleFinds checks that a question finds want (one of texts, each a user
// turn of a session of its own, a day apart) first with a rule and not
// without it (*off set): a test that fails when the rule goes.
func ruleFinds(t *testing.T, off *bool, question string, want int, texts ...string) {
	t.Helper()
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	var recs []Record
	for i, text := range texts {
		recs = append(recs, turns("a", fmt.Sprintf("chat-%d", i), now.Add(-time.Duration(len(texts)-i)*24*time.Hour), [2]string{"user", text})...)
	}
	db := memStore(t, now, recs)
	first := func() string { return topText(t, db, Query{Agent: "a", Text: question, K: 3, Now: now}) }
	if got := first(); got != texts[want] {
		t.Errorf("%q: first %q, want %q", question, got, texts[want])
	}
	*off = true
	defer func() { *off = false }()
	if got := first(); got == texts[want] {
		t.Errorf("%q: %q first without the rule too: the test no longer tests it", question, texts[want])
	}
}

// everyday is the filler of the rules' recall tests.
var everyday = []string{
	"The weather was awful all weekend.",
	"My sister visits in January.",
	"The team offsite is planned for March.",
	"Remind me to call the dentist on Monday.",
}

// TestInflectionSiblingsRecall: a question saying "rebalancing" finds the
// record saying "rebalances" (Porter2: "rebalanc" against "rebal").
func TestInflectionSiblingsRecall(t *testing.T) {
	ruleFinds(t, &noInflect, "what fixed the rebalancing?", 0,
		append([]string{"We set max.poll.records to 50 and the rebalances stopped."}, everyday...)...)
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

// TestIrregularRecall: "what did I write?" finds "I wrote ...".
func TestIrregularRecall(t *testing.T) {
	ruleFinds(t, &noIrregular, "what did I write?", 0,
		append([]string{"I wrote a long letter to the landlord."}, everyday...)...)
}

// TestSpellingRecall: a question in British spelling finds the record in
// American spelling ("minimised" / "minimized": Porter2 "minimis" /
// "minim").
func TestSpellingRecall(t *testing.T) {
	ruleFinds(t, &noSpelling, "who minimised it?", 0,
		append([]string{"Priya minimized the risk by testing early."}, everyday...)...)
}

// BenchmarkInflectionSiblings: the rules' cost on a question, beside a
// recall's ~1 ms.
func BenchmarkInflectionSiblings(b *testing.B) {
	qs := []string{
		"When did Caroline go to the LGBTQ support group after she organised the charity run?",
		"what fixed the consumer rebalancing on the payments cluster yesterday?",
		"上周三开会定的上线时间是哪天？",
	}
	theIrregular()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		inflectionSiblings(qs[i%len(qs)])
	}
}
