package engine

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestGlossaryTable(t *testing.T) {
	g := theGlossary()
	if len(g.zhOf) < 2000 {
		t.Fatalf("%d entries, want at least 2000", len(g.zhOf))
	}
	// A generic word would translate every question into noise.
	for _, w := range []string{"thing", "get", "make", "good", "time", "people", "say", "want"} {
		if _, ok := g.en[w]; ok {
			t.Errorf("%q is in the glossary", w)
		}
	}
	for zh := range g.zh {
		if utf8.RuneCountInString(zh) < 2 {
			t.Errorf("%q: one character", zh)
		}
	}
}

func TestParseGlossaryErrors(t *testing.T) {
	for text, want := range map[string]string{
		"deposit 押金\n":                  "line 1: no \"=\"",
		"# c\ndeposit = 押\n":            "line 2: \"押\" is not a Chinese word",
		"Deposit = 押金\n":                "\"Deposit\" is not an English term",
		"a b c d = 押金\n":                "\"a b c d\" is not an English term",
		"deposit = deposit\n":           "\"deposit\" is not a Chinese word",
		"deposit = \n":                  "a side is empty",
		"deposit = 押金\nrent = 房租, 租金\n": "",
	} {
		_, err := parseGlossary(text)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", text, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: error %v, want one holding %q", text, err, want)
		}
	}
}

func TestGlossaryTranslate(t *testing.T) {
	g, err := parseGlossary(`
deposit = 押金, 定金
pay, paid = 付钱, 付款
meet = 见面
connection pool = 连接池
pool = 水池
exhausted, exhaust = 耗尽, 用光
insurance company = 保险公司
insurance = 保险
`)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		text string
		want []string
	}{
		{"Who paid the deposit?", []string{"付钱", "付款", "押金", "定金"}},
		{"the meeting deposits", []string{"押金", "定金"}}, // a plural, not a stem ("meeting" is not "meet")
		{"parties", nil},
		{"the connection pool was exhausted", []string{"连接池", "耗尽", "用光"}}, // the phrase, not "pool" alone
		{"the pool, exhausted", []string{"水池", "耗尽", "用光"}},
		{"connection. pool", []string{"水池"}}, // punctuation ends a phrase
		{"连接池耗尽是谁发现的？", []string{"connection", "pool", "exhausted"}},
		{"保险公司要什么材料", []string{"insurance", "company"}}, // the longest word at a place
		{"押金 deposit", []string{"定金"}},                  // nothing the text holds
		{"Mr. Wang's deposit", []string{"押金", "定金"}},
		{"", nil},
	} {
		if got := glossTerms(g.translate(c.text)); !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.text, got, c.want)
		}
	}
}

// TestGlossaryCrosslingual: a question in one language about a record in
// the other whose words no [expand] concept holds is answered through the
// glossary, both ways; without it, not.
func TestGlossaryCrosslingual(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return now.Add(time.Duration(m-600) * time.Minute) }
	recs := []Record{
		{Agent: "a", Session: "zh", Role: "王芳", Time: at(0), Text: "电梯周三上午检修，那天只能走楼梯。"},
		{Agent: "a", Session: "zh", Role: "李明", Time: at(1), Text: "孩子的出生证明放在抽屉里了。"},
		{Agent: "a", Session: "zh", Role: "王芳", Time: at(2), Text: "好的，收到。"},
		{Agent: "a", Session: "zh", Role: "李明", Time: at(3), Text: "明天下午我去银行办转账。"},
		{Agent: "a", Session: "en", Role: "Anna", Time: at(100), Text: "The kitchen sink is clogged again."},
		{Agent: "a", Session: "en", Role: "Tom", Time: at(101), Text: "Take an umbrella tomorrow, it will rain."},
		{Agent: "a", Session: "en", Role: "Anna", Time: at(102), Text: "Thanks, sounds good."},
		{Agent: "a", Session: "en", Role: "Tom", Time: at(103), Text: "We should sell the old piano before we leave."},
	}
	db := memStore(t, now, recs)
	for _, c := range []struct{ text, first string }{
		{"What's happening with the elevator?", recs[0].Text},
		{"Which drawer is it in?", recs[1].Text},
		{"水槽又堵了吗？", recs[4].Text},
		{"要带雨伞吗？", recs[5].Text},
	} {
		// first returns the first memory and the BM25 score of the answer.
		first := func() (string, float64) {
			res, err := db.Recall(context.Background(), Query{Agent: "a", Text: c.text, K: len(recs), Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Memories) == 0 {
				return "", 0
			}
			sparse := 0.0
			for _, m := range res.Memories {
				if m.Text == c.first {
					sparse = m.Sparse
				}
			}
			return res.Memories[0].Record.Text, sparse
		}
		if got, sparse := first(); got != c.first || sparse == 0 {
			t.Errorf("%q: first %q (the answer's BM25 %.3f), want %q found by a word", c.text, got, sparse, c.first)
		}
		noGlossary = true
		if _, sparse := first(); sparse != 0 {
			t.Errorf("%q: the answer's BM25 %.3f without the glossary", c.text, sparse)
		}
		noGlossary = false
	}
}

