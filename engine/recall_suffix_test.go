package engine

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestSuffixNamed: a role with a description before its name
// ("留学顾问陈老师") is named by the ending the meeting uses ("陈老师"),
// never by a bare title ("老师" names every teacher).
func TestSuffixNamed(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	recs := turns("a", "m1", now.Add(-2*time.Hour),
		[2]string{"留学顾问陈老师", "早申先写芝大的补充文书，两篇开放题。"},
		[2]string{"班主任李老师", "推荐信我下周三前发给你们。"},
		[2]string{"妈妈王丽", "那我们先把文书的题目定下来。"})
	db := memStore(t, now, recs)
	speakers := func(text string) []string {
		res, err := db.Recall(context.Background(), Query{Agent: "a", Text: text, K: 3, Now: now, ParseTime: true, Mode: ModeSparse})
		if err != nil {
			t.Fatal(err)
		}
		return res.Stats.Speakers
	}
	for text, want := range map[string]string{"陈老师今天早上都讲了些啥？": "留学顾问陈老师", "王丽说了什么？": "妈妈王丽"} {
		if got := speakers(text); !slices.Contains(got, want) {
			t.Errorf("%q: speakers %q, want %q", text, got, want)
		}
	}
	if got := speakers("老师说了什么？"); len(got) != 0 {
		t.Errorf("a bare title named %q", got)
	}
	noSuffixNames = true
	defer func() { noSuffixNames = false }()
	if got := speakers("陈老师今天早上都讲了些啥？"); slices.Contains(got, "留学顾问陈老师") {
		t.Errorf("found without the rule too: the test no longer tests it")
	}
}
