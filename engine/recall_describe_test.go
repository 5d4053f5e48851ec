package engine

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDescribe(t *testing.T) {
	lx := theLexicon()
	for _, c := range []struct {
		text, span string
		owners     []string
	}{
		{"陈爷爷的儿媳今天说了什么", "陈爷爷的儿媳", []string{"陈爷爷"}},
		{"我们的老板说了什么", "我们的老板", []string{firstOwner}},
		{"我老公会上说了啥", "我老公", []string{firstOwner}},
		{"康复师说了些啥", "康复师", nil},
		{"What did Mrs Wang's daughter say?", "Mrs Wang daughter", []string{"wang"}},
		{"what did my husband say?", "my husband", []string{firstOwner}},
		{"what did the physio say?", "the physio", nil},
		{"What did Grandma say?", "Grandma", nil},
		{"her mother-in-law", "her mother-in-law", nil}, // the longest noun
		{"王奶奶说了什么", "", nil},                            // a name, not a description
		{"预算是多少", "", nil},
	} {
		d, ok := lx.describe(c.text)
		if ok != (c.span != "") || d.span != c.span || !slices.Equal(d.owners, c.owners) {
			t.Errorf("%q: %v %q %q, want %q %q", c.text, ok, d.span, d.owners, c.span, c.owners)
		}
	}
}

// TestDescribedSpeaker: a speaker named by relation or occupation is the
// role the records name beside it, of the question's agent only; none when
// two roles are named so alike.
func TestDescribedSpeaker(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return now.Add(time.Duration(m-200) * time.Minute) }
	recs := []Record{
		{Agent: "a", Session: "c1", Role: "孙丽", Time: at(0), Text: "我是陈爷爷的儿媳孙丽，以后家里的事找我。"},
		{Agent: "a", Session: "c1", Role: "user", Time: at(1), Text: "Ben, the physio, comes every Tuesday at three."},
		{Agent: "a", Session: "c1", Role: "user", Time: at(2), Text: "老周的女儿小雨下周来伴奏。"},
		{Agent: "a", Session: "m1", Role: "孙丽", Time: at(100), Text: "我公公早上六点就醒了，六点半吃药没问题。"},
		{Agent: "a", Session: "m1", Role: "Ben Carter", Time: at(101), Text: "Two sessions a week from Friday, ten for 2,500."},
		{Agent: "a", Session: "m1", Role: "周雨", Time: at(102), Text: "我很愿意给大家伴奏。"},
		{Agent: "a", Session: "m1", Role: "周国平", Time: at(103), Text: "我家小雨弹得不错。"},
		{Agent: "a", Session: "m1", Role: "奶奶", Time: at(104), Text: "我想住朝南的房间。"},
		{Agent: "a", Session: "m1", Role: "林晓雯", Time: at(105), Text: "好的，就这么定。"},
		{Agent: "a", Session: "c1", Role: "user", Time: at(3), Text: "Uncle Mike wants 40 kg this spring."},
		{Agent: "a", Session: "m1", Role: "Mike Walsh", Time: at(106), Text: "Thanks, that works for the shop."},
		{Agent: "a", Session: "c1", Role: "user", Time: at(4), Text: "今天把房东顾老师的租约附件看完了。"},
		{Agent: "a", Session: "m1", Role: "顾文华", Time: at(107), Text: "礼拜六可以施工，别太吵就行。"},
		{Agent: "a", Session: "m1", Role: "许蔓", Time: at(108), Text: "师母，付款那边您说一下。"},
		{Agent: "a", Session: "m1", Role: "林慧", Time: at(109), Text: "定金已经转过去了，发票下周开。"},
		// Another agent names its own daughter-in-law.
		{Agent: "b", Session: "c2", Role: "王梅", Time: at(50), Text: "我是陈爷爷的儿媳王梅。"},
		{Agent: "b", Session: "c2", Role: "王梅", Time: at(51), Text: "我明天去医院。"},
		// Two doctors named alike: no one.
		{Agent: "c", Session: "c3", Role: "user", Time: at(60), Text: "医生李强说要复查，医生赵敏说不用。"},
		{Agent: "c", Session: "c3", Role: "李强", Time: at(61), Text: "要复查。"},
		{Agent: "c", Session: "c3", Role: "赵敏", Time: at(62), Text: "不用复查。"},
	}
	db := memStore(t, now, recs)
	for _, c := range []struct {
		agent, text, want string
	}{
		{"a", "陈爷爷的儿媳今天说了什么", "孙丽"},
		{"a", "康复师说了些啥", "Ben Carter"},
		{"a", "what did the physio say?", "Ben Carter"},
		{"a", "What did Zhou's daughter say?", "周雨"}, // the owner in pinyin, the daughter by nickname
		{"a", "姑父今天在会上都说了些什么？", "Mike Walsh"},        // "Uncle Mike": the uncle in the other language
		{"a", "What did Grandma say?", "奶奶"},
		{"a", "What did the landlord say on the call?", "顾文华"}, // 房东顾老师: a surname and an honorific
		{"a", "师母今天会上说了什么？", "林慧"},                             // addressed, she speaks next         // a role named by the relation
		{"b", "陈爷爷的儿媳说了什么", "王梅"},
		{"c", "医生说了什么", ""},
		{"a", "预算是多少", ""},
	} {
		role, _, _, err := db.describedSpeaker(c.text, []string{c.agent})
		if err != nil {
			t.Fatal(err)
		}
		if role != c.want {
			t.Errorf("%s %q: %q, want %q", c.agent, c.text, role, c.want)
		}
	}
	// The recall keeps to the described speaker's records.
	res, err := db.Recall(context.Background(), Query{Agent: "a", Text: "陈爷爷的儿媳今天说了什么", K: 5, Now: now, ParseTime: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) == 0 {
		t.Fatal("nothing")
	}
	for _, m := range res.Memories {
		if m.Role != "孙丽" {
			t.Errorf("%s: %q, want only 孙丽's records", m.Role, m.Text)
		}
	}
}

// BenchmarkDescribe: what a question naming no role pays for the look for
// a description.
func BenchmarkDescribe(b *testing.B) {
	lx := theLexicon()
	for _, q := range []string{"what did we decide about the launch date for the new branch?", "我们关于产品上线时间达成了什么共识？"} {
		b.Run(q[:6], func(b *testing.B) {
			for b.Loop() {
				lx.describe(q)
			}
		})
	}
}

// FuzzDescribe: any question and record text; a description's span is a
// part of the question, its nouns a [person] line, and the names read
// beside its nouns in a record are parts of the record.
func FuzzDescribe(f *testing.F) {
	for _, s := range []string{"陈爷爷的儿媳今天说了什么", "What did Mrs Wang's daughter say?", "我们的老板", "的儿媳", "我老公", "the physio", "", "的"} {
		f.Add(s, "我是陈爷爷的儿媳孙丽。Ben, the physio, comes.")
	}
	lx := theLexicon()
	f.Fuzz(func(t *testing.T, text, rec string) {
		d, ok := lx.describe(text)
		if !ok {
			return
		}
		if len(d.nouns) == 0 {
			t.Fatalf("%q: a description without nouns", text)
		}
		for _, n := range besideNouns(rec, d) {
			if !strings.Contains(rec, n) && !strings.Contains(strings.ToLower(rec), n) {
				t.Fatalf("%q in %q: name %q is not in the record", text, rec, n)
			}
		}
	})
}
