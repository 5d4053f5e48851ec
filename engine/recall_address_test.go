package engine

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lazymem/lazymem/index/analysis"
)

func TestAddresses(t *testing.T) {
	for _, c := range []struct {
		text, name string
		want       int
	}{
		{"下一个，大伟爸妈。大伟你说。", "大伟", invited},
		{"大伟，你说英文，雯雯翻。", "大伟", invited},
		{"李老师，成绩单盖章的事，教务处那边这周能办吗？", "李老师", asked},
		{"Kiki, can you take this one?", "Kiki", asked},
		{"黄叔，我们是用烘干机烘的，不会发灰。", "黄叔", answered},
		{"莫姨、黄叔好。", "黄叔", notAddressed},
		{"大伟说网上有两条差评。", "大伟", notAddressed}, // the subject, not addressed
		{"我跟大伟，还有他爸妈。", "大伟", notAddressed}, // not a clause's start
		{"好的。黄叔，明天见。", "黄叔", notAddressed},  // a statement, not the turn's opening
		{"anything", "", notAddressed},
	} {
		if got := addresses(c.text, c.name); got != c.want {
			t.Errorf("addresses(%q, %q) = %d, want %d", c.text, c.name, got, c.want)
		}
	}
}

// TestAddressedNamed: a speaker named by what the meeting calls them
// ("大伟" for "Dan Price", "黄叔" for 黄建华, "Kiki" for 林琪) is the one the
// turns addressing that name hand over to, or answer.
func TestAddressedNamed(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return now.Add(time.Duration(m-180) * time.Minute) }
	recs := []Record{
		{Agent: "a", Session: "m", Role: "黄晓雯", Time: at(0), Text: "下一个，大伟爸妈的事。大伟你说。"},
		{Agent: "a", Session: "m", Role: "Dan Price", Time: at(1), Text: "Mum and Dad can't make the long weekend, so they'll come at Dragon Boat instead."},
		{Agent: "a", Session: "m", Role: "黄建华", Time: at(2), Text: "床单老是发灰，客人要骂的。"},
		{Agent: "a", Session: "m", Role: "覃丽", Time: at(3), Text: "黄叔，我们是用烘干机烘的，不会发灰。"},
		{Agent: "a", Session: "m", Role: "黄晓雯", Time: at(4), Text: "Kiki, can you take the airport run?"},
		{Agent: "a", Session: "m", Role: "林琪", Time: at(5), Text: "Sure, I'll book the coach."},
		{Agent: "b", Session: "x", Role: "王伟", Time: at(6), Text: "大伟你说。"},
		{Agent: "b", Session: "x", Role: "赵磊", Time: at(7), Text: "我觉得可以。"},
	}
	db := memStore(t, now, recs)
	for _, c := range []struct{ text, want string }{
		{"大伟今天开会都说了些啥？", "Dan Price"},
		{"黄叔今天开会说了什么？", "黄建华"},
		{"What did Kiki say?", "林琪"},
		{"大伟今天去哪了？", ""}, // not a question about what was said
		{"What did Bob say?", ""},
	} {
		got, _, err := db.addressedNamed(questionWords(c.text), []string{"a"})
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%q: %q, want %q", c.text, got, c.want)
		}
	}
	// The other agent's meeting hands 大伟 to 赵磊: never read for agent a,
	// and for b alone, its own answer.
	if got, _, _ := db.addressedNamed(questionWords("大伟说了什么？"), []string{"b"}); got != "赵磊" {
		t.Errorf("agent b: %q, want 赵磊", got)
	}
	// Through a recall: the role is the question's speaker.
	res, err := db.Recall(context.Background(), Query{Agent: "a", Text: "大伟今天开会都说了些啥？", K: 3, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stats.Speakers) != 1 || res.Stats.Speakers[0] != "Dan Price" {
		t.Errorf("recall's speakers %v, want [Dan Price]", res.Stats.Speakers)
	}
	addressRule = false
	defer func() { addressRule = true }()
	res, err = db.Recall(context.Background(), Query{Agent: "a", Text: "大伟今天开会都说了些啥？", K: 3, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stats.Speakers) != 0 {
		t.Errorf("without the rule, speakers %v", res.Stats.Speakers)
	}
}

func FuzzAddresses(f *testing.F) {
	f.Add("大伟，你说英文，雯雯翻。", "大伟")
	f.Add("Kiki, can you take this one?", "Kiki")
	f.Add("黄叔，", "黄叔")
	f.Fuzz(func(t *testing.T, text, name string) {
		if k := addresses(text, name); k < notAddressed || k > answered {
			t.Fatalf("addresses(%q, %q) = %d", text, name, k)
		}
	})
}

// questionWords splits text as the speaker lookup does.
func questionWords(text string) []string {
	var words []string
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !analysis.IsWordRune(r) }) {
		words = appendScriptRuns(words, w)
	}
	return words
}

// TestKinAddressed: a question naming kin ("妈", "my mum", "Dad") finds
// the speaker the meeting addresses with that word; another agent's
// meeting is never read for it.
func TestKinAddressed(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	t0 := now.Add(-3 * time.Hour)
	recs := append(turns("a", "m", t0,
		[2]string{"黄晓雯", "先说床单。梁老板又晚了，三套发灰，妈你说。"},
		[2]string{"莫秀兰", "换一家洗衣房吧，镇上那家便宜。"},
		[2]string{"黄晓雯", "Dad, can you drive to the station on Friday?"},
		[2]string{"黄建华", "好，我开车去。"},
	), turns("b", "x", t0,
		[2]string{"王伟", "妈你说。"},
		[2]string{"赵敏", "我觉得可以。"},
	)...)
	db := memStore(t, now, recs)
	for _, c := range []struct{ text, want string }{
		{"妈今天开会说了什么？", "莫秀兰"},
		{"What did my mum say at today's meeting?", "莫秀兰"},
		{"What did Dad say this morning?", "黄建华"},
		{"我老公今天说了什么？", ""}, // no one addressed as 老公
	} {
		got, _, err := db.addressedNamed(questionWords(c.text), []string{"a"})
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%q: %q, want %q", c.text, got, c.want)
		}
	}
	if got, _, _ := db.addressedNamed(questionWords("妈说了什么？"), []string{"b"}); got != "赵敏" {
		t.Errorf("agent b: %q, want 赵敏", got)
	}
	if got := kinAddresses(questionWords("What did my grandma say?")); !slices.Equal(got, []string{"Grandma", "Nana", "奶奶", "外婆", "姥姥"}) {
		t.Errorf("kinAddresses: %q", got)
	}
}
