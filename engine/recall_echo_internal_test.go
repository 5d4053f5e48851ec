package engine

import "testing"

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
