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
