package consolidate

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

var cst = time.FixedZone("CST", 8*3600)

// meetingInput is a small meeting said on Tuesday 2026-12-01 in Shanghai.
func meetingInput() Input {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, cst)
	turn := func(id uint64, min int, speaker, role, text string) Turn {
		return Turn{ID: id, Time: t0.Add(time.Duration(min) * time.Minute), Speaker: speaker, Role: role, Text: text}
	}
	return Input{Agent: "meeting", Records: []Selected{
		{Turn: turn(10, 5, "王磊", "host", "我们决定产品上线时间定在十二月十五号。")},
		{Turn: turn(20, 9, "李娜", "engineer", "我负责通知运维，下周一下午两点前发出变更单。")},
		{Turn: turn(31, 12, "赵强", "engineer", "好的，我来。"),
			Before: []Turn{turn(30, 11, "王磊", "host", "谁负责更新定价页面？")}},
		{Turn: turn(40, 20, "Alice", "pm", "I prefer weekly demos over a big-bang review.")},
		{Turn: turn(50, 30, "王磊", "host", "就像刚才说的，上线时间推迟到十二月二十二号。")},
		{Turn: turn(60, 31, "Bob", "finance", "Bob will send the revised budget tomorrow at 3pm.")},
	}}
}

func TestRulesConsolidate(t *testing.T) {
	c, err := NewRules(Options{})
	if err != nil {
		t.Fatal(err)
	}
	in := meetingInput()
	units, err := c.Consolidate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	type brief struct {
		typ     Type
		topic   string
		content string
		owner   string
		due     time.Time
		sources []uint64
	}
	var got []brief
	for _, u := range units {
		b := brief{typ: u.Type, topic: u.Topic, content: u.Content, sources: u.SourceIDs}
		if len(u.ActionItems) > 0 {
			b.owner, b.due = u.ActionItems[0].Owner, u.ActionItems[0].Due
		}
		got = append(got, b)
		if u.Agent != "meeting" || u.Confidence <= 0 || u.Confidence > 0.95 {
			t.Errorf("unit %+v: agent or confidence wrong", u)
		}
	}
	want := []brief{
		{TypeDecision, "产品上线时间", "产品上线时间定在十二月十五号", "", time.Time{}, []uint64{10}},
		{TypeActionItem, "通知运维，下周一下午两点前发出变更单", "通知运维，下周一下午两点前发出变更单", "李娜", time.Date(2026, 12, 7, 14, 0, 0, 0, cst), []uint64{20}},
		{TypeActionItem, "更新定价页面", "赵强: 更新定价页面", "赵强", time.Time{}, []uint64{30, 31}},
		{TypePreference, "weekly demos over a big-bang review", "weekly demos over a big-bang review", "", time.Time{}, []uint64{40}},
		{TypeDecision, "上线时间", "上线时间推迟到十二月二十二号", "", time.Time{}, []uint64{50}},
		{TypeActionItem, "send the revised budget tomorrow", "send the revised budget tomorrow at 3pm", "Bob", time.Date(2026, 12, 2, 15, 0, 0, 0, cst), []uint64{60}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d units, want %d:\n%+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.typ != w.typ || g.topic != w.topic || g.content != w.content || g.owner != w.owner || !g.due.Equal(w.due) || !reflect.DeepEqual(g.sources, w.sources) {
			t.Errorf("unit %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	// The host's decision is more certain than the engineer's words; a
	// back-reference adds to it.
	if units[0].Confidence != 0.9 || units[4].Confidence != 0.95 || units[1].Confidence != 0.8 {
		t.Errorf("confidences %v %v %v, want 0.9 0.95 0.8", units[0].Confidence, units[4].Confidence, units[1].Confidence)
	}
	// Deterministic: same input in another order, same units.
	rev := in
	rev.Records = append([]Selected(nil), in.Records...)
	for i, j := 0, len(rev.Records)-1; i < j; i, j = i+1, j-1 {
		rev.Records[i], rev.Records[j] = rev.Records[j], rev.Records[i]
	}
	again, err := c.Consolidate(context.Background(), rev)
	if err != nil || !reflect.DeepEqual(again, units) {
		t.Fatalf("second run differs: %v", err)
	}
}

func TestRulesInputErrors(t *testing.T) {
	c, _ := NewRules(Options{})
	good := meetingInput()
	for _, tc := range []struct {
		mut  func(in *Input)
		want string
	}{
		{func(in *Input) { in.Records = nil }, "Input.Records is empty"},
		{func(in *Input) { in.Records[1].ID = 0 }, "Input.Records[1]: id is 0"},
		{func(in *Input) { in.Records[2].ID = in.Records[0].ID }, "selected twice"},
		{func(in *Input) { in.Records[0].Text = " " }, "text is empty"},
		{func(in *Input) { in.Records[0].Time = time.Time{} }, "time is zero"},
		{func(in *Input) { in.Records[2].Before[0].Text = "\xff" }, "Input.Records[2].Before[0]"},
	} {
		in := good
		in.Records = make([]Selected, len(good.Records))
		copy(in.Records, good.Records)
		in.Records[2].Before = append([]Turn(nil), good.Records[2].Before...)
		tc.mut(&in)
		_, err := c.Consolidate(context.Background(), in)
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err %v, want %q", err, tc.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Consolidate(ctx, good); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
	if _, err := NewRules(Options{Threshold: 2}); !errors.Is(err, ErrOptions) {
		t.Errorf("NewRules with a bad threshold: %v", err)
	}
}

func TestTopicKeyAndSameTopic(t *testing.T) {
	key := func(s string) []string {
		k, err := TopicKey(s)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"上线时间", "产品上线时间", true},
		{"上线时间定在十二月十五号", "上线时间推迟到十二月二十二号", true},
		{"the launch date", "Launch dates", true},
		{"launch date", "launch party", false},
		{"预算", "上线时间", false},
		{"十二月十五号", "十二月十五号", false}, // values only: no subject
	} {
		if got := SameTopic(key(tc.a), key(tc.b)); got != tc.same {
			t.Errorf("SameTopic(%q %v, %q %v) = %v, want %v", tc.a, key(tc.a), tc.b, key(tc.b), got, tc.same)
		}
	}
	for _, tc := range []struct{ content, topic string }{
		{"上线时间定在十二月十五号", "上线时间"},
		{"the launch moves to March 3rd", "the launch"},
		{"首发市场是新加坡", "首发市场"},
		{"用微服务架构", "用微服务架构"},
	} {
		if got := Topic(tc.content); got != tc.topic {
			t.Errorf("Topic(%q) = %q, want %q", tc.content, got, tc.topic)
		}
	}
}

func TestLink(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, cst)
	u := func(id uint64, typ Type, min int, topic string, owner string) Unit {
		x := Unit{ID: id, Type: typ, Topic: topic, Content: topic, SourceIDs: []uint64{id * 10}, Time: t0.Add(time.Duration(min) * time.Minute), Agent: "a"}
		if owner != "" {
			x.ActionItems = []ActionItem{{Owner: owner, Task: topic}}
		}
		return x
	}
	existing := []Unit{
		u(1, TypeDecision, 0, "上线时间", ""),
		u(2, TypeDecision, 1, "预算上限", ""),
		u(3, TypeActionItem, 2, "通知运维", "李娜"),
	}
	fresh := []Unit{
		u(5, TypeDecision, 40, "产品上线时间", ""), // supersedes 1, then is superseded by 6
		u(6, TypeDecision, 50, "上线时间", ""),
		u(7, TypeActionItem, 41, "通知运维", "赵强"), // another owner: both live
		u(8, TypePreference, 42, "上线时间", ""),   // another type: no link
	}
	fresh[3].Agent = "b"
	sup, err := Link(existing, fresh)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sup, []uint64{1}) {
		t.Fatalf("superseded existing %v, want [1]", sup)
	}
	if existing[0].SupersededBy != 5 || !existing[1].Live() || !existing[2].Live() {
		t.Errorf("existing after Link: %+v", existing)
	}
	if !reflect.DeepEqual(fresh[0].Supersedes, []uint64{1}) || fresh[0].SupersededBy != 6 {
		t.Errorf("unit 5: supersedes %v, superseded by %d", fresh[0].Supersedes, fresh[0].SupersededBy)
	}
	if !reflect.DeepEqual(fresh[1].Supersedes, []uint64{5}) || !fresh[1].Live() {
		t.Errorf("unit 6: supersedes %v, live %v", fresh[1].Supersedes, fresh[1].Live())
	}
	if !fresh[2].Live() || fresh[2].Supersedes != nil || !fresh[3].Live() || fresh[3].Supersedes != nil {
		t.Errorf("units 7, 8 should be unlinked: %+v %+v", fresh[2], fresh[3])
	}
	for _, x := range append(existing, fresh...) {
		if err := x.Validate(); err != nil {
			t.Errorf("unit %d invalid after Link: %v", x.ID, err)
		}
	}
	if _, err := Link(nil, []Unit{{Content: "x"}}); !errors.Is(err, ErrInvalidUnit) {
		t.Errorf("Link with id 0: %v", err)
	}
}

func TestRulesAgreementBorrowsTopic(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, cst)
	prev := Turn{ID: 1, Time: t0, Speaker: "王磊", Role: "host", Text: "好，那我们决定产品上线时间定在十二月十五号。"}
	in := Input{Agent: "a", Records: []Selected{
		{Turn: Turn{ID: 2, Time: t0.Add(time.Second), Speaker: "赵强", Text: "同意，十二月十五号没问题。"}, Before: []Turn{prev}},
		{Turn: Turn{ID: 3, Time: t0.Add(time.Hour), Speaker: "王磊", Text: "上线时间推迟到十二月二十二号。"}},
	}}
	c, _ := NewRules(Options{})
	units, err := c.Consolidate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(units) != 2 || units[0].Topic != "产品上线时间" || !reflect.DeepEqual(units[0].SourceIDs, []uint64{1, 2}) {
		t.Fatalf("agreement unit %+v", units[0])
	}
	units[0].ID, units[1].ID = 10, 11
	if _, err := Link(nil, units); err != nil || units[0].SupersededBy != 11 {
		t.Fatalf("the revision does not supersede the agreement: %v %+v", err, units[0])
	}
	// Without the turn before, the agreement keeps its own words as topic.
	in.Records[0].Before = nil
	units, _ = c.Consolidate(context.Background(), in)
	if units[0].Topic != "十二月十五号没问题" {
		t.Errorf("topic %q", units[0].Topic)
	}
}

func TestSelect(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, cst)
	var turns []Turn
	for i, text := range []string{"嗯", "好的", "我们决定下周一发布。", "对", "OK", "nice", "Bob will send the notes.", "thanks"} {
		turns = append(turns, Turn{ID: uint64(i + 1), Time: t0.Add(time.Duration(i) * time.Second), Speaker: "s", Role: "engineer", Text: text})
	}
	var o Options
	o.EnsureDefaults()
	in := o.Select("a", turns)
	if len(in.Records) != 2 || in.Records[0].ID != 3 || in.Records[1].ID != 7 {
		t.Fatalf("selected %+v", in.Records)
	}
	r := in.Records[1]
	if len(r.Before) != 2 || r.Before[0].ID != 5 || r.Before[1].ID != 6 || len(r.After) != 1 || r.After[0].ID != 8 {
		t.Errorf("context of 7: before %v after %v", r.Before, r.After)
	}
	if err := in.Validate(); err != nil {
		t.Fatal(err)
	}
	o.ContextTurns = -1
	if in := o.Select("a", turns); len(in.Records[0].Before) != 0 || len(in.Records[0].After) != 0 {
		t.Errorf("ContextTurns -1 still gives context: %+v", in.Records[0])
	}
}

