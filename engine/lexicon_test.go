package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestLexiconParses(t *testing.T) {
	lx, err := parseLexicon(lexiconText)
	if err != nil {
		t.Fatal(err)
	}
	if len(lx.groups) < 30 || len(lx.pleasantries) < 50 || len(lx.frame) < 40 || len(lx.earlier) == 0 || len(lx.current) == 0 {
		t.Fatalf("lexicon too small: %d groups, %d pleasantries, %d frame, %d earlier, %d current",
			len(lx.groups), len(lx.pleasantries), len(lx.frame), len(lx.earlier), len(lx.current))
	}
	for _, bad := range []string{"budget, , cost", "[nosuch]\nx", "orphan"} {
		if _, err := parseLexicon(bad); err == nil {
			t.Errorf("%q: parsed", bad)
		}
	}
}

func TestLexiconExpand(t *testing.T) {
	lx := theLexicon()
	adds := func(text string) string {
		var out []string
		for _, e := range lx.expand(text) {
			out = append(out, e.add...)
		}
		return " " + strings.Join(out, " ") + " "
	}
	cases := []struct {
		text      string
		want, not []string
	}{
		// Same script in add (the other script is in other); phrases
		// trigger but are not added.
		{"how is the funding looking?", []string{" budget "}, []string{"预算", " funding ", "over budget", " cost "}},
		{"what did the party cost?", []string{" budget ", " expense "}, []string{" funding "}},
		{"资金安排怎么样了", []string{" 预算 ", " 经费 "}, []string{"budget", " 资金 "}},
		{"when do we ship?", []string{" launch ", " release "}, []string{"go", "上线"}},
		{"产品什么时候上线", []string{" 发布 "}, []string{"launch"}},
		{"截止日期是哪天", []string{" 交付 "}, nil},
		// Engineering abbreviations and their words.
		{"what is the k8s migration status?", []string{" kubernetes "}, nil},
		{"which db version?", []string{" database "}, nil},
		{"where is the repo?", []string{" repository "}, nil},
		{"what did Caroline paint?", nil, []string{"budget"}},
		// A plural triggers its singular's concept.
		{"can partners come along?", []string{" spouse ", " wife "}, nil},
		{"any classes this week?", []string{" course ", " lesson "}, nil},
		{"what did the partnership sign?", nil, []string{" spouse "}},
		// A question form triggers its concept and is not searched.
		{"那最后去哪里？", []string{" 目的地 "}, []string{"去哪"}},
		{"两周前定了多少人？", []string{" 人数 "}, []string{"多少人"}},
	}
	for _, c := range cases {
		got := adds(c.text)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q: expansion %q lacks %q", c.text, got, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(got, w) {
				t.Errorf("%q: expansion %q has %q", c.text, got, w)
			}
		}
	}
}

// The other script's terms of a concept are kept apart (the caller weighs
// them lower); phrases are never added.
func TestLexiconExpandOtherScript(t *testing.T) {
	lx := theLexicon()
	others := func(text string) string {
		var out []string
		for _, e := range lx.expand(text) {
			out = append(out, e.other...)
		}
		return " " + strings.Join(out, " ") + " "
	}
	cases := []struct {
		text      string
		want, not []string
	}{
		{"how is the funding looking?", []string{" 预算 ", " 资金 "}, []string{"budget", "over budget"}},
		{"资金安排怎么样了", []string{" budget ", " funding "}, []string{"预算", "over budget", "资金"}},
		{"what did Caroline paint?", nil, []string{"预算"}},
	}
	for _, c := range cases {
		got := others(c.text)
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%q: other-script expansion %q lacks %q", c.text, got, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(got, w) {
				t.Errorf("%q: other-script expansion %q has %q", c.text, got, w)
			}
		}
	}
}

