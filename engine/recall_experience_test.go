package engine

import "testing"

// TestExperienceQuestion: an experience question prefers the record that
// narrates one over a record that talks about the topic with as many of
// its words; the same words asked of one thing do not; the question and
// narration patterns.
func TestExperienceQuestion(t *testing.T) {
	first := ruleStore(t,
		"Charity events are so rewarding for everyone.",
		"I joined charity events downtown, so rewarding.",
		"Painting is how I relax.")
	if got := first("What charity events has Mel found rewarding?"); got != "s2" {
		t.Errorf("experience question: first memory of %s, want s2 (narrates one)", got)
	}
	if got := first("Why are charity events rewarding for Mel?"); got != "s1" {
		t.Errorf("why question: first memory of %s, want s1 (the most words)", got)
	}
	checkMatches(t, "experienceQuestion", experienceQuestion, []matchCase{
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
	})
	checkMatches(t, "narration", narration.MatchString, []matchCase{
		{"Last week I went to an LGBTQ+ pride parade.", true},
		{"I just signed up for a pottery class yesterday.", true},
		{"We've been to Paris twice.", true},
		{"I love painting landscapes.", false},
		{"You went to the parade?", false},
		{"Wow, that parade looked amazing!", false},
	})
}
