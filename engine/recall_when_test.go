package engine

import "testing"

// TestWhenQuestion: a when question prefers the record that states a time
// over one that shares more of its words; the same words asked as a what
// question do not; the time words are recognised in English and Chinese.
func TestWhenQuestion(t *testing.T) {
	first := ruleStore(t,
		"The charity race was rewarding.",
		"I did the charity race last Saturday with my sister and it was rewarding.",
		"Painting is how I relax.")
	if got := first("When did Mel run the charity race?"); got != "s2" {
		t.Errorf("when question: first memory of %s, want s2 (states a time)", got)
	}
	if got := first("What did Mel say about the charity race?"); got != "s1" {
		t.Errorf("what question: first memory of %s, want s1 (the most words)", got)
	}
	checkMatches(t, "timeStatement", timeStatement.MatchString, []matchCase{
		{"We decided to launch the mobile app on March 20.", true},
		{"I've had them for 3 years now", true},
		{"想腊月二十七出发，正月初六回来。", true},
		{"会员积分系统十一月二十八号上线。", true},
		{"I marched for veterans' rights", false},
		{"the marketing team has 20 people", false},
		{"Painting is how I relax.", false},
	})
	checkMatches(t, "whenQuestion", whenQuestion.MatchString, []matchCase{
		{"When did Melanie paint a sunrise?", true},
		{"How long has Nate had his turtles?", true},
		{"In which year did Audrey adopt her dogs?", true},
		{"会员积分系统什么时候上线？", true},
		{"What did Melanie paint?", false},
		{"Say when you are ready", false},
	})
}

// TestStatesTime checks that an agenda's "today" is not the time a when
// question asks for, while a time stated beside it still counts.
func TestStatesTime(t *testing.T) {
	for text, want := range map[string]bool{
		"今天主要定2.3版本补丁的时间。":                 false,
		"早上好，今天三件事：补丁时间、服务器费用、美术进度。":       false,
		"Today we decide the launch date.": false,
		"On today's agenda: the offsite.":  false,
		"那就定了，2.3版本补丁12月10日上线。":            true,
		"今天主要定补丁时间，我建议12月10日。":             true,
		"We ship today.":                       true,
		"今天上线了。":                               true,
		"Today we decide; the beta is Nov 20.": true,
	} {
		if got := statesTime(text); got != want {
			t.Errorf("statesTime(%q) = %v, want %v", text, got, want)
		}
	}
}
