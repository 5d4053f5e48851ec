package engine

import (
	"testing"
	"time"
)

func TestPureQuestion(t *testing.T) {
	for text, want := range map[string]bool{
		"鼓浪屿的船票是不是要提前买？":                           true,
		"Do the ferry tickets need booking ahead?": true,
		"Really?":                               true,
		`"Where to?"`:                           true,
		"I started kickboxing! What about you?": false,
		"我去了厦门。你呢？":                             false,
		"I booked the ferry.":                   false,
	} {
		if got := pureQuestion(text); got != want {
			t.Errorf("pureQuestion(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestBareQuestion(t *testing.T) {
	for text, want := range map[string]bool{
		"怎么了？":                     true,
		"医生怎么说？":                   true,
		"老师说了些什么？":                 true,
		"How did it go?":           true,
		"What did the doctor say?": true,
		"怎么突然决定提前了？":               false,
		"这个数值挺高的，叔叔现在有吃降压药吗？":                             false,
		"Did he say how long the knee will take to heal?": false,
	} {
		if got := bareQuestion(text); got != want {
			t.Errorf("bareQuestion(%q) = %v, want %v", text, got, want)
		}
	}
}

// TestEchoParticles: an assistant's echo that joins the user's words with
// a particle ("朵朵的钢琴课" for "朵朵报了钢琴课") still yields to the
// statement; without the particle pairs left out it outranks it.
func TestEchoParticles(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	recs := turns("a", "s1", now.Add(-48*time.Hour),
		[2]string{"user", "我们给朵朵报了钢琴课，老师姓王，每周六上午十点上课。"},
		[2]string{"assistant", "记下了：朵朵的钢琴课每周六上午十点，王老师。"},
		[2]string{"user", "一节课两百块，先报了二十节。"},
	)
	recs = append(recs, turns("a", "s2", now.Add(-24*time.Hour),
		[2]string{"user", "周末带朵朵去公园放风筝。"},
		[2]string{"assistant", "天气不错，玩得开心。"},
	)...)
	db := memStore(t, now, recs)
	q := Query{Agent: "a", Text: "朵朵的钢琴课是星期几几点？", K: 3}
	const statement = "我们给朵朵报了钢琴课，老师姓王，每周六上午十点上课。"
	if got := topText(t, db, q); got != statement {
		t.Errorf("first memory %q, want the statement %q", got, statement)
	}
	echoSkipParticles = false
	defer func() { echoSkipParticles = true }()
	if got := topText(t, db, q); got == statement {
		t.Errorf("without the particle pairs left out the statement still comes first: the test does not show the rule")
	}
}

// TestBareReplies: a question with no words of its own left (a day only)
// puts the user's statement above the assistant's reply to it; without
// the rule the reply, newer, comes first.
func TestBareReplies(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC) // a Tuesday
	recs := turns("a", "s1", now.Add(-6*24*time.Hour),
		[2]string{"user", "Move the daily standup to 9:30; 9:00 is too early for the Berlin folks."},
		[2]string{"assistant", "Standup moved to 9:30."},
	)
	recs = append(recs, turns("a", "s2", now.Add(-2*24*time.Hour),
		[2]string{"user", "Book the dentist for Friday."},
		[2]string{"assistant", "Booked."},
	)...)
	db := memStore(t, now, recs)
	for _, text := range []string{"what did we talk about last Wednesday?", "上周三我们聊了什么？"} {
		q := Query{Agent: "a", Text: text, K: 3, ParseTime: true}
		const statement = "Move the daily standup to 9:30; 9:00 is too early for the Berlin folks."
		if got := topText(t, db, q); got != statement {
			t.Errorf("%q: first memory %q, want the statement %q", text, got, statement)
		}
		bareReplies = false
		if got := topText(t, db, q); got == statement {
			t.Errorf("%q: without the rule the statement still comes first: the test does not show the rule", text)
		}
		bareReplies = true
	}
}
