package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestTranslitTable(t *testing.T) {
	tr := theTranslit()
	if len(tr) < 250 {
		t.Fatalf("%d transliterations", len(tr))
	}
	for form, names := range tr {
		if n := len([]rune(form)); n < 2 || n > 5 {
			t.Errorf("%s (%v): %d characters, want 2-5", form, names, n)
		}
		for _, name := range names {
			if name != strings.ToLower(name) || len(latinWords(name)) != 1 {
				t.Errorf("%s: %q is not one lower-case Latin word", form, name)
			}
		}
	}
}

func TestLatinNamed(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var recs []Record
	for i, role := range []string{"Daniel Price", "Ms. Green", "Zhou Hang", "Taylor Swift", "Tyler Chen", "user", "王芳"} {
		recs = append(recs, Record{Agent: "a", Session: "m", Role: role, Time: now.Add(time.Duration(i-10) * time.Minute), Text: "OK, I'll handle it."})
	}
	recs = append(recs, Record{Agent: "b", Session: "x", Role: "Emma Stone", Time: now.Add(-time.Hour), Text: "Got it."})
	db := memStore(t, now, recs)
	for _, c := range []struct {
		text string
		want []string
	}{
		{"丹尼尔今天开会都说了些什么", []string{"Daniel Price"}},
		{"丹尼说了啥", []string{"Daniel Price"}},
		{"普莱斯怎么说", []string{"Daniel Price"}},
		{"格林老师提到了什么", []string{"Ms. Green"}},
		{"周航说了什么", []string{"Zhou Hang"}}, // a pinyin role named by its characters
		{"泰勒说了什么", nil},                   // Taylor and Tyler
		{"艾玛说了什么", nil},                   // Emma Stone is the other agent's
		{"今天开会说了什么", nil},
		{"丹尼尔和周航说了什么", []string{"Daniel Price", "Zhou Hang"}},
	} {
		got, _, err := db.latinNamed([]string{c.text}, []string{"a"})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		slices.Sort(c.want)
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.text, got, c.want)
		}
	}
	// A role appended after the lookups were built is found (RolesSince).
	if _, err := db.Append(context.Background(), Record{Agent: "a", Session: "m", Role: "Lin Yue", Time: now, Text: "Sure."}); err != nil {
		t.Fatal(err)
	}
	if got, _, err := db.latinNamed([]string{"林悦说了什么"}, []string{"a"}); err != nil || !slices.Equal(got, []string{"Lin Yue"}) {
		t.Errorf("林悦 after an append: %q, %v; want [Lin Yue]", got, err)
	}
	res, err := db.Recall(context.Background(), Query{Agent: "a", Text: "丹尼尔说了什么？", K: 3, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Stats.Speakers, []string{"Daniel Price"}) {
		t.Errorf("recall's speakers %v, want [Daniel Price]", res.Stats.Speakers)
	}
}

// FuzzChineseNames: any question's words give names of 2-5 characters
// with at most maxSpellings spellings; a role's Latin words are lower case.
func FuzzChineseNames(f *testing.F) {
	for _, s := range []string{"丹尼尔今天开会都说了些什么", "周航说了什么", "格林老师", "王", ""} {
		f.Add(s, "Daniel Price")
		f.Add(s, "Zhou Hang")
	}
	f.Fuzz(func(t *testing.T, text, role string) {
		if ws := latinWords(role); len(ws) > 0 {
			for _, w := range ws {
				if w != strings.ToLower(w) || w == "" {
					t.Fatalf("latinWords(%q) = %q", role, ws)
				}
			}
		}
		for _, n := range chineseNames(strings.Fields(text)) {
			if c := len([]rune(n.written)); c < 2 || c > 5 {
				t.Fatalf("%q: name %q", text, n.written)
			}
			if n.chars != nil && len(thePinyin().spellings(n.chars)) > maxSpellings {
				t.Fatalf("%q: too many spellings", n.written)
			}
		}
	})
}

