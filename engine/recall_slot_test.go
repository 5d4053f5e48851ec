package engine

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestAskedSlot checks the type of value a question asks for, in English
// and Chinese, and that a question asking for none has none.
func TestAskedSlot(t *testing.T) {
	for q, want := range map[string]slotKind{
		"When is the boiler service?":              slotTime,
		"What time is standup?":                    slotTime,
		"家长会几点开始？":                                 slotTime,
		"答谢会是几号？":                                  slotTime,
		"Where is the trade show?":                 slotPlace,
		"Which room does the study group meet in?": slotPlace,
		"春季展会在哪个场馆？":                               slotPlace,
		"Who owns the Northwind deal?":             slotOwner,
		"谁去车站接我妈？":                                 slotOwner,
		"How much is the rent?":                    slotMoney,
		"宽带一年多少钱？":                                 slotMoney,
		"现在服务器预算是每月多少？":                            slotMoney,
		"How many people signed up?":               slotAmount,
		"新开了几个区服？":                                 slotAmount,
		"Why did we switch vendors?":               slotNone,
		"What did Maria say?":                      slotNone,
		"王芳说了什么":                                   slotNone,
	} {
		if got := askedSlot(q); got != want {
			t.Errorf("askedSlot(%q) = %s, want %s", q, got, want)
		}
	}
}

// TestSlotValues checks the values the detectors find: a restatement names
// the same values as the statement, a revision another, and a time relative
// to when it was said in the past is no value.
func TestSlotValues(t *testing.T) {
	for _, c := range []struct {
		kind             slotKind
		old, oldRole     string
		new, newRole     string
		restates         bool
		wantOld, wantNew bool // each states a value
	}{
		{slotOwner, "Heads up: I'm moving teams. Jen takes over Northwind starting Monday.", "Omar", "Yep, I've got Northwind, Omar walked me through it.", "Jen", true, true, true},
		{slotOwner, "I'll own the Northwind deal.", "Omar", "Jen takes over Northwind starting Monday.", "Omar", false, true, true},
		{slotOwner, "接我妈的事交给老周。", "user", "那天老周要加班，我自己去接她吧。", "user", false, true, true},
		{slotTime, "The boiler service is on March 9.", "user", "He rescheduled to March 12 at 8am.", "user", false, true, true},
		{slotTime, "家长会定在3月12号下午两点。", "user", "家长会挪到3月14号上午九点。", "user", false, true, true},
		{slotTime, "I won my first tournament last week.", "Nate", "I won another one yesterday!", "Nate", false, false, false},
		{slotPlace, "The trade show is in Chicago this year.", "Jen", "The organizers relocated it to Denver.", "Sam", false, true, true},
		{slotPlace, "模拟考在市图书馆的自习室。", "小雨", "模拟考换个地方，去阿峰公司的会议室考。", "小雨", false, true, true},
		{slotAmount, "Finance gave us $18k for the booth.", "Sam", "Booth budget: $18k, as finance said.", "Rita", true, true, true},
		{slotMoney, "Finance gave us $18k for the booth.", "Sam", "The booth budget went up to 25k.", "Rita", false, true, true},
		{slotMoney, "服务器预算按每月六万五来做。", "孙浩", "服务器预算先提高到每月七万五。", "周敏", false, true, true},
		{slotMoney, "主要是新开的两个区服，要临时扩容。", "孙浩", "一节课两百，每周六下午。", "user", false, false, true},
		{slotAmount, "市场部这个季度已经超支了百分之十五。", "王芳", "市场部超支降到了百分之十，还在消化。", "王芳", false, true, true},
		{slotAmount, "华东区的目标先报三百万。", "王磊", "往下调到两百六十万比较稳。", "王磊", false, true, true},
	} {
		o, n := slotValues(c.kind, c.old, c.oldRole), slotValues(c.kind, c.new, c.newRole)
		if (len(o) > 0) != c.wantOld || (len(n) > 0) != c.wantNew {
			t.Errorf("%s: values %q and %q: want some %v, %v", c.kind, o, n, c.wantOld, c.wantNew)
			continue
		}
		if c.wantOld && c.wantNew && subset(n, o) != c.restates {
			t.Errorf("%s: %q then %q: restatement %v, want %v", c.kind, o, n, subset(n, o), c.restates)
		}
	}
}

