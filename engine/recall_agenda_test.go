package engine

import (
	"context"
	"testing"
	"time"
)

func TestAgendaLine(t *testing.T) {
	for text, want := range map[string]bool{
		"早。今天几件事：王奶奶复查、陈爷爷的药，还有吴婆婆下周开始。":                                     true,
		"大家早，今天要定目的地、人数和酒店。":                                                 true,
		"人都到了，今天过几件事：澜图的交稿时间、审校谁来。":                                          true,
		"Morning. Three things today: the offsite, the launch date, hiring.": true,
		"今天定了：上线时间12月15日。":                                                   false, // a decision, no list
		"上线时间推迟到十二月十五日、预算不变。":                                                false, // no "today"
		"Today we shipped the fix.":                                          false,
		"开会，趁孩子们午睡说几件事：新年汇演、体检、家长工作坊，还有送菜的。":                                 true, // a count before a colon, no "today"
		"这件事：下周再说。":                                                          false,
	} {
		if got := agendaLine(text); got != want {
			t.Errorf("agendaLine(%q) = %v, want %v", text, got, want)
		}
	}
}

// TestAgendaLowered: the agenda names every topic and settles none; a
// question about one topic finds the turn that settles it first, and so
// does the greeting after the agenda, which inherits its words.
func TestAgendaLowered(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return now.Add(time.Duration(m-120) * time.Minute) }
	recs := []Record{
		{Agent: "a", Session: "m", Role: "陈静", Time: at(0), Text: "今天几件事：上线时间、财务预算、招聘。"},
		{Agent: "a", Session: "m", Role: "Mike", Time: at(1), Text: "Evening from Seattle, it's Friday night here."},
		{Agent: "a", Session: "m", Role: "李明", Time: at(5), Text: "测试那边都跑完了，运维也准备好了，所以上线时间最后定在12月15日，大家按这个排期。"},
		{Agent: "a", Session: "m", Role: "王芳", Time: at(10), Text: "我跟财务对过了，明年第一季度的财务预算一共是一百二十万，比今年多一点。"},
		{Agent: "a", Session: "m", Role: "张伟", Time: at(15), Text: "招聘下周开始面试。"},
	}
	db := memStore(t, now, recs)
	for _, c := range []struct{ text, first string }{
		{"上线时间？", "测试那边都跑完了，运维也准备好了，所以上线时间最后定在12月15日，大家按这个排期。"},
	} {
		res, err := db.Recall(context.Background(), Query{Agent: "a", Text: c.text, K: 3, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 || res.Memories[0].Text != c.first {
			t.Errorf("%q: %v, want %q first", c.text, res.Memories, c.first)
		}
	}
}