// BenchmarkNamesAcrossScripts: a question's names in the other script
// against a store of 2,003 roles (half Chinese, half Latin, three of
// those pinyin).
func BenchmarkNamesAcrossScripts(b *testing.B) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var recs []Record
	given := []rune("伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平刚桂")
	for i := range 1000 {
		zh := string([]rune(surnames)[i%len([]rune(surnames))]) + string(given[i%len(given)]) + string(given[(i/len(given))%len(given)])
		recs = append(recs,
			Record{Agent: "a", Session: "m", Role: zh, Time: now.Add(-time.Duration(i) * time.Minute), Text: "好的。"},
			Record{Agent: "a", Session: "m", Role: fmt.Sprintf("%c%c%c Smith", 'A'+i%26, 'a'+i/26%26, 'a'+i%7), Time: now.Add(-time.Duration(i) * time.Minute), Text: "OK."})
	}
	for _, r := range []string{"Zhou Hang", "Lin Yue", "Wang Fang"} { // pinyin roles: the Chinese words are spelled
		recs = append(recs, Record{Agent: "a", Session: "m", Role: r, Time: now, Text: "OK."})
	}
	db := memStore(b, now, recs)
	for _, c := range []struct{ name, text string }{
		{"zh-none", "王芳今天开会都说了些什么"},
		{"zh-translit", "丹尼尔今天开会都说了些什么"},
		{"en-pinyin", "What did Dr. Fang say about the budget?"},
		{"en-none", "what did we decide about the budget?"},
	} {
		words := strings.Fields(c.text)
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, _, err := db.latinNamed(words, []string{"a"}); err != nil {
					b.Fatal(err)
				}
				if _, _, err := db.pinyinNamed(words, []string{"a"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestNamesConcurrent: questions read the role lookups while appends add
// roles (run under -race by make test's race pass).
func TestNamesConcurrent(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	db := memStore(t, now, []Record{{Agent: "a", Session: "m", Role: "Zhou Hang", Time: now, Text: "OK."}})
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 2 {
		wg.Go(func() {
			for i := range 50 {
				role := fmt.Sprintf("%c%c Li", 'A'+g, 'a'+i%26)
				if _, err := db.Append(context.Background(), Record{Agent: "a", Session: "m", Role: role, Time: now, Text: "OK."}); err != nil {
					errs <- err
					return
				}
			}
		})
		wg.Go(func() {
			for range 50 {
				if _, _, err := db.latinNamed([]string{"周航说了什么"}, []string{"a"}); err != nil {
					errs <- err
					return
				}
				if _, _, err := db.pinyinNamed([]string{"Dr", "Li"}, []string{"a"}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got, _, _ := db.latinNamed([]string{"周航说了什么"}, []string{"a"}); !slices.Equal(got, []string{"Zhou Hang"}) {
		t.Errorf("周航: %q, want [Zhou Hang]", got)
	}
}

func TestPartNamed(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var recs []Record
	for i, role := range []string{"Marcus Hale", "Priya Nair", "Daniel Price", "Ms. Green", "Anna Lee", "Anna Smith", "Tom"} {
		recs = append(recs, Record{Agent: "a", Session: "m", Role: role, Time: now.Add(time.Duration(i-10) * time.Minute), Text: "OK."})
	}
	recs = append(recs, Record{Agent: "b", Session: "x", Role: "Daniel Ross", Time: now.Add(-time.Hour), Text: "Got it."})
	db := memStore(t, now, recs)
	for _, c := range []struct {
		words []string
		want  []string
	}{
		{[]string{"What", "did", "Marcus", "say"}, []string{"Marcus Hale"}},
		{[]string{"Marcus", "今天开会提了些什么"}, []string{"Marcus Hale"}},
		{[]string{"did", "Hale", "agree", "with", "Priya"}, []string{"Marcus Hale", "Priya Nair"}},
		{[]string{"what", "did", "Daniel", "say"}, []string{"Daniel Price"}}, // Daniel Ross is the other agent's
		{[]string{"what", "did", "Green", "say"}, []string{"Ms. Green"}},
		{[]string{"what", "did", "Anna", "say"}, nil}, // two Annas
		{[]string{"what's", "the", "price"}, nil},     // not capitalized
		{[]string{"what", "did", "Ms", "say"}, nil},   // a title
	} {
		got, _, err := db.partNamed(c.words, []string{"a"})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		slices.Sort(c.want)
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.words, got, c.want)
		}
	}
}