func FuzzGlossaryTranslate(f *testing.F) {
	for _, s := range []string{"How much is the elevator deposit?", "连接池耗尽是谁发现的？", "Mr. Wang's 押金 deposit-paid", "a'b''c", "\xff押"} {
		f.Add(s)
	}
	g := theGlossary()
	en := map[string]bool{}
	for _, es := range g.enOf {
		for _, w := range es {
			en[w] = true
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		ms := g.translate(text)
		if len(ms) > maxGlossMatches {
			t.Fatalf("%q: %d glossary words, want at most %d", text, len(ms), maxGlossMatches)
		}
		for _, term := range glossTerms(ms) {
			if _, zh := g.zh[term]; !zh && !en[term] {
				t.Fatalf("%q: %q is no glossary term", text, term)
			}
			if g.reserved[term] {
				t.Fatalf("%q: %q is a rule's word", text, term)
			}
		}
	})
}

// glossTerms returns the terms of ms in order.
func glossTerms(ms []glossMatch) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.terms...)
	}
	return out
}

// BenchmarkGlossaryTranslate: the glossary's look at a question, per
// question (English and Chinese alike).
func BenchmarkGlossaryTranslate(b *testing.B) {
	g := theGlossary()
	qs := []string{
		"How much is the elevator deposit, and when do we get it back?",
		"what did we decide about the launch?",
		"新小区的电梯押金要交多少？",
		"CT租赁合同里，设备坏了厂家多久必须派人来？",
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		g.translate(qs[i%len(qs)])
	}
}

// TestGlossaryNotTheTime: the words of the question's time expression are
// the time parser's, not translated ("Mid-Autumn" is a window, not
// 秋天).
func TestGlossaryNotTheTime(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	db := memStore(t, now, []Record{{Agent: "a", Session: "s", Role: "user", Time: now.Add(-time.Hour), Text: "hello there"}})
	res, err := db.Recall(context.Background(), Query{Agent: "a", Text: "what did we talk about over the Mid-Autumn holiday?", K: 3, Now: now, ParseTime: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stats.TimeExpr != "Mid-Autumn" || strings.Contains(res.Stats.Expansion, "秋") {
		t.Errorf("time expression %q, expansion %q: want Mid-Autumn and no 秋天", res.Stats.TimeExpr, res.Stats.Expansion)
	}
	if g := glossTerms(theGlossary().translate("over the Mid-Autumn holiday")); !slices.Contains(g, "秋天") {
		t.Errorf("the glossary translates %q without 秋天: the test no longer tests the rule", g)
	}
}

// TestGlossaryBalance: a Chinese question is analysed into its characters
// and their pairs; an English record found only through the glossary's
// English words ("first aid" for 急救箱, "thermometer" for 体温计) must still outrank, in BM25, the
// Chinese records that share only the question's common characters; at a
// word's weight it does not.
func TestGlossaryBalance(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return now.Add(time.Duration(m-600) * time.Minute) }
	recs := []Record{
		{Agent: "a", Session: "en", Role: "Linda", Time: at(0), Text: "The first-aid kit and the thermometer are in the left locker."},
		{Agent: "a", Session: "en", Role: "Linda", Time: at(1), Text: "The kit sizes for the new players are still missing."},
		{Agent: "a", Session: "zh", Role: "王丽", Time: at(100), Text: "箱子先放在门口了，你跟妈说一声。"},
		{Agent: "a", Session: "zh", Role: "王丽", Time: at(102), Text: "东西都放在车里了。"},
	}
	db := memStore(t, now, recs)
	first := func() string {
		res, err := db.Recall(context.Background(), Query{Agent: "a", Text: "急救箱和体温计放在哪了？", K: 3, Now: now, Mode: ModeSparse})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 {
			return ""
		}
		return res.Memories[0].Text
	}
	if got := first(); got != recs[0].Text {
		t.Errorf("first %q, want the first-aid kit", got)
	}
	glossaryBalance = false
	defer func() { glossaryBalance = true }()
	if got := first(); got == recs[0].Text {
		t.Errorf("the first-aid kit first at a word's weight too: the test no longer tests the balance")
	}
}

// TestGlossaryUnheld: a Chinese word that a concept of the lexicon also
// expands (投诉, 退钱) and that no record holds in Chinese is searched by
// its English translations at the glossary's weight, not the concept's
// other-script quarter: the English policy outranks the Chinese turns
// that share only the question's common characters.
func TestGlossaryUnheld(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	recs := append(turns("a", "en", now.Add(-48*time.Hour),
		[2]string{"user", "Our rule for complaints and refunds: listen first, then replace the item or refund on the spot."},
		[2]string{"user", "The oven timer is broken again."}),
		turns("a", "zh", now.Add(-2*time.Hour),
			[2]string{"王丽", "客人多的时候我们先处理外卖单。"},
			[2]string{"张伟", "我们该怎么排班，明天再处理。"},
			[2]string{"王丽", "客人要的蛋糕我们下午做。"})...)
	db := memStore(t, now, recs)
	first := func() string {
		return topText(t, db, Query{Agent: "a", Text: "客人投诉要退钱，我们该怎么处理？", K: 3, Now: now, Mode: ModeSparse})
	}
	if got := first(); got != recs[0].Text {
		t.Errorf("first %q, want the refund rule", got)
	}
	noUnheldTranslations = true
	defer func() { noUnheldTranslations = false }()
	if got := first(); got == recs[0].Text {
		t.Errorf("the refund rule first without the rule too: the test no longer tests it")
	}
}

// TestTranslationCap: in a history mostly in English, an English word's
// Chinese translation weighs no more than the word: a Chinese turn that
// holds only the translation (雨伞, rare, so its bigram's idf is high)
// does not outrank the English turns that hold the word (umbrella,
// common).
func TestTranslationCap(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var en [][2]string
	for _, s := range []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"} {
		en = append(en, [2]string{"user", "Took the umbrella out on " + s + "."},
			[2]string{"user", "The weather on " + s + " was cold."})
	}
	recs := append(turns("a", "en", now.Add(-72*time.Hour), en...),
		turns("a", "zh", now.Add(-100*time.Hour), [2]string{"王丽", "雨伞今天放在门口了。"})...)
	db := memStore(t, now, recs)
	first := func() string {
		return topText(t, db, Query{Agent: "a", Text: "what did I say about the umbrella?", K: 3, Now: now, Mode: ModeSparse})
	}
	const chinese = "雨伞今天放在门口了。"
	if got := first(); got == chinese {
		t.Errorf("first %q: the translation outweighs the word", got)
	}
	noTranslationCap = true
	defer func() { noTranslationCap = false }()
	if got := first(); got != chinese {
		t.Errorf("without the cap the first is %q, not the Chinese turn: the test no longer tests the cap", got)
	}
}

