package engine

import (
	"context"
	"testing"
	"time"
)

// FuzzRecallText: any question text through the whole recall (time
// parsing, speakers, descriptions, nicknames, previous sessions, slots,
// fusion) over a small bilingual store of two agents: no panic, and never
// a record of the other agent.
func FuzzRecallText(f *testing.F) {
	now := time.Date(2027, 3, 7, 12, 20, 0, 0, time.FixedZone("CST", 8*3600))
	at := func(m int) time.Time { return now.Add(time.Duration(m-200) * time.Minute) }
	recs := []Record{
		{Agent: "a", Session: "call-1", Role: "周岚", Time: at(0), Text: "先说爸的手术。医院昨天晚上来电话，手术提前到这周三，10号上午。"},
		{Agent: "a", Session: "call-1", Role: "Tom Barker", Time: at(1), Text: "Then Lan should go with him. I can do the school run on Wednesday."},
		{Agent: "a", Session: "call-1", Role: "孙丽", Time: at(2), Text: "我是陈爷爷的儿媳孙丽。我公公六点半吃药。"},
		{Agent: "a", Session: "call-1", Role: "Ben Carter", Time: at(3), Text: "Ten sessions for 2,500, from Friday."},
		{Agent: "a", Session: "call-1", Role: "刘美华", Time: at(4), Text: "演出服一套从160涨到210。"},
		{Agent: "a", Session: "chat-1", Role: "user", Time: at(60), Text: "Ben, the physio, comes every Tuesday at 3 pm. 老周的女儿小雨下周来伴奏。"},
		{Agent: "a", Session: "chat-1", Role: "assistant", Time: at(61), Text: "Noted: Ben comes on Tuesdays at 3 pm."},
		{Agent: "a", Session: "call-2", Role: "周岚", Time: at(120), Text: "清明改去千岛湖，4月3号到5号坐高铁。"},
		{Agent: "a", Session: "call-2", Role: "Tom Barker", Time: at(121), Text: "Brilliant, Mum. I'll pick you up at Pudong."},
		{Agent: "a", Session: "call-2", Role: "孙丽", Time: at(122), Text: "好的。"},
		{Agent: "b", Session: "call-1", Role: "王梅", Time: at(5), Text: "我是陈爷爷的儿媳王梅。手术改到周三。"},
	}
	db := memStore(f, now, recs)
	for _, s := range []string{"陈爷爷的儿媳今天说了什么", "What did Zhou's daughter say on the last call?", "两个小时前会上在聊什么？", "十点左右开会在聊什么",
		"周三谁陪我爸去医院？", "刘姐早上开会都说了些什么？", "音乐会原来定的是哪天？", "on the day of the Mid-Autumn Festival", "上次视频的时候，清明说的是去哪儿？", "\xaedAughter", ""} {
		f.Add(s, "call-2")
	}
	f.Fuzz(func(t *testing.T, text, session string) {
		res, err := db.Recall(context.Background(), Query{Agent: "a", Text: text, CurrentSession: session, K: 5, Now: now, ParseTime: true, Explain: true})
		if err != nil {
			return // a bad query is an error, not a panic
		}
		for _, m := range res.Memories {
			if m.Agent != "a" {
				t.Fatalf("%q: a memory of agent %q: %q", text, m.Agent, m.Text)
			}
		}
	})
}