// TestSlotSupersession checks, on a small history, that the newer value of
// a slot ranks first whether or not the question says "now" (and that it
// did not without the rule, so the check can fail), that a question about
// the earlier state and a question about an attribute that did not change
// keep the older statement first (TestSlotValues checks restatements).
func TestSlotSupersession(t *testing.T) {
	ctx := context.Background()
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t0 := time.Date(2027, 3, 2, 10, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	recs := []Record{
		{Agent: "a", Session: "p1", Role: "Jen", Time: t0, Text: "The spring trade show is in Chicago this year, May 14 to 16, and we have a trade show booth."},
		{Agent: "a", Session: "p1", Role: "Sam", Time: t0.Add(time.Minute), Text: "Agenda today: the show, the quota, the booth."},
		{Agent: "a", Session: "p2", Role: "Rita", Time: t0.Add(7 * day), Text: "Did anyone book hotels yet?"},
		{Agent: "a", Session: "p3", Role: "Sam", Time: t0.Add(14 * day), Text: "News: the organizers relocated the spring trade show to Denver."},
		{Agent: "a", Session: "p4", Role: "Omar", Time: t0.Add(20 * day), Text: "I'll own the Northwind deal for now."},
		{Agent: "a", Session: "p5", Role: "Jen", Time: t0.Add(21 * day), Text: "Heads up: Omar moved teams, so Jen owns the Northwind deal from today."},
	}
	if _, err := db.AppendBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	top := func(q string, mode Mode) (string, []string) {
		t.Helper()
		res, err := db.Recall(ctx, Query{Agent: "a", Text: q, K: 5, Mode: mode, Now: t0.Add(30 * day), Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 {
			t.Fatalf("%q: no memories", q)
		}
		return res.Memories[0].Text, res.Stats.Notes
	}
	defer func(on bool) { slotOn = on }(slotOn)
	for _, mode := range []Mode{ModeSparse, ModeLazy} {
		slotOn = false
		if got, _ := top("Where is the spring trade show?", mode); got != recs[0].Text {
			t.Fatalf("%s, rule off: top %q: want the older place first, else this test checks nothing", mode, got)
		}
		slotOn = true
		got, notes := top("Where is the spring trade show?", mode)
		if got != recs[3].Text {
			t.Errorf("%s: top %q: want the newer place (%v)", mode, got, notes)
		}
		if !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "moved above an older one") }) {
			t.Errorf("%s: notes %v: want the rule's note", mode, notes)
		}
		if got, _ := top("Where was the spring trade show originally?", mode); got != recs[0].Text {
			t.Errorf("%s: earlier state: top %q: want the older place", mode, got)
		}
		if got, _ := top("When is the spring trade show?", mode); got != recs[0].Text {
			t.Errorf("%s: the dates never changed: top %q: want the statement of them", mode, got)
		}
		if got, notes := top("Who owns the Northwind deal?", mode); got != recs[5].Text {
			t.Errorf("%s: owner: top %q: want the handover (%v)", mode, got, notes)
		}
	}
}

// TestSlotTypePast checks that a question about an earlier time still
// prefers the records stating a value of the asked type (rule 1), and
// that it did not without that (so the check can fail).
func TestSlotTypePast(t *testing.T) {
	ctx := context.Background()
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t0 := time.Date(2027, 3, 2, 10, 0, 0, 0, time.UTC)
	recs := []Record{
		{Agent: "a", Session: "m1", Role: "周敏", Time: t0, Text: "今天主要定一下年会的场地和预算。"},
		{Agent: "a", Session: "m1", Role: "孙浩", Time: t0.Add(5 * time.Minute), Text: "场地定在滨江酒店。"},
		{Agent: "a", Session: "m1", Role: "周敏", Time: t0.Add(9 * time.Minute), Text: "年会按八万来做。"},
		{Agent: "a", Session: "c2", Role: "user", Time: t0.Add(10 * 24 * time.Hour), Text: "帮我订明天的机票。"},
	}
	if _, err := db.AppendBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	top := func() string {
		t.Helper()
		res, err := db.Recall(ctx, Query{Agent: "a", Text: "两周前的会上年会预算定了多少？", K: 3, Mode: ModeSparse,
			Now: t0.Add(14 * 24 * time.Hour), ParseTime: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 {
			t.Fatal("no memories")
		}
		return res.Memories[0].Text
	}
	defer func(on bool) { slotTypePast = on }(slotTypePast)
	slotTypePast = false
	if got := top(); got != recs[0].Text {
		t.Fatalf("rule off: top %q: want the agenda first, else this test checks nothing", got)
	}
	slotTypePast = true
	if got := top(); got != recs[2].Text {
		t.Errorf("top %q: want the statement of the sum", got)
	}
}
