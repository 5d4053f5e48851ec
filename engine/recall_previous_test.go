package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestFindPrevious: the phrases naming the previous session or meeting
// leave the text; "the last time" followed by a clause asks for an
// occurrence and is left alone.
func TestFindPrevious(t *testing.T) {
	lx := theLexicon()
	cases := []struct {
		text, rest, expr string
		meeting          bool
	}{
		{"What did we talk about last time?", "What did we talk about ?", "last time", false},
		{"what did we decide the last time we met", "what did we decide the", "last time we met", false},
		{"When was the last time I went running?", "When was the last time I went running?", "", false},
		{"Which launch date did we set at the last meeting?", "Which launch date did we set at the ?", "last meeting", true},
		{"In the previous session, what room did I book?", "In the , what room did I book?", "previous session", false},
		{"上次开会定的上线时间是哪天？", "定的上线时间是哪天？", "上次开会", true},
		{"上次我让你提醒我什么？", "我让你提醒我什么？", "上次", false},
		{"上回聊到哪了", "聊到哪了", "上回", false},
		{"我们上一次会议的结论", "我们 的结论", "上一次会议", true},
		{"what did we decide?", "what did we decide?", "", false},
		{"what came out of our last band meeting?", "what came out of our ?", "last band meeting", true},
		{"In the previous budget review call, who objected?", "In the , who objected?", "previous budget review call", true},
		{"上次乐队开会定了什么？", "定了什么？", "上次乐队开会", true},
		{"上一次项目会议的结论", "的结论", "上一次项目会议", true},
		{"上次说开会的时间是几点？", "开会的时间是几点？", "上次说", false},
		{"the last few meetings were long", "the last few meetings were long", "", false},
		{"On our last call, who was going?", "On our , who was going?", "last call", true},
		{"上次视频的时候，清明说的是去哪儿？", "的时候，清明说的是去哪儿？", "上次视频", true},
	}
	for _, c := range cases {
		rest, expr, meeting := lx.findPrevious(c.text)
		if rest != c.rest || expr != c.expr || meeting != c.meeting {
			t.Errorf("%q: (%q, %q, %v), want (%q, %q, %v)", c.text, rest, expr, meeting, c.rest, c.expr, c.meeting)
		}
	}
}

