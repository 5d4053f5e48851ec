package engine

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lazymem/lazymem/index/analysis"
)

func TestPinyinSpells(t *testing.T) {
	py := thePinyin()
	for _, c := range []struct {
		s, name string
		want    bool
	}{
		{"zhouhang", "周航", true},
		{"fang", "方", true},
		{"lu", "吕", true}, // ü written u
		{"lv", "吕", true},
		{"lyu", "吕", true},
		{"shan", "单", true}, // a surname's reading, not the first
		{"dan", "单", true},
		{"zhouhan", "周航", false},
		{"zhouhangg", "周航", false},
		{"xiaomei", "小梅", true},
		{"", "周", false},
	} {
		if got := slices.Contains(py.spellings([]rune(c.name)), c.s); got != c.want {
			t.Errorf("%q in spellings(%s) = %v, want %v", c.s, c.name, got, c.want)
		}
	}
	for _, c := range []struct {
		s    string
		want bool
	}{
		{"zhouhang", true}, {"xiaomei", true}, {"fang", true}, {"lv", true},
		{"berlin", false}, {"project", false}, {"budget", false}, {"x", false},
	} {
		if got := py.isPinyin(c.s); got != c.want {
			t.Errorf("isPinyin(%q) = %v, want %v", c.s, got, c.want)
		}
	}
}

func TestPinyinNamed(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var recs []Record
	for i, role := range []string{"周航", "方婷", "梁小梅", "王芳", "王明", "欧阳明月", "何明", "黄晓峰", "黄建华", "李国华"} {
		recs = append(recs, Record{Agent: "a", Session: "m", Role: role, Time: now.Add(time.Duration(i-10) * time.Minute), Text: "好的，我来安排。"})
	}
	recs = append(recs, Record{Agent: "b", Session: "x", Role: "林悦", Time: now.Add(-time.Hour), Text: "收到。"})
	db := memStore(t, now, recs)
	for _, c := range []struct {
		words []string
		want  []string
	}{
		{[]string{"what", "did", "Zhou", "Hang", "say"}, []string{"周航"}},
		{[]string{"what", "did", "Hang", "Zhou", "say"}, []string{"周航"}}, // given name first
		{[]string{"what", "did", "Zhouhang", "say"}, []string{"周航"}},
		{[]string{"did", "Dr", "Fang", "agree"}, []string{"方婷"}},
		{[]string{"did", "Fang", "agree"}, nil}, // a surname alone, no title
		{[]string{"what", "did", "Xiaomei", "want"}, []string{"梁小梅"}},
		{[]string{"what", "did", "Mr", "Wang", "say"}, nil}, // 王芳 and 王明
		{[]string{"what", "did", "Ms", "Lin", "say"}, nil},  // 林悦 is the other agent's
		{[]string{"did", "Dr", "Fang", "tell", "Zhou", "Hang"}, []string{"方婷", "周航"}},
		{[]string{"what", "did", "zhou", "hang", "say"}, nil}, // not capitalized
		{[]string{"the", "Berlin", "trip"}, nil},
		{[]string{"what", "is", "He", "Ming", "doing"}, []string{"何明"}}, // a stopword in a two-word name
		{[]string{"He", "said", "Ming", "would"}, nil},
		{[]string{"what", "did", "Xiao", "He", "say"}, []string{"何明"}}, // a stopword after a title is a surname
		{[]string{"what", "did", "Feng", "say"}, []string{"黄晓峰"}},      // the last of a given name of two
		{[]string{"what", "did", "Hua", "say"}, nil},                   // 黄建华 and 李国华
		{[]string{"what", "did", "Mei", "say"}, []string{"梁小梅"}},
		{[]string{"what", "did", "Hang", "say"}, nil},  // 周航's given name is one character
		{[]string{"what", "did", "Huang", "say"}, nil}, // a surname
	} {
		got, _, err := db.pinyinNamed(c.words, []string{"a"})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		slices.Sort(c.want)
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.words, got, c.want)
		}
	}
	// Through a recall: the role is the question's speaker, and the name
	// as written is gone from the searched text.
	res, err := db.Recall(context.Background(), Query{Agent: "a", Text: "What did Zhou Hang say?", K: 3, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Stats.Speakers, []string{"周航"}) {
		t.Errorf("recall's speakers %v, want [周航]", res.Stats.Speakers)
	}
	if len(res.Memories) == 0 || res.Memories[0].Record.Role != "周航" {
		t.Errorf("recall's first hit %+v, want 周航's", res.Memories)
	}
	// A title goes with the surname it names.
	res, err = db.Recall(context.Background(), Query{Agent: "a", Text: "What did Xiao He say?", K: 3, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Stats.Speakers, []string{"何明"}) || strings.Contains(res.Stats.Text, "Xiao") {
		t.Errorf("recall's speakers %v, searched text %q: want [何明] and no title", res.Stats.Speakers, res.Stats.Text)
	}
}

// FuzzPinyinNames: any question's words give names of pinyin letters, and
// a role is a Chinese name of two to four characters with at most
// maxSpellings spellings, or none.
func FuzzPinyinNames(f *testing.F) {
	for _, s := range []string{"What did Zhou Hang say?", "Dr. Fang", "He Lei", "Lyu Xiaomei", "ÜÜ Ǖ", "Zz", ""} {
		f.Add(s, "周航")
	}
	f.Fuzz(func(t *testing.T, text, role string) {
		py := thePinyin()
		for _, n := range pinyinNames(strings.FieldsFunc(text, func(r rune) bool { return !analysis.IsWordRune(r) })) {
			if !py.isPinyin(n.letters) {
				t.Fatalf("%q: %q is not pinyin", text, n.letters)
			}
			_ = n
		}
		if rs := chineseRole(role); rs != nil {
			if c := utf8.RuneCountInString(role); c < 2 || c > 4 {
				t.Fatalf("chineseRole(%q) = %q", role, rs)
			}
			if sp := py.spellings(rs); len(sp) > maxSpellings {
				t.Fatalf("%q: %d spellings", role, len(sp))
			}
		}
	})
}