// TestRulesEchoConfirms: an assistant's "Noted: …" restating the user's
// turn makes no unit of its own when both are selected; the user's unit
// cites it and gains echoConfidence. Not selected, or adding its own
// words, the assistant's turn is consolidated as before.
func TestRulesEchoConfirms(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	user := Turn{ID: 1, Time: t0, Speaker: "user", Role: "user", Text: "Let's set the connection pool size to 32 for billing-api"}
	echo := func(id uint64, text string) Selected {
		// The engine leaves a selected turn's Role empty when it is the
		// speaker (buildInput).
		return Selected{Turn: Turn{ID: id, Time: t0.Add(time.Minute), Speaker: "assistant", Text: text}, Before: []Turn{user}}
	}
	c, _ := NewRules(Options{})
	consolidate := func(recs ...Selected) []Unit {
		t.Helper()
		units, err := c.Consolidate(context.Background(), Input{Agent: "a", Records: recs})
		if err != nil {
			t.Fatal(err)
		}
		return units
	}
	alone := consolidate(Selected{Turn: user})
	if len(alone) != 1 {
		t.Fatalf("the user's turn alone: %d units, want 1: %+v", len(alone), alone)
	}
	for _, text := range []string{"Noted: connection pool size 32 for billing-api.", "记下了：connection pool size 32, billing-api。"} {
		units := consolidate(Selected{Turn: user}, echo(2, text))
		if len(units) != 1 || units[0].Content != alone[0].Content || !reflect.DeepEqual(units[0].SourceIDs, []uint64{1, 2}) ||
			units[0].Confidence != min(alone[0].Confidence+echoConfidence, 0.95) {
			t.Errorf("%q: units %+v, want the user's unit citing both, confidence %.2f", text, units, alone[0].Confidence+echoConfidence)
		}
	}
	// The echo alone (the user's turn not selected) is consolidated.
	if units := consolidate(echo(2, "Noted: connection pool size 32 for billing-api.")); len(units) != 1 || units[0].SourceIDs[0] != 2 {
		t.Errorf("the echo alone: %+v", units)
	}
	// An assistant's turn that says more than the turn before is no echo.
	if units := consolidate(Selected{Turn: user}, echo(2, "Noted: and we decided to move billing-api to Postgres 16 next quarter.")); len(units) < 2 {
		t.Errorf("an answer with new words: %d units, want its own too: %+v", len(units), units)
	}
}

