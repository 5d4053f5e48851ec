package engine

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestSpeakerReference: the X of "what did X say" questions, and the
// questions that name no third person.
func TestSpeakerReference(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		q, ref string
	}{
		{"What did Jenny say on this morning's call?", "jenny"},
		{"What did the boss's daughter bring up at today's meeting?", "boss s daughter"},
		{"What did Lan's dad have to say on the call this morning?", "lan s dad"},
		{"我妈早上视频里都说了些什么？", "我妈"},
		{"我老公今天会上说了些啥？", "我老公"},
		{"老马他小舅子今天在会上讲了什么？", "老马他小舅子"},
		{"earlier today, what did we say about the ad campaign?", ""}, // the first person
		{"what did I ask you to draft an hour ago?", ""},
		{"刚才谁说服务器费用超了？", ""},                              // who: a mention question
		{"2月21号那次视频都聊了什么？", ""},                           // no one named
		{"今天上午复盘会说了什么影响？", ""},                            // a meeting
		{"前天群里大家说了什么？", ""},                               // a group chat, everyone
		{"今天早上一开始说宽带让谁去办来着？", ""},                         // not "what did X say"
		{"What did the landlord ask for last month?", ""}, // a request, not speech
	} {
		ref, ok := speakerReference(c.q, now)
		if ref != c.ref || ok != (c.ref != "") {
			t.Errorf("%q: %q %v, want %q", c.q, ref, ok, c.ref)
		}
	}
}

// TestParticipants: asked what someone said on this morning's call by a
// name no role answers to ("Jenny" for 沈建英), the recall puts each
// participant's best record first, the user's and the assistant's turns
// that mention her after them; without the rule those turns and the
// host's greeting (which holds her name) fill the top 3.
func TestParticipants(t *testing.T) {
	now := time.Date(2028, 4, 8, 12, 0, 0, 0, time.UTC)
	call := turns("a", "call-0408", now.Add(-3*time.Hour),
		[2]string{"沈悦", "大家早。Uncle Mike and Aunt Jenny are with us on the call for the first twenty minutes."},
		[2]string{"Mike Walsh", "Evening from Seattle! It's Friday night here."},
		[2]string{"沈建英", "五一那趟机票只能退了，我想改到端午前后回来。"},
		[2]string{"Mike Walsh", "Sixty kilos works for me, same labels as in March."},
		[2]string{"沈建英", "我看了机票，5月26号礼拜五下午到浦东，6月4号晚上走。"},
		[2]string{"沈悦", "好，那寿宴挪到27号中午。"})
	chat := turns("a", "chat-0408", now.Add(-90*time.Minute),
		[2]string{"user", "Jenny said on the call she is changing her flights; remind me to call Jenny about the birthday lunch."},
		[2]string{"assistant", "I'll remind you to call Jenny about the birthday lunch this evening."},
		[2]string{"user", "Also note that Jenny's call went well."})
	db := memStore(t, now, append(call, chat...))
	jenny := func() bool {
		res, err := db.Recall(context.Background(), Query{Agent: "a", Text: "What did Jenny say on this morning's call?", K: 3, Now: now, ParseTime: true})
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(res.Memories, func(m Memory) bool { return m.Role == "沈建英" })
	}
	if !jenny() {
		t.Errorf("no record of 沈建英 in the top 3")
	}
	noParticipants = true
	defer func() { noParticipants = false }()
	if jenny() {
		t.Errorf("a record of 沈建英 in the top 3 without the rule too: the test no longer tests it")
	}
}
