package engine

import (
	"context"
	"testing"
	"time"
)

// TestNicknamed: a nickname names the one role it fits among the agent's
// roles; none when two fit or the word is no nickname.
func TestNicknamed(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var recs []Record
	for i, role := range []string{"梁小梅", "周琳", "郑国强", "王芳", "王明", "黄晓雯", "王刚"} {
		recs = append(recs, Record{Agent: "a", Session: "m", Role: role, Time: now.Add(time.Duration(i-10) * time.Minute), Text: "好的，我来安排。"})
	}
	recs = append(recs, Record{Agent: "b", Session: "x", Role: "赵小林", Time: now.Add(-time.Hour), Text: "收到。"})
	db := memStore(t, now, recs)
	for _, c := range []struct{ text, want string }{
		{"小梅今天会上讲了啥", "梁小梅"},
		{"老郑怎么说", "郑国强"},
		{"小王说了什么", ""}, // 王芳 and 王明
		{"小时候的事", ""},
		{"小林说了什么", ""},         // 赵小林 is the other agent's
		{"周姐早上开会都说了些什么", "周琳"}, // the surname and an honorific
		{"郑师傅提到了什么", "郑国强"},
		{"王老师说了什么", ""},       // 王芳 and 王明
		{"周姐现在是哪几天去", ""},     // not a question about what she said
		{"赵老师说了什么", ""},       // 赵小林 is the other agent's
		{"雯雯今天开会说了什么", "黄晓雯"}, // the last character doubled
		{"刚刚谁说了预算", ""},       // an adverb, not 王刚
		{"妈妈说了什么", ""},
	} {
		got, _, err := db.nicknamed([]string{c.text}, []string{"a"})
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%q: %q, want %q", c.text, got, c.want)
		}
	}
	// Through a recall: the nickname's role is the question's speaker.
	res, err := db.Recall(context.Background(), Query{Agent: "a", Text: "小梅说了什么？", K: 3, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stats.Speakers) != 1 || res.Stats.Speakers[0] != "梁小梅" {
		t.Errorf("recall's speakers %v, want [梁小梅]", res.Stats.Speakers)
	}
}