func TestStripAck(t *testing.T) {
	for _, c := range []struct {
		in, rest string
		ok       bool
	}{
		{"Noted: pool size 32.", "pool size 32.", true},
		{"OK, will ship Friday", "will ship Friday", true},
		{"记下了：周报用表格", "周报用表格", true},
		{"Nothing to note", "", false},
		{"okra is a vegetable", "", false},
		{"noted", "", false},
		{"NOTED: pool", "pool", true},
		{"O\u212a, fine", "", false}, // a Kelvin sign folds to k: no byte-wise prefix
		{"İİ", "", false},
	} {
		if rest, ok := stripAck(c.in); rest != c.rest || ok != c.ok {
			t.Errorf("stripAck(%q) = %q, %v; want %q, %v", c.in, rest, ok, c.rest, c.ok)
		}
	}
}

// TestRulesAcceptedProposal: a proposal the next speaker accepts is a
// decision citing both turns; a proposal rejected, unanswered, accepted
// by its own speaker, asked as a question, or about the meeting's own
// course is none.
func TestRulesAcceptedProposal(t *testing.T) {
	c, err := NewRules(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, cst)
	turn := func(id uint64, speaker, text string) Turn {
		return Turn{ID: id, Time: t0.Add(time.Duration(id) * time.Minute), Speaker: speaker, Text: text}
	}
	for _, tc := range []struct {
		proposal, speaker2, reply string
		want                      string // the decision's content; "" for none
	}{
		{"Let's set the connection pool size to 32 for billing-api", "assistant", "Done. billing-api now uses a pool of 32 connections.", "set the connection pool size to 32 for billing-api"},
		{"OK, let's cap the batch size at 500.", "Bob", "Sounds good.", "cap the batch size at 500"},
		{"I suggest we freeze the API on Friday.", "Bob", "Agreed.", "freeze the API on Friday"},
		{"我建议把闲置的测试环境都关掉。", "王磊", "同意，晚上和周末也关。", "把闲置的测试环境都关掉"},
		{"要不下周三再评审一次。", "李娜", "好的。", "下周三再评审一次"},
		{"Let's set the pool size to 64.", "Bob", "OK, but not before the release.", ""},
		{"Let's set the pool size to 64.", "user", "Actually make it 48.", ""},
		{"Let's set the pool size to 64.", "user", "OK.", ""}, // the same speaker
		{"Let's move on to the next item.", "Bob", "OK.", ""},
		{"Let's go get lunch.", "Bob", "Sure.", ""},
		{"Let's ship it on Friday?", "Bob", "OK.", ""},
		// An instruction the assistant accepts is a decision; between
		// people an order someone acknowledges is their task.
		{"Actually make the pool size 64, 32 was too small.", "assistant", "OK, 64 it is.", "make the pool size 64, 32 was too small"},
		{"Please switch the dashboards to dark mode.", "assistant", "Done.", "switch the dashboards to dark mode"},
		{"把默认超时调到30秒。", "assistant", "好的，已经调到30秒了。", "把默认超时调到30秒"},
		{"Set the review for Friday.", "Bob", "OK.", ""},
		{"Make the cache 8 GB.", "assistant", "That host has only 4 GB; 2 GB would be safer.", ""},
	} {
		in := Input{Agent: "a", Records: []Selected{{
			Turn:  turn(1, "user", tc.proposal),
			After: []Turn{turn(2, tc.speaker2, tc.reply)},
		}}}
		units, err := c.Consolidate(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		var got []Unit
		for _, u := range units {
			if u.Type == TypeDecision {
				got = append(got, u)
			}
		}
		switch {
		case tc.want == "" && len(got) > 0:
			t.Errorf("%q / %q: decisions %+v, want none", tc.proposal, tc.reply, got)
		case tc.want != "" && (len(got) != 1 || got[0].Content != tc.want || !reflect.DeepEqual(got[0].SourceIDs, []uint64{1, 2})):
			t.Errorf("%q / %q: decisions %+v, want %q citing 1 and 2", tc.proposal, tc.reply, got, tc.want)
		}
	}
}

// TestRulesAcceptingReplyNoFact: the reply that accepts a selected
// proposal ("OK, 64 it is.") is a source of the decision, not a fact of
// its own; selected alone, it keeps its fact.
func TestRulesAcceptingReplyNoFact(t *testing.T) {
	c, err := NewRules(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	ask := Turn{ID: 3, Time: t0, Speaker: "user", Text: "Actually make the pool size 64, 32 was too small under load."}
	reply := Turn{ID: 4, Time: t0.Add(time.Minute), Speaker: "assistant", Text: "OK, 64 it is."}
	both := Input{Agent: "a", Records: []Selected{{Turn: ask, After: []Turn{reply}}, {Turn: reply, Before: []Turn{ask}}}}
	units, err := c.Consolidate(context.Background(), both)
	if err != nil {
		t.Fatal(err)
	}
	if len(units) != 1 || units[0].Type != TypeDecision || !reflect.DeepEqual(units[0].SourceIDs, []uint64{3, 4}) {
		t.Errorf("both selected: %+v, want one decision citing 3 and 4", units)
	}
	alone, err := c.Consolidate(context.Background(), Input{Agent: "a", Records: []Selected{{Turn: reply, Before: []Turn{ask}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(alone) != 1 || alone[0].Type != TypeFact {
		t.Errorf("the reply alone: %+v, want its fact", alone)
	}
}

// TestRulesSeveralAssignments: a sentence that assigns several tasks gives
// one unit whose content keeps every owner with their task, in Chinese
// and in English.
func TestRulesSeveralAssignments(t *testing.T) {
	c, err := NewRules(Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 15, 27, 0, 0, cst)
	for _, tc := range []struct {
		text, content string
		owners        []string
	}{
		{"最后确认一下：上线时间是十二月二十二号；赵强负责通知运维，Alice 负责定价页面，张伟负责压测报告。",
			"赵强负责通知运维，Alice 负责定价页面，张伟负责压测报告", []string{"赵强", "Alice", "张伟"}},
		{"To recap, Dana will book the venue, Sam will write the agenda.",
			"Dana will book the venue, Sam will write the agenda", []string{"Dana", "Sam"}},
	} {
		in := Input{Agent: "meeting", Records: []Selected{{Turn: Turn{ID: 1, Time: t0, Speaker: "王磊", Role: "host", Text: tc.text}}}}
		units, err := c.Consolidate(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		var got *Unit
		for i := range units {
			if units[i].Type == TypeActionItem {
				got = &units[i]
			}
		}
		if got == nil {
			t.Fatalf("%q: no action item in %+v", tc.text, units)
		}
		var owners []string
		for _, a := range got.ActionItems {
			owners = append(owners, a.Owner)
		}
		if got.Content != tc.content || !reflect.DeepEqual(owners, tc.owners) {
			t.Errorf("%q: content %q owners %v, want %q %v", tc.text, got.Content, owners, tc.content, tc.owners)
		}
	}
}