func TestPleasantries(t *testing.T) {
	lx := theLexicon()
	for _, c := range []struct{ text, stripped string }{
		{"好的，那预算最后定了多少？", "那预算最后定了多少？"},
		{"ok thanks, and when is the database migration again?", "and when is the database migration again?"},
		{"thanks! who is on call this week?", "who is on call this week?"},
		{"sounds good, what's the hotel limit per night?", "what's the hotel limit per night?"},
		{"嗯，同意推迟的理由是什么？", "同意推迟的理由是什么？"},
		{"好的，张伟你配合王芳把采购申请先提上去。", "张伟你配合王芳把采购申请先提上去。"},
		{"We booked the room. Thanks!", "We booked the room."},
		{"好的，没问题。", "好的，没问题。"}, // only pleasantries: unchanged
		{"Okay thanks, that is all for now.", "that is all for now."},
		{"the okay-ish plan", "the okay-ish plan"},
		{"好好学习", "好好学习"},
	} {
		if got := lx.stripPleasantries(c.text); got != c.stripped {
			t.Errorf("stripPleasantries(%q) = %q, want %q", c.text, got, c.stripped)
		}
	}
	for text, want := range map[string]bool{
		"好的，没问题。": true, "ok": true, "Thanks!": true, "谢谢大家": true, "Perfect, thanks.": true, "同意。": true, "👍": true,
		"好的，我来带。": false, "ok, the pool is 50": false, "同意推迟一周": false, "Done.": false, "": true,
		"谢谢，睡了。": true, "Thanks, off to bed.": true, "睡了一下午": false, // a sign-off, not a nap
	} {
		if got := lx.lowInfo(text); got != want {
			t.Errorf("lowInfo(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestContentLeft(t *testing.T) {
	lx := theLexicon()
	for text, want := range map[string]bool{
		"what did say?": false, "说了什么": false, "what did I ask you ?": false, "负责什么？": false,
		"what did want to do before the migration?": true, "对上线时间有什么建议？": true, "what did research?": true,
		"谁提到了夜间模式？":         true,
		"What did I note ?": false, "记了些什么？": false, "what did I note about the vet?": true, // noting is saying
	} {
		if got := lx.contentLeft(text); got != want {
			t.Errorf("contentLeft(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestStripQuestionWords(t *testing.T) {
	lx := theLexicon()
	for text, want := range map[string]string{
		"资金安排怎么样了":        "资金 了", // a status question's noun goes with it
		"项目进展如何":          "项目",
		"新同事报到那天要准备哪些东西？": "新同事报到那天要准备 东西？",
		"谁负责通知运维？":        "负责通知运维？",
		"什么？":             "什么？", // nothing else: unchanged
		"音乐会原来定的是哪天？":     "音乐会 定的是 ？",
		"一开始说20号之前交？":     "说20号之前交？", // 之前: a time relation
		"what is it?":     "what is it?",
	} {
		if got := lx.stripQuestionWords(text); got != want {
			t.Errorf("stripQuestionWords(%q) = %q, want %q", text, got, want)
		}
	}
}

// A term two triggered concepts share is added by each: "住宿" names both
// lodging and travel, and what they agree on (酒店) weighs twice what
// only one of them says (机票).
func TestLexiconExpandShared(t *testing.T) {
	count := map[string]int{}
	for _, e := range theLexicon().expand("住宿安排好了吗？") {
		for _, w := range e.add {
			count[w]++
		}
	}
	if count["酒店"] != 2 || count["机票"] != 1 || count["宾馆"] != 1 {
		t.Errorf("住宿: 酒店 added %d times, 机票 %d, 宾馆 %d; want 2, 1, 1", count["酒店"], count["机票"], count["宾馆"])
	}
}

func TestContainsPlural(t *testing.T) {
	for _, c := range []struct {
		text, term string
		want       bool
	}{
		{"can partners come", "partner", true},
		{"two classes today", "class", true},
		{"the parties we threw", "party", true},
		{"the partnership", "partner", false},
		{"a partner", "partner", false}, // the singular is containsWord's
		{"go lives", "go live", false},  // phrases only trigger as written
		{"预算们", "预算", false},
	} {
		if got := containsPlural(c.text, c.term); got != c.want {
			t.Errorf("containsPlural(%q, %q) = %v, want %v", c.text, c.term, got, c.want)
		}
	}
}

// everyGroup makes expandGroups try every group, as expand did before
// byWord: TestExpandIndexed and FuzzExpandIndexed hold expand to it.
func everyGroup(lx *lexicon) func(string) []int {
	return func(string) []int {
		all := make([]int, len(lx.groups))
		for i := range all {
			all[i] = i
		}
		return all
	}
}

func TestExpandIndexed(t *testing.T) {
	lx := theLexicon()
	files, err := filepath.Glob("testdata/scenarios*/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files: %v", err)
	}
	texts := []string{"Partners and PARTIES", "boxes, classes", "我的budget", "budget的", "go live next week", ""}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			var v struct{ Text string }
			if json.Unmarshal([]byte(line), &v) == nil {
				texts = append(texts, v.Text)
			}
		}
	}
	found := 0
	for _, text := range texts {
		got, want := lx.expand(text), lx.expandGroups(text, everyGroup(lx))
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("expand(%q) = %v, want %v", text, got, want)
		}
		found += len(got)
	}
	if found < len(texts)/2 {
		t.Errorf("%d expansions over %d texts: the lexicon hardly triggered", found, len(texts))
	}
}

func FuzzExpandIndexed(f *testing.F) {
	for _, s := range []string{"Partners and PARTIES", "boxes", "我的budget", "资金安排怎么样了", "what's the budget?"} {
		f.Add(s)
	}
	lx := theLexicon()
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := lx.expand(text), lx.expandGroups(text, everyGroup(lx)); !reflect.DeepEqual(got, want) {
			t.Fatalf("expand(%q) = %v, want %v", text, got, want)
		}
	})
}