// TestGlossaryMates: the other English terms of an English glossary
// word's entries (one-word terms, not its own stem's forms, not a word of
// many entries, nothing the text holds; none of a Chinese word).
func TestGlossaryMates(t *testing.T) {
	g, err := parseGlossary(`
sofa, couch = 沙发
fund, funds, funding = 基金, 资金, 经费
budget = 预算, 经费
run = 跑步
run, running = 运行
run, operate = 经营
run, jog = 慢跑
run up = 累积
on time, punctual = 准时
`)
	if err != nil {
		t.Fatal(err)
	}
	mates := func(ms []glossMatch) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.mates...)
		}
		return out
	}
	for _, c := range []struct {
		text string
		want []string
	}{
		{"where is the couch?", []string{"sofa"}},
		{"funding for the trip", nil}, // funds, fund: the word's own stem
		{"资金还够吗", nil},                // not of a Chinese word
		{"budget and fund", nil},      // no other English term
		{"sofa or couch", nil},        // what the text holds
		{"who will run it", nil},      // more than three entries: too many senses
		{"jog or walk", []string{"run"}},
		{"be punctual", nil}, // not a phrase's words ("on time")
	} {
		if got := mates(g.translate(c.text)); !slices.Equal(got, c.want) {
			t.Errorf("%q: mates %q, want %q", c.text, got, c.want)
		}
	}
	noGlossaryMates = true
	defer func() { noGlossaryMates = false }()
	if got := mates(g.translate("where is the couch?")); got != nil {
		t.Errorf("mates %q with the mates off", got)
	}
}

// TestGlossaryMatesRecall: a question naming a thing by one of its
// glossary entry's words finds the record naming it by another ("attic,
// loft = 阁楼"), ahead of newer records; without the mates it does not.
func TestGlossaryMatesRecall(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	recs := turns("a", "home", now.Add(-72*time.Hour),
		[2]string{"user", "The old photo albums are up in the loft."},
		[2]string{"user", "The kitchen tap is dripping again."},
		[2]string{"user", "Remind me to water the plants on Friday."},
		[2]string{"user", "The living room lamp needs a new bulb."},
		[2]string{"user", "We should repaint the hallway in spring."},
		[2]string{"user", "The neighbours' dog barked all night."})
	db := memStore(t, now, recs)
	first := func() string {
		return topText(t, db, Query{Agent: "a", Text: "Which box is in the attic?", K: 3, Now: now})
	}
	if got := first(); got != recs[0].Text {
		t.Errorf("first %q, want the loft", got)
	}
	noGlossaryMates = true
	defer func() { noGlossaryMates = false }()
	if got := first(); got == recs[0].Text {
		t.Errorf("the loft first without the mates too: the test no longer tests them")
	}
}