// TestPreviousSession: which session "last time" and "the last meeting"
// name, from each current session, over a history of chats and meetings
// where a chat runs alongside a meeting.
func TestPreviousSession(t *testing.T) {
	day := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	db, err := Open("s", Options{FS: vfs.NewMem(), DisableDiskCache: true, Clock: func() time.Time { return day.Add(24 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	// session, start, speakers, turns (one a minute, speakers in turn)
	type sess struct {
		name     string
		topic    string
		start    time.Time
		speakers []string
		turns    int
	}
	hist := []sess{
		{"meet-a", "budget", day.Add(-14 * 24 * time.Hour), []string{"ann", "bob", "cy"}, 6},
		{"chat-b", "hiring", day.Add(-2 * 24 * time.Hour), []string{"user", "assistant"}, 6},
		{"chat-c", "migration", day.Add(-24 * time.Hour), []string{"user", "assistant"}, 6},
		{"meet-d", "launch", day.Add(9 * time.Hour), []string{"ann", "bob", "cy", "dee"}, 60},
		{"chat-e", "rehearsal", day.Add(9*time.Hour + 30*time.Minute), []string{"user", "assistant"}, 10},
	}
	var recs []Record
	for _, s := range hist {
		for i := range s.turns {
			recs = append(recs, Record{Agent: "a", Session: s.name, Role: s.speakers[i%len(s.speakers)], Time: s.start.Add(time.Duration(i) * time.Minute),
				Text: fmt.Sprintf("%s turn %d about the %s", s.name, i, s.topic)})
		}
	}
	// In time order: the meeting's and the chat's turns interleave.
	slices.SortStableFunc(recs, func(a, b Record) int { return a.Time.Compare(b.Time) })
	if _, err := db.AppendBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		current, text, want string
	}{
		{"chat-e", "what did we talk about last time?", "chat-c"}, // meet-d ran alongside chat-e
		{"chat-e", "上次开会说了什么", "meet-d"},                          // the meeting before the chat's start, though it overlaps
		{"meet-d", "上次开会说了什么", "meet-a"},                          // the current meeting excluded
		{"meet-d", "what did we talk about last time?", "chat-c"},
		{"chat-c", "what did we talk about last time?", "chat-b"},
		{"", "what did we talk about last time?", "chat-e"}, // no current session: the latest
		{"", "what was said at the last meeting?", "meet-d"},
		{"chat-b", "上次开会说了什么", "meet-a"},
		{"meet-d", "what did we talk about on our last call?", "meet-a"}, // a call is a meeting: not the chats between
		{"chat-e", "上次视频说了什么", "meet-d"},
	}
	for _, c := range cases {
		res, err := db.Recall(ctx, Query{Agent: "a", Text: c.text, CurrentSession: c.current, SessionTurns: -1, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 {
			t.Errorf("%s / %q: no memory", c.current, c.text)
			continue
		}
		for _, m := range res.Memories {
			if m.Session != c.want {
				t.Errorf("%s / %q: a memory of %s, want only %s; notes %q", c.current, c.text, m.Session, c.want, res.Stats.Notes)
				break
			}
		}
		if !strings.Contains(strings.Join(res.Stats.Notes, "\n"), "only the previous") {
			t.Errorf("%s / %q: notes %q do not say the filter was narrowed", c.current, c.text, res.Stats.Notes)
		}
	}
	// Words the previous session does not hold: not narrowed.
	res, err := db.Recall(ctx, Query{Agent: "a", Text: "what budget did we set last time?", CurrentSession: "chat-e", SessionTurns: -1, K: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) == 0 || res.Memories[0].Session != "meet-a" {
		t.Errorf("a question about another session's words was narrowed: %v, notes %q", res.Memories, res.Stats.Notes)
	}
}

// TestPreviousCallOneToOne: in a store of calls between two people, where
// no session is a meeting, "the last call" is the previous session.
func TestPreviousCallOneToOne(t *testing.T) {
	day := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var recs []Record
	for d, topic := range []string{"knee", "sleep", "diet"} {
		for i := range 4 {
			recs = append(recs, Record{Agent: "a", Session: fmt.Sprintf("call-%d", d), Role: []string{"user", "Dr Li"}[i%2],
				Time: day.Add(time.Duration(d-2)*24*time.Hour + time.Duration(i)*time.Minute), Text: fmt.Sprintf("turn %d about the %s", i, topic)})
		}
	}
	db := memStore(t, day.Add(time.Hour), recs)
	for _, text := range []string{"what did we talk about on our last call?", "上次通话说了什么"} {
		res, err := db.Recall(context.Background(), Query{Agent: "a", Text: text, CurrentSession: "call-2", SessionTurns: -1, K: 5, Now: day.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 {
			t.Fatalf("%q: nothing; notes %q", text, res.Stats.Notes)
		}
		for _, m := range res.Memories {
			if m.Session != "call-1" {
				t.Errorf("%q: a memory of %s, want only call-1; notes %q", text, m.Session, res.Stats.Notes)
				break
			}
		}
	}
}

// TestPreviousSharesOnlyACharacter: "last time" names the previous
// session only when it holds one of the question's words, and one shared
// Chinese character is no shared word: yesterday's "回老家" shares 家 with
// "家里", not the question's subject, so the filter is left whole and the
// turn two weeks ago that settled it is found.
func TestPreviousSharesOnlyACharacter(t *testing.T) {
	ctx := context.Background()
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	recs := []Record{
		{Session: "f1", Role: "老大", Text: "爸的事大家商量一下。", Time: now.Add(-14 * 24 * time.Hour)},
		{Session: "f1", Role: "老二", Text: "配药的事我来，每周去一次药房。", Time: now.Add(-14*24*time.Hour + time.Minute)},
		{Session: "f1", Role: "老三", Text: "好。", Time: now.Add(-14*24*time.Hour + 2*time.Minute)},
		{Session: "f2", Role: "老二", Text: "我下周要回老家一趟。", Time: now.Add(-15 * time.Hour)},
		{Session: "f2", Role: "老三", Text: "路上小心。", Time: now.Add(-15*time.Hour + time.Minute)},
		{Session: "f2", Role: "老大", Text: "嗯。", Time: now.Add(-15*time.Hour + 2*time.Minute)},
		{Session: "f3", Role: "老大", Text: "今天说说周末安排。", Time: now.Add(-time.Hour)},
	}
	for i := range recs {
		recs[i].Agent = "a"
	}
	if _, err := db.AppendBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	res, err := db.Recall(ctx, Query{Agent: "a", Text: "上次家里商量谁负责配药？", CurrentSession: "f3", K: 3, Now: now, ParseTime: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) == 0 || res.Memories[0].Text != recs[1].Text {
		t.Fatalf("got %v (notes %v), want %q first", res.Memories, res.Stats.Notes, recs[1].Text)
	}
}

// TestMeetingOverDayWindow: "上回开会礼拜六值班最后怎么定的？" names the
// previous meeting and a Saturday; last Saturday's records hold no
// meeting, so the day is the topic's (the Saturday duty), and the
// previous meeting is searched without the window.
func TestMeetingOverDayWindow(t *testing.T) {
	loc := time.FixedZone("CST", 8*3600)
	wed := time.Date(2027, 5, 19, 9, 0, 0, 0, loc)
	recs := append(turns("a", "meet-0519", wed,
		[2]string{"梁淑贞", "下面说六月礼拜六值班的事。"},
		[2]string{"许晓静", "六月人少，礼拜六能不能不开？"},
		[2]string{"梁淑贞", "定了：六月礼拜六值班改成上午九点到十二点，两个人轮。"},
		[2]string{"黄志鹏", "好的。"}),
		turns("a", "chat-0522", wed.AddDate(0, 0, 3).Add(2*time.Hour),
			[2]string{"user", "今天礼拜六值班是阿鹏和潘姐，上午来了三个客户送票。"},
			[2]string{"assistant", "记下了：今天阿鹏、潘姐值班，上午三位客户送票。"})...)
	recs = append(recs, turns("a", "chat-0527", wed.AddDate(0, 0, 8).Add(6*time.Hour), [2]string{"user", "下午把报表发给曹总。"})...)
	now := wed.AddDate(0, 0, 8).Add(7 * time.Hour)
	db := memStore(t, now, recs)
	top := func() string {
		return topText(t, db, Query{Agent: "a", Text: "上回开会礼拜六值班最后怎么定的？", CurrentSession: "chat-0527", K: 3, Now: now, ParseTime: true, Mode: ModeSparse})
	}
	if got := top(); got != recs[2].Text {
		t.Errorf("top %q, want the meeting's decision", got)
	}
	noMeetingOverWindow = true
	defer func() { noMeetingOverWindow = false }()
	if got := top(); got == recs[2].Text {
		t.Errorf("the decision first without the rule too: the test no longer tests it")
	}
}
