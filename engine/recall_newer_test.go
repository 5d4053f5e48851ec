package engine

import (
	"context"
	"testing"
	"time"
)

func TestSettles(t *testing.T) {
	for text, want := range map[string]bool{
		"算了，周日搬完周一还得上班，太累。那就30号周六搬吧。":                             true,
		"我跟马骏商量了一下，行，就腾讯云吧。":                                      true,
		"还是讲团队成长吧，技术债明年再说。":                                       true,
		"Not the 27th, that's board week. OK, October 20 it is.":  true,
		"Talked it over with Priya. Let's go with Grafana Cloud.": true,
		"Saturday the 23rd, final answer.":                        true,
		"Yes it is! I'm a big fan of Nintendo games.":             false,
		"That's what it is.": false,
		"团建预算我先按每人八百报的，一共十个人，八千块。":                  false,
		"For 4.0 I'd propose we ship on October 6.": false,
	} {
		if got := settles(text); got != want {
			t.Errorf("settles(%q) = %v, want %v", text, got, want)
		}
	}
}

// TestSettleTurn: the turn that settles a move date two turns after the
// proposal ranks above it in a question about the current state, though
// only the proposal names the move.
func TestSettleTurn(t *testing.T) {
	ctx := context.Background()
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t0 := time.Date(2027, 9, 27, 21, 0, 0, 0, time.UTC)
	texts := []struct{ role, text string }{
		{"周婷", "房东说10月20号以后哪天都行。"},
		{"assistant", "你们想工作日还是周末？"},
		{"周婷", "我老公想23号周六搬家。"},
		{"assistant", "周六帮忙的人多一些，不过那天孩子不是有比赛吗？"},
		{"周婷", "对，算了，那就30号周六吧。"},
		{"assistant", "好的。"},
	}
	var recs []Record
	for i, x := range texts {
		recs = append(recs, Record{Agent: "a", Session: "s1", Role: x.role, Text: x.text, Time: t0.Add(time.Duration(i) * time.Minute)})
	}
	recs = append(recs, Record{Agent: "a", Session: "s2", Role: "周婷", Text: "今天去超市买了点水果。", Time: t0.Add(48 * time.Hour)})
	if _, err := db.AppendBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []Mode{ModeSparse, ModeLazy} {
		res, err := db.Recall(ctx, Query{Agent: "a", Text: "我们最后定在哪天搬家？", K: 5, Mode: mode, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 || res.Memories[0].Text != texts[4].text {
			t.Fatalf("%s: top %v: want the settling turn first (%v)", mode, res.Memories, res.Stats.Notes)
		}
	}
}

// TestNamedFirstPerson: in a chat whose user is named by name, "我" is not
// the assistant: the person's statement ranks above the assistant's
// restatement of it.
func TestNamedFirstPerson(t *testing.T) {
	ctx := context.Background()
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t0 := time.Date(2027, 9, 3, 21, 0, 0, 0, time.UTC)
	recs := []Record{
		{Agent: "a", Session: "s1", Role: "周婷", Text: "我家猫叫年糕，是只三岁的橘猫，特别能吃。", Time: t0},
		{Agent: "a", Session: "s1", Role: "assistant", Text: "年糕这个名字好可爱！橘猫确实容易胖，注意控制饭量。", Time: t0.Add(time.Minute)},
		{Agent: "a", Session: "s2", Role: "周婷", Text: "今天去超市买了点水果。", Time: t0.Add(48 * time.Hour)},
	}
	if _, err := db.AppendBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []Mode{ModeSparse, ModeLazy} {
		res, err := db.Recall(ctx, Query{Agent: "a", Text: "我家猫叫什么名字？", K: 3, Mode: mode, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 || res.Memories[0].Text != recs[0].Text {
			t.Fatalf("%s: top %v: want the person's statement first (%v)", mode, res.Memories, res.Stats.Notes)
		}
	}
}
