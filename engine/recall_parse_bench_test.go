package engine

import (
	"testing"
	"time"
)

// BenchmarkParseTime measures the time parser on the questions every recall
// pays it for: most name no time at all, some a day, a few a clock time.
func BenchmarkParseTime(b *testing.B) {
	now := time.Date(2026, 11, 20, 15, 4, 0, 0, time.UTC)
	cases := []struct{ name, text string }{
		{"none-en", "what did we decide about the launch budget?"},
		{"none-zh", "我们关于产品上线时间达成了什么共识？"},
		{"day-en", "what did Alice say yesterday about the venue?"},
		{"day-zh", "上周三谁提到了预算问题？"},
		{"clock-en", "what did we discuss between 9:30 and 10 this morning?"},
		{"clock-zh", "今天上午9点40到10点之间说了什么？"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				ParseTime(c.text, now)
			}
		})
	}
}

// BenchmarkExpand measures the lexicon's expansion of a question, indexed
// (expand) and trying every group as before the index (every-group), side
// by side.
func BenchmarkExpand(b *testing.B) {
	lx := theLexicon()
	for _, text := range []string{
		"what did we decide about the launch budget?",
		"我们关于产品上线时间达成了什么共识？",
		"Who said the venue for the parties would move to the new hotel?",
	} {
		for _, v := range []struct {
			name string
			fn   func(string) []int
		}{{"indexed", lx.triggered}, {"every-group", everyGroup(lx)}} {
			b.Run(v.name, func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					lx.expandGroups(text, v.fn)
				}
			})
		}
	}
}
