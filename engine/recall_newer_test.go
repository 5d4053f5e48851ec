package engine

import (
	"context"
	"fmt"
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

// TestRevisionPassesInheritedTopic: the first plan follows a turn naming
// the topic and inherits its words through session context; the revision,
// weeks later, names the new value and not the topic. In a question about
// the current value the revision ranks first (revises); about the first
// plan, the plan does.
func TestRevisionPassesInheritedTopic(t *testing.T) {
	ctx := context.Background()
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t0 := time.Date(2027, 1, 4, 9, 0, 0, 0, time.UTC)
	recs := []Record{
		{Session: "m1", Role: "老周", Text: "诊所搬迁的事今天先过一下。"},
		{Session: "m1", Role: "老周", Text: "搬迁日期暂定2月8日，新址在东门。"},
		{Session: "m1", Role: "小何", Text: "旧设备我来打包，分三批运。"},
		{Session: "m2", Role: "老周", Text: "早，今天两件事：装修和设备。"},
		{Session: "m2", Role: "小何", Text: "新址装修延误，搬迁改到2月22日。"},
		{Session: "m2", Role: "老周", Text: "设备运输公司我已经联系好了。"},
	}
	for i := range recs {
		recs[i].Agent = "a"
		recs[i].Time = t0.Add(time.Duration(i) * time.Minute)
		if recs[i].Session == "m2" {
			recs[i].Time = recs[i].Time.Add(21 * 24 * time.Hour)
		}
	}
	if _, err := db.AppendBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(22 * 24 * time.Hour)
	for _, c := range []struct{ q, want string }{
		{"诊所现在哪天搬迁？", recs[4].Text},
		{"诊所搬迁原来定的是哪天？", recs[1].Text},
	} {
		for _, mode := range []Mode{ModeSparse, ModeLazy} {
			res, err := db.Recall(ctx, Query{Agent: "a", Text: c.q, K: 5, Mode: mode, Now: now, Explain: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Memories) == 0 || res.Memories[0].Text != c.want {
				var got []string
				for _, m := range res.Memories {
					got = append(got, fmt.Sprintf("%s %.3f %v", m.Text, m.Score, m.Reasons))
				}
				t.Errorf("%s %q: got %q, want %q first", mode, c.q, got, c.want)
			}
		}
	}
}

func TestRevises(t *testing.T) {
	rec := func(role, text string) *cand { return &cand{rec: Record{Role: role, Text: text}} }
	old := rec("老周", "搬迁日期暂定2月8日，新址在东门。")
	for _, c := range []struct {
		kind slotKind
		b    *cand
		want bool
	}{
		{slotTime, rec("小何", "新址装修延误，搬迁改到2月22日。"), true},
		{slotTime, rec("assistant", "好的，搬迁改到2月22日。"), false}, // an echo
		{slotTime, rec("小何", "搬迁还是2月8日。"), false},            // no change stated
		{slotTime, rec("小何", "搬迁改到下午，还是2月8日。"), false},       // the same value
		{slotTime, rec("小何", "装修延误了，搬迁要推迟。"), false},         // no value
		// No slot asked: a change to other numbers (settingRevisions).
		{slotNone, rec("小何", "新址装修延误，搬迁改到2月22日。"), true},
		{slotNone, rec("小何", "装修延误了，搬迁要推迟。"), false},       // no number, no choice replaced
		{slotNone, rec("小何", "搬迁后来还是2月8日。"), false},        // the same numbers
		{slotNone, rec("assistant", "好的，改到2月22日。"), false}, // an echo
		// No slot asked: a choice replaced (a supplier, a caregiver).
		{slotNone, rec("小何", "搬家公司换成顺达了，价格便宜一点。"), true},
		{slotNone, rec("Jen", "We switched to Northwind for the movers."), true},
		{slotNone, rec("assistant", "好的，搬家公司换成顺达。"), false},
	} {
		if got := revises(c.kind, old, c.b); got != c.want {
			t.Errorf("revises(%s, %q) = %v, want %v", c.kind, c.b.rec.Text, got, c.want)
		}
	}
}

// TestOlderFirst: in a question about the earlier state, the older of two
// answers to the same question ranks first, even when the newer names no
// change (so the change rule cannot lower it) and matches the question
// better. A question about the current state keeps the newer
// first.
func TestOlderFirst(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC)
	recs := []Record{
		{Agent: "a", Session: "m1", Role: "王芳", Text: "年会餐饮找了老张私房菜，一桌八百，含酒水，可以提前一天去试菜。", Time: t0.Add(time.Minute)},
		{Agent: "a", Session: "m2", Role: "王芳", Text: "年会餐饮找了湘菜馆，一桌一千，含酒水，可以提前去试菜。", Time: t0.Add(10 * 24 * time.Hour)},
		{Agent: "a", Session: "m3", Role: "王芳", Text: "今天去超市买了点水果。", Time: t0.Add(11 * 24 * time.Hour)},
	}
	db := memStore(t, t0.Add(12*24*time.Hour), recs)
	for _, mode := range []Mode{ModeSparse, ModeLazy} {
		res, err := db.Recall(ctx, Query{Agent: "a", Text: "年会餐饮原来找的是哪家？", K: 3, Mode: mode, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 || res.Memories[0].Text != recs[0].Text {
			t.Fatalf("%s: earlier state: top %v: want %q", mode, res.Memories, recs[0].Text)
		}
		res, err = db.Recall(ctx, Query{Agent: "a", Text: "年会餐饮现在找的是哪家？", K: 3, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 || res.Memories[0].Text != recs[1].Text {
			t.Fatalf("%s: current state: top %v: want %q", mode, res.Memories, recs[1].Text)
		}
	}
}

// TestLiftOverTies: two candidates that each pass the same one end above
// it in the rule's order (the newer first; the older first in a question
// about the earlier state), whichever passed it first.
func TestLiftOverTies(t *testing.T) {
	t0 := time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, older := range []bool{false, true} {
		for _, order := range [][2]int{{1, 2}, {2, 1}} {
			p := &plan{fused: []float32{1, 0.8, 0.8}, cands: make([]cand, 3)}
			p.cands[0].rec.Time = t0.Add(24 * time.Hour)
			if !older {
				p.cands[0].rec.Time = t0
			}
			p.cands[1].rec.Time = t0.Add(48 * time.Hour)
			p.cands[2].rec.Time = t0.Add(72 * time.Hour)
			if older {
				p.cands[1].rec.Time, p.cands[2].rec.Time = t0.Add(-48*time.Hour), t0.Add(-72*time.Hour)
			}
			over := map[int]int{}
			p.liftOver(order[0], 0, over, older)
			p.liftOver(order[1], 0, over, older)
			if !(p.fused[2] > p.fused[1] && p.fused[1] > p.fused[0]) {
				t.Errorf("older %v, lifted in order %v: scores %v, want candidate 2 over 1 over 0", older, order, p.fused)
			}
		}
	}
}

// TestSupersedeSkipsAgenda: a later meeting's opening that names the
// topic and no value ("今天主要定…") is not a newer answer to the
// decision before it.
func TestSupersedeSkipsAgenda(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC)
	recs := []Record{
		{Agent: "a", Session: "m1", Role: "王芳", Text: "年会餐饮找了湘菜馆，一桌一千，含酒水，可以提前去试菜。", Time: t0},
		{Agent: "a", Session: "m2", Role: "陈静", Text: "今天主要定年会餐饮的菜单，一桌几个菜，酒水怎么配。", Time: t0.Add(5 * 24 * time.Hour)},
		{Agent: "a", Session: "m3", Role: "王芳", Text: "今天去超市买了点水果。", Time: t0.Add(6 * 24 * time.Hour)},
	}
	db := memStore(t, t0.Add(7*24*time.Hour), recs)
	for _, mode := range []Mode{ModeSparse, ModeLazy} {
		res, err := db.Recall(ctx, Query{Agent: "a", Text: "年会餐饮现在找的是哪家？", K: 3, Mode: mode, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 || res.Memories[0].Text != recs[0].Text {
			t.Fatalf("%s: top %v: want %q", mode, res.Memories, recs[0].Text)
		}
	}
}

// TestLastMeetingNewer: asked what the previous meeting settled in the end,
// its newer answer ranks first, as for today's.
func TestLastMeetingNewer(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2027, 3, 1, 9, 0, 0, 0, time.UTC)
	recs := append(turns("a", "meet-0226", t0,
		[2]string{"沈佳怡", "菜地年费的事，大家说说。"},
		[2]string{"黄建平", "菜地年费我看还是三百，一年三百块。"},
		[2]string{"沈佳怡", "菜地年费改成三百六，三月一号起算，一年一交。"},
		[2]string{"黄建平", "行。"},
	), Record{Agent: "a", Session: "meet-0305", Role: "沈佳怡", Text: "今天说一下工具棚的钥匙。", Time: t0.Add(4 * 24 * time.Hour)})
	db := memStore(t, t0.Add(4*24*time.Hour+time.Hour), recs)
	for _, mode := range []Mode{ModeSparse, ModeLazy} {
		res, err := db.Recall(ctx, Query{Agent: "a", Text: "上次开会菜地年费最后定了多少？", CurrentSession: "meet-0305", K: 3, Mode: mode, Now: t0.Add(4*24*time.Hour + time.Hour), Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 || res.Memories[0].Text != recs[2].Text {
			t.Errorf("%s: top %v: want %q (%v)", mode, res.Memories, recs[2].Text, res.Stats.Notes)
		}
	}
}

// TestLaterAsksCurrent: "后来" (and "in the end", "eventually") asks for
// the current state like 现在: the newer answer first. The same question
// without it ranks by the words alone, the older quote first.
func TestLaterAsksCurrent(t *testing.T) {
	t0 := time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC)
	recs := []Record{
		{Agent: "a", Session: "c1", Role: "user", Text: "安信保险报了教练车的续保价：每辆4,600，月底前定。", Time: t0},
		{Agent: "a", Session: "m2", Role: "罗建华", Text: "安信的续保价谈妥了：每辆4,400，25号之前交。", Time: t0.Add(17 * 24 * time.Hour)},
		{Agent: "a", Session: "m2", Role: "邓丽萍", Text: "场地费四月起涨到9,900。", Time: t0.Add(17*24*time.Hour + time.Minute)},
		{Agent: "a", Session: "m2", Role: "黄晓军", Text: "科目二改到26号，温江考场。", Time: t0.Add(17*24*time.Hour + 2*time.Minute)},
	}
	db := memStore(t, t0.Add(18*24*time.Hour), recs)
	top := func(text string) string {
		return topText(t, db, Query{Agent: "a", Text: text, K: 2, Mode: ModeLazy})
	}
	if got := top("安信报的续保价后来是多少？"); got != recs[1].Text {
		t.Errorf("后来: top %q, want the newer price", got)
	}
	if got := top("安信报的续保价是多少？"); got != recs[0].Text {
		t.Errorf("without 后来: top %q, want the older quote (the test no longer tests the word)", got)
	}
	for _, q := range []string{"how many cars are we buying in the end?", "what did the insurer eventually quote?"} {
		if !theLexicon().asksCurrent(q) {
			t.Errorf("%q: not a current-state question", q)
		}
	}
}

// TestSettingRevision: a setting given another number later ("Actually
// make the pool size 64") ranks above the first value and its echo in a
// question about the current state that asks for no typed value, though
// the revision shares few words with the first statement; a question
// about the original value still gets the first.
func TestSettingRevision(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	recs := []Record{
		{Agent: "a", Session: "s7", Role: "user", Time: t0, Text: "Let's set the connection pool size to 32 for billing-api"},
		{Agent: "a", Session: "s7", Role: "assistant", Time: t0.Add(5 * time.Second), Text: "OK, I'll set the connection pool size to 32 for billing-api."},
		{Agent: "a", Session: "s8", Role: "user", Time: t0.Add(23 * time.Hour), Text: "Actually make the pool size 64, we saw timeouts under load."},
		{Agent: "a", Session: "s8", Role: "assistant", Time: t0.Add(23*time.Hour + 4*time.Second), Text: "OK, 64 it is."},
		{Agent: "a", Session: "z1", Role: "user", Time: t0.Add(24 * time.Hour), Text: "默认超时先设成30秒吧，接口一般两秒内返回。"},
		{Agent: "a", Session: "z1", Role: "assistant", Time: t0.Add(24*time.Hour + 5*time.Second), Text: "好的，默认超时设为30秒。"},
		{Agent: "a", Session: "z2", Role: "user", Time: t0.Add(48 * time.Hour), Text: "其实默认超时改成60秒，批量导出要跑很久。"},
	}
	now := t0.Add(72 * time.Hour)
	db := memStore(t, now, recs)
	wantFirst(t, db, now, "what pool size did we pick?", recs[2].Text)
	wantFirst(t, db, now, "what did we decide about the connection pool?", recs[2].Text)
	wantFirst(t, db, now, "what was the original pool size?", recs[0].Text)
	wantFirst(t, db, now, "默认超时最后定的是什么？", recs[6].Text)
}

// TestMoveRevisesAskedValue: in a question asking for a typed value, not
// about the current state in words, a newer turn that moves the value to
// another of that type ("游泳改到周三和周五了", "moved to Thursday") ranks
// above the value it moves; a move to a value of another type does not
// pass an answer (a wedding moved to April is no answer to the car's
// price).
func TestMoveRevisesAskedValue(t *testing.T) {
	t0 := time.Date(2026, 9, 2, 20, 0, 0, 0, time.UTC)
	recs := []Record{
		{Agent: "a", Session: "d1", Role: "user", Time: t0, Text: "我每周二和周四早上七点去游泳。"},
		{Agent: "a", Session: "d2", Role: "user", Time: t0.Add(30 * 24 * time.Hour), Text: "游泳改到周三和周五了，周二要加班。"},
		{Agent: "a", Session: "e1", Role: "Priya", Time: t0.Add(time.Hour), Text: "The design review is on Tuesday at 3pm in room 4."},
		{Agent: "a", Session: "e2", Role: "Priya", Time: t0.Add(40 * 24 * time.Hour), Text: "The design review moved to Thursday at 10am, same room."},
		{Agent: "a", Session: "c1", Role: "user", Time: t0.Add(2 * time.Hour), Text: "想买比亚迪的海豹，落地大概十八万左右，我现在存了九万。"},
		{Agent: "a", Session: "c2", Role: "user", Time: t0.Add(50 * 24 * time.Hour), Text: "对，婚礼改到四月在大阪。戒指我想买卡地亚的，预算三万左右。"},
		{Agent: "a", Session: "m1", Role: "Raj", Time: t0.Add(3 * time.Hour), Text: "Alice owns the database migration, target end of November."},
		{Agent: "a", Session: "m1", Role: "Dana", Time: t0.Add(3*time.Hour + time.Minute), Text: "Marketing budget for Q1 is $50k."},
		{Agent: "a", Session: "m2", Role: "Raj", Time: t0.Add(45 * 24 * time.Hour), Text: "Bob took over the database migration since Alice moved to the payments team."},
		{Agent: "a", Session: "m2", Role: "Dana", Time: t0.Add(45*24*time.Hour + time.Minute), Text: "Finance cut the Q1 marketing budget to $40k."},
	}
	now := t0.Add(60 * 24 * time.Hour)
	db := memStore(t, now, recs)
	wantFirst(t, db, now, "我哪几天去游泳？", recs[1].Text)
	wantFirst(t, db, now, "when is the design review?", recs[3].Text)
	wantFirst(t, db, now, "when was the design review originally?", recs[2].Text)
	wantFirst(t, db, now, "我想买什么车，落地价大概多少？", recs[4].Text)
	wantFirst(t, db, now, "who owns the database migration?", recs[8].Text)
	wantFirst(t, db, now, "who owned the database migration originally?", recs[6].Text)
	wantFirst(t, db, now, "what is the Q1 marketing budget?", recs[9].Text)
}

// TestMoveGate: every move and handover the rules match holds a word of
// the index search (mayCorrect) that decides whether texts are read.
func TestMoveGate(t *testing.T) {
	isMove := func(text string) bool { return moveStatement.MatchString(text) || handover.MatchString(text) }
	checkGate(t, moveWords, moveBigrams, isMove, "改到周三", "改成十点", "团建改去苏州", "换去三亚", "改为线上", "改在二楼", "换成顺达", "换到安吉", "推迟到下周", "提前到周一", "延期到三月", "挪到周五",
		"降到四万", "降为三千", "涨到五百", "涨为六百", "加到十个人", "减到八个", "调到30秒", "调整为两周", "调整到九点", "上调到一万", "下调到八千",
		"砍到两万", "缩减到五人", "提高到六十", "提升到九成", "王磊接手了", "交给小王", "改由李娜负责", "转给财务",
		"We switched to Linear", "postponed it until May", "rescheduled for Friday", "brought it forward to Monday",
		"the review moved to Thursday", "changed the venue to Porto", "postponed the launch to May", "rescheduled it to Friday", "pushed it back to June",
		"Finance cut the budget to $40k", "raised the limit to 64", "increased the pool to 64", "reduced the team to five", "lowered it to 3",
		"bumped the API to Node 22", "upped it to 10", "dropped the price to $9", "trimmed it to 20 minutes", "slashed it to 5k",
		"extended the trial to 30 days", "shortened the standup to 10 minutes", "upgraded the database to Postgres 16", "downgraded it to v2",
		"Bob took over the migration", "Jen has taken over", "Sam takes over on Monday", "Ana is taking over", "handed it over to Raj", "handing over to Li")
}

// TestPlaceMove: a team's plans change a month later; "团建在哪？" wants
// the place the outing moved to ("团建改去苏州": 改去 moves, and "定在杭州"
// states the place it moved from), "团建原来定在哪？" the first.
func TestPlaceMove(t *testing.T) {
	t0 := time.Date(2026, 10, 9, 10, 0, 0, 0, time.UTC)
	t1 := t0.Add(24 * 24 * time.Hour)
	recs := []Record{
		{Agent: "a", Session: "w1", Role: "刘洋", Time: t0, Text: "团建定在杭州，11月15号出发。"},
		{Agent: "a", Session: "w1", Role: "陈静", Time: t0.Add(time.Minute), Text: "支付模块的重构由小李负责，月底前完成。"},
		{Agent: "a", Session: "w1", Role: "刘洋", Time: t0.Add(2 * time.Minute), Text: "市场部第四季度预算是二十万。"},
		{Agent: "a", Session: "w1", Role: "陈静", Time: t0.Add(3 * time.Minute), Text: "我们用飞书做项目管理。"},
		{Agent: "a", Session: "w2", Role: "刘洋", Time: t1, Text: "杭州那周酒店太贵，团建改去苏州。"},
		{Agent: "a", Session: "w2", Role: "陈静", Time: t1.Add(time.Minute), Text: "小李调去数据组了，支付重构交给王磊。"},
		{Agent: "a", Session: "w2", Role: "刘洋", Time: t1.Add(2 * time.Minute), Text: "财务把市场部四季度预算砍到十五万。"},
	}
	now := t1.Add(30 * 24 * time.Hour)
	db := memStore(t, now, recs)
	wantFirst(t, db, now, "团建在哪？", recs[4].Text)
	wantFirst(t, db, now, "团建原来定在哪？", recs[0].Text)
	wantFirst(t, db, now, "支付重构谁负责？", recs[5].Text)
	wantFirst(t, db, now, "市场部四季度预算多少？", recs[6].Text)
}
