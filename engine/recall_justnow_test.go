package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestJustNowConversation: "刚才" and "just now" asked at the end of a
// two-hour meeting reach its first hour, and three hours after it still
// mean it; thirteen hours after, or in a current session begun more than
// justNowMax ago, the 30-minute window stays.
func TestJustNowConversation(t *testing.T) {
	end := time.Date(2026, 12, 2, 11, 0, 0, 0, time.UTC)
	db, err := Open("s", Options{FS: vfs.NewMem(), DisableDiskCache: true, Clock: func() time.Time { return end }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	var recs []Record
	add := func(at time.Time, session, role, text string) {
		recs = append(recs, Record{Time: at, Agent: "a", Session: session, Role: role, Text: text})
	}
	// A chat that ended at 05:00, mentioning the disk too.
	add(end.Add(-6*time.Hour-time.Minute), "chat", "user", "the backup disk on the old server failed")
	add(end.Add(-6*time.Hour), "chat", "assistant", "noted")
	// The meeting: 09:00-11:00, one turn a minute; the disk remark at 09:10.
	start := end.Add(-2 * time.Hour)
	for i := range 120 {
		at := start.Add(time.Duration(i) * time.Minute)
		switch i {
		case 10:
			add(at, "meet", "刘洋", "测试环境的磁盘快满了，需要扩容。 the staging disk is almost full")
		case 11:
			add(at, "meet", "王强", "好的，没问题。")
		default:
			add(at, "meet", fmt.Sprintf("p%d", i%4), fmt.Sprintf("agenda item %d discussed, next steps noted", i))
		}
	}
	if _, err := db.AppendBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	disk := "测试环境的磁盘快满了，需要扩容。 the staging disk is almost full"
	for _, c := range []struct {
		text, current string
		wantSince     time.Time
		want          string // text at rank 1; "" for no result
	}{
		{"刚才谁提到了磁盘的问题？", "", start, disk},
		{"刚才谁提到了磁盘的问题？", "meet", start, disk},
		{"who mentioned the disk just now?", "", start, disk},
		// The current session is the chat, which ended 6 hours ago: its
		// start is within justNowMax, so the window reaches it.
		{"what did I say about the disk just now?", "chat", end.Add(-6*time.Hour - time.Minute), "the backup disk on the old server failed"},
	} {
		res, err := db.Recall(ctx, Query{Agent: "a", Text: c.text, CurrentSession: c.current, K: 3, ParseTime: true, Mode: ModeSparse})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Stats.Since.Equal(c.wantSince) {
			t.Errorf("%q (current %q): since %v, want %v; notes %q", c.text, c.current, res.Stats.Since, c.wantSince, res.Stats.Notes)
		}
		if len(res.Memories) == 0 || res.Memories[0].Record.Text != c.want {
			t.Errorf("%q (current %q): %+v, want %q first", c.text, c.current, res.Memories, c.want)
		}
	}
	// Three hours after the meeting, nothing in the last 30 minutes: the
	// last conversation is meant, the meeting.
	late := end.Add(3 * time.Hour)
	res, err := db.Recall(ctx, Query{Agent: "a", Text: "刚才谁提到了磁盘？", K: 3, ParseTime: true, Mode: ModeSparse, Now: late})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stats.Since.Equal(start) || len(res.Memories) == 0 || res.Memories[0].Record.Text != disk {
		t.Errorf("3 hours after the meeting: since %v (want %v), %+v (want %q first)", res.Stats.Since, start, res.Memories, disk)
	}
	// Thirteen hours after it the meeting is no longer "just now": the 30
	// minutes stay, and hold nothing.
	later := end.Add(13 * time.Hour)
	res, err = db.Recall(ctx, Query{Agent: "a", Text: "刚才谁提到了磁盘？", K: 3, ParseTime: true, Mode: ModeSparse, Now: later})
	if err != nil {
		t.Fatal(err)
	}
	if want := later.Add(-justNowSpan); !res.Stats.Since.Equal(want) || len(res.Memories) != 0 {
		t.Errorf("13 hours after the meeting: since %v (want %v), %d memories (want 0)", res.Stats.Since, want, len(res.Memories))
	}
	// A current session that began more than justNowMax ago: unchanged.
	res, err = db.Recall(ctx, Query{Agent: "a", Text: "what did I say about the disk just now?", CurrentSession: "chat", K: 3, ParseTime: true, Mode: ModeSparse, Now: end.Add(7 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if want := end.Add(7*time.Hour - justNowSpan); !res.Stats.Since.Equal(want) {
		t.Errorf("a current session begun 13 hours ago: since %v, want %v", res.Stats.Since, want)
	}
}

// TestMomentNamed: "two hours ago, what were we talking about in the
// meeting?" asks for the turns of that moment, even when the frame's
// characters (聊, 会上) match turns of another hour that BM25 would rank
// first and that crowd the moment's turns out of the candidates.
func TestMomentNamed(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	start := now.Add(-3 * time.Hour) // 09:00
	var recs []Record
	for i := range 90 {
		text := fmt.Sprintf("第%d项：上线清单第%d条已经确认。", i, i)
		if i < 20 {
			text = fmt.Sprintf("会上先聊聊第%d个议题，大家随便聊。", i)
		}
		recs = append(recs, Record{Agent: "a", Session: "m", Role: []string{"王芳", "李明", "张伟"}[i%3], Time: start.Add(time.Duration(i) * time.Minute), Text: text})
	}
	db := memStore(t, now, recs)
	for _, text := range []string{"两个小时前会上在聊什么？", "两个小时前开会在讨论什么？"} {
		res, err := db.Recall(context.Background(), Query{Agent: "a", Text: text, K: 5, Now: now, ParseTime: true, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 {
			t.Fatalf("%q: nothing", text)
		}
		if d := res.Memories[0].Time.Sub(now.Add(-2 * time.Hour)); d < -15*time.Minute || d > 15*time.Minute {
			t.Errorf("%q: the first memory %q at %s, %v from the moment; notes %q", text, res.Memories[0].Text, res.Memories[0].Time.Format("15:04"), d, res.Stats.Notes)
		}
	}
}
