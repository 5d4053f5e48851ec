package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestNamedMeeting: a question naming a meeting in a window is answered
// from the window's meeting, not from a chat of the same window that
// speaks of the meeting in the question's words; a window without a
// meeting, and a question naming no meeting, keep every record of it.
func TestNamedMeeting(t *testing.T) {
	now := time.Date(2026, 12, 1, 11, 30, 0, 0, time.UTC)
	ctx := context.Background()
	at := func(h, m int) time.Time { return time.Date(2026, 12, 1, h, m, 0, 0, time.UTC) }
	recs := []Record{
		{Agent: "a", Session: "meet", Role: "周琳", Time: at(9, 30), Text: "今天把供应商合同的条款过一遍。"},
		{Agent: "a", Session: "meet", Role: "孙浩", Time: at(9, 35), Text: "付款周期改成六十天。"},
		{Agent: "a", Session: "meet", Role: "何雪", Time: at(9, 40), Text: "违约金按百分之五算。"},
		{Agent: "a", Session: "meet", Role: "周琳", Time: at(9, 45), Text: "好，下周一签。"},
		{Agent: "a", Session: "chat", Role: "user", Time: at(11, 0), Text: "Book a room for the meeting we discuss on Friday."},
		{Agent: "a", Session: "chat", Role: "assistant", Time: at(11, 1), Text: "Booked room 3 for the meeting we discuss on Friday."},
		{Agent: "a", Session: "chat", Role: "user", Time: at(11, 5), Text: "What should we discuss in the meeting about the budget?"},
		{Agent: "a", Session: "old", Role: "user", Time: at(9, 0).AddDate(0, 0, -7), Text: "we discuss the meeting notes every week"},
	}
	db := memStore(t, now, recs)
	recall := func(text string) *Result {
		t.Helper()
		res, err := db.Recall(ctx, Query{Text: text, Agents: []string{"a"}, K: 3, Mode: ModeSparse, ParseTime: true, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, q := range []string{"what did we discuss in this morning's meeting?", "what did we discuss at today's meeting?"} {
		res := recall(q)
		if len(res.Memories) == 0 {
			t.Fatalf("%q: nothing", q)
		}
		for _, m := range res.Memories {
			if m.Record.Session != "meet" {
				t.Errorf("%q: %s %q from outside the meeting (notes %q)", q, m.Record.Session, m.Record.Text, res.Stats.Notes)
			}
		}
	}
	// No meeting named: the chat answers.
	if res := recall("what did we discuss this morning?"); len(res.Memories) == 0 || res.Memories[0].Record.Session != "chat" {
		t.Errorf("no meeting named: %+v", res.Memories)
	}
	// A window without a meeting: left as it is (the old week's record
	// is no meeting: one speaker).
	res := recall("what did we discuss in the meeting last week?")
	if len(res.Memories) == 0 || res.Memories[0].Record.Session != "old" {
		t.Errorf("a window without a meeting: %+v", res.Memories)
	}
	for _, n := range res.Stats.Notes {
		if strings.Contains(n, "meetings") {
			t.Errorf("a window without a meeting narrowed: %q", n)
		}
	}
}

// TestPreviousMeetingOtherLanguage: "the last meeting" asked in Chinese
// about an English meeting that holds none of the question's words is
// not narrowed to that meeting, but the answer is still before the
// session the question is asked in: its decision or its Chinese notes,
// not this morning's records that name the same topic.
func TestPreviousMeetingOtherLanguage(t *testing.T) {
	now := time.Date(2026, 12, 1, 11, 30, 0, 0, time.UTC)
	ctx := context.Background()
	old := time.Date(2026, 11, 14, 16, 0, 0, 0, time.UTC)
	today := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	recs := []Record{
		{Agent: "a", Session: "meet-old", Role: "Li", Time: old, Text: "Entry fee of 80 yuan per player?"},
		{Agent: "a", Session: "meet-old", Role: "Tom", Time: old.Add(time.Minute), Text: "80 it is."},
		{Agent: "a", Session: "meet-old", Role: "Mia", Time: old.Add(2 * time.Minute), Text: "sounds good"},
		{Agent: "a", Session: "notes-old", Role: "user", Time: old.Add(time.Hour), Text: "笔记：报名费每人80元，含午饭。"},
		{Agent: "a", Session: "meet-now", Role: "王姐", Time: today, Text: "报名费我来收，大家转账给我。"},
		{Agent: "a", Session: "meet-now", Role: "阿杰", Time: today.Add(time.Minute), Text: "报名费定了吗？"},
		{Agent: "a", Session: "meet-now", Role: "Li", Time: today.Add(2 * time.Minute), Text: "报名费的事下午再说。"},
	}
	db := memStore(t, now, recs)
	res, err := db.Recall(ctx, Query{Text: "上次开会定的报名费是多少？", Agents: []string{"a"}, CurrentSession: "meet-now", K: 3, Mode: ModeSparse, ParseTime: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	// The old meeting's decision ("80 it is.", found through the
	// glossary's "entry fee") or its Chinese notes.
	if len(res.Memories) == 0 || (res.Memories[0].Record.Session != "notes-old" && res.Memories[0].Record.Session != "meet-old") {
		t.Fatalf("want the old meeting or its notes first, got %+v (notes %q)", res.Memories, res.Stats.Notes)
	}
	for _, m := range res.Memories {
		if m.Record.Session == "meet-now" {
			t.Errorf("a record of the current session: %q", m.Record.Text)
		}
	}
}

// TestLastMeetingDecisionsOtherLanguage: "what did we decide at the last
// meeting?" asks nothing but the meeting's decisions: asked in English of
// a Chinese meeting, whose records hold none of its words, it still
// names the latest meeting before the current session, not two weeks
// ago's.
func TestLastMeetingDecisionsOtherLanguage(t *testing.T) {
	now := time.Date(2026, 12, 1, 11, 30, 0, 0, time.UTC)
	ctx := context.Background()
	old := time.Date(2026, 11, 17, 10, 0, 0, 0, time.UTC)
	today := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	recs := []Record{
		{Agent: "a", Session: "meet-old", Role: "周琳", Time: old, Text: "年会旅行先定杭州，每人标准三千。"},
		{Agent: "a", Session: "meet-old", Role: "孙浩", Time: old.Add(time.Minute), Text: "人数大概四十人。"},
		{Agent: "a", Session: "meet-old", Role: "何雪", Time: old.Add(2 * time.Minute), Text: "酒店我来联系。"},
		{Agent: "a", Session: "meet-new", Role: "周琳", Time: today, Text: "目的地改成厦门，日子不变。"},
		{Agent: "a", Session: "meet-new", Role: "孙浩", Time: today.Add(time.Minute), Text: "人数涨到五十五人。"},
		{Agent: "a", Session: "meet-new", Role: "赵磊", Time: today.Add(2 * time.Minute), Text: "酒店订海边那家。"},
		{Agent: "a", Session: "chat", Role: "user", Time: today.Add(90 * time.Minute), Text: "Remind me to call the travel agency at three."},
	}
	db := memStore(t, now, recs)
	res, err := db.Recall(ctx, Query{Text: "what did we decide at the last meeting?", Agents: []string{"a"}, CurrentSession: "chat", K: 3, Mode: ModeSparse, ParseTime: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) == 0 {
		t.Fatalf("nothing (notes %q)", res.Stats.Notes)
	}
	for _, m := range res.Memories {
		if m.Record.Session != "meet-new" {
			t.Errorf("%s %q: not this morning's meeting (notes %q)", m.Record.Session, m.Record.Text, res.Stats.Notes)
		}
	}
}

// TestNamedMeetingUnexaminedSessions: a window of more sessions than the
// rule examines keeps the records of those it did not examine: an
// earlier meeting of the day beyond the latest maxPreviousSessions
// sessions is still searched.
func TestNamedMeetingUnexaminedSessions(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(h, m int) time.Time { return time.Date(2026, 12, 1, h, m, 0, 0, time.UTC) }
	recs := []Record{
		{Agent: "a", Session: "meet-a", Role: "ann", Time: at(8, 0), Text: "The budget for the fair is twelve thousand."},
		{Agent: "a", Session: "meet-a", Role: "bob", Time: at(8, 1), Text: "Fine by me."},
		{Agent: "a", Session: "meet-a", Role: "cy", Time: at(8, 2), Text: "I will book the hall."},
	}
	for i := range maxPreviousSessions - 2 {
		recs = append(recs, Record{Agent: "a", Session: fmt.Sprintf("chat-%d", i), Role: "user", Time: at(9, i), Text: fmt.Sprintf("note %d about the weather", i)})
	}
	recs = append(recs,
		Record{Agent: "a", Session: "meet-b", Role: "ann", Time: at(11, 0), Text: "The posters are printed."},
		Record{Agent: "a", Session: "meet-b", Role: "bob", Time: at(11, 1), Text: "Good."},
		Record{Agent: "a", Session: "meet-b", Role: "cy", Time: at(11, 2), Text: "I hang them tomorrow."},
		Record{Agent: "a", Session: "chat-last", Role: "user", Time: at(11, 30), Text: "What was the budget again?"},
	)
	db := memStore(t, now, recs)
	res, err := db.Recall(context.Background(), Query{Text: "what budget did we set at today's meeting?", Agents: []string{"a"}, K: 3, Mode: ModeSparse, ParseTime: true, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) == 0 || res.Memories[0].Record.Text != recs[0].Text {
		t.Fatalf("want the earlier meeting's budget first, got %+v (notes %q)", res.Memories, res.Stats.Notes)
	}
	for _, m := range res.Memories {
		if m.Record.Session == "chat-last" {
			t.Errorf("a chat record %q (notes %q)", m.Record.Text, res.Stats.Notes)
		}
	}
}
