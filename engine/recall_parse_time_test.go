package engine_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lazymem/lazymem/engine"
)

func TestParseTime(t *testing.T) {
	// Wednesday 2026-03-11 15:30 in Shanghai.
	loc := time.FixedZone("CST", 8*3600)
	now := time.Date(2026, 3, 11, 15, 30, 0, 0, loc)
	d := func(m time.Month, day, h int) time.Time { return time.Date(2026, m, day, h, 0, 0, 0, loc) }
	cases := []struct {
		text         string
		expr, rest   string
		since, until time.Time
	}{
		{"what did we decide yesterday?", "yesterday", "what did we decide ?", d(3, 10, 0), d(3, 11, 0)},
		{"Yesterday's standup notes", "Yesterday", "'s standup notes", d(3, 10, 0), d(3, 11, 0)},
		{"notes from today", "today", "notes from", d(3, 11, 0), d(3, 12, 0)},
		{"the day before yesterday we deployed", "the day before yesterday", "we deployed", d(3, 9, 0), d(3, 10, 0)},
		{"bugs two days ago", "two days ago", "bugs", d(3, 9, 0), d(3, 10, 0)},
		{"bugs 3 days ago", "3 days ago", "bugs", d(3, 8, 0), d(3, 9, 0)},
		{"a day ago", "a day ago", "", d(3, 10, 0), d(3, 11, 0)},
		{"a couple of days ago", "a couple of days ago", "", d(3, 9, 0), d(3, 10, 0)},
		{"a few weeks ago", "a few weeks ago", "", d(2, 16, 0), d(2, 23, 0)},
		{"two hours ago", "two hours ago", "", d(3, 11, 13), d(3, 11, 14)},
		{"pool changes last week", "last week", "pool changes", d(3, 2, 0), d(3, 9, 0)},
		{"this week", "this week", "", d(3, 9, 0), d(3, 16, 0)},
		{"last month's incidents", "last month", "'s incidents", d(2, 1, 0), d(3, 1, 0)},
		{"this month", "this month", "", d(3, 1, 0), d(4, 1, 0)},
		{"last year", "last year", "", time.Date(2025, 1, 1, 0, 0, 0, 0, loc), time.Date(2026, 1, 1, 0, 0, 0, 0, loc)},
		{"errors in the last 3 days", "in the last 3 days", "errors", now.AddDate(0, 0, -3), d(3, 12, 0)},
		{"errors over the past two weeks", "over the past two weeks", "errors", now.AddDate(0, 0, -14), d(3, 12, 0)},
		{"errors in the past week", "in the past week", "errors", now.AddDate(0, 0, -7), d(3, 12, 0)},
		{"last 24 hours alerts", "last 24 hours", "alerts", now.Add(-24 * time.Hour), d(3, 12, 0)},
		{"what happened last monday", "last monday", "what happened", d(3, 9, 0), d(3, 10, 0)},
		{"last wednesday", "last wednesday", "", d(3, 4, 0), d(3, 5, 0)},
		{"last night", "last night", "", d(3, 10, 18), d(3, 11, 6)},
		{"昨天的会议", "昨天", "的会议", d(3, 10, 0), d(3, 11, 0)},
		{"前天部署了什么", "前天", "部署了什么", d(3, 9, 0), d(3, 10, 0)},
		{"大前天", "大前天", "", d(3, 8, 0), d(3, 9, 0)},
		{"上周的决定", "上周", "的决定", d(3, 2, 0), d(3, 9, 0)},
		{"上个星期", "上个星期", "", d(3, 2, 0), d(3, 9, 0)},
		{"这周", "这周", "", d(3, 9, 0), d(3, 16, 0)},
		{"最近三天的错误", "最近三天", "的错误", now.AddDate(0, 0, -3), d(3, 12, 0)},
		{"最近 3 天", "最近 3 天", "", now.AddDate(0, 0, -3), d(3, 12, 0)},
		{"过去两周", "过去两周", "", now.AddDate(0, 0, -14), d(3, 12, 0)},
		{"最近十五天", "最近十五天", "", now.AddDate(0, 0, -15), d(3, 12, 0)},
		{"两天前的日志", "两天前", "的日志", d(3, 9, 0), d(3, 10, 0)},
		{"三个月前", "三个月前", "", d(12, 1, 0).AddDate(-1, 0, 0), d(1, 1, 0)},
		{"上个月", "上个月", "", d(2, 1, 0), d(3, 1, 0)},
		{"去年", "去年", "", time.Date(2025, 1, 1, 0, 0, 0, 0, loc), time.Date(2026, 1, 1, 0, 0, 0, 0, loc)},
		// Leftmost wins.
		{"yesterday and last week", "yesterday", "and last week", d(3, 10, 0), d(3, 11, 0)},
	}
	for _, c := range cases {
		tr, ok := engine.ParseTime(c.text, now)
		if !ok {
			t.Errorf("%q: no expression found", c.text)
			continue
		}
		if tr.Expr != c.expr || tr.Rest != c.rest || !tr.Since.Equal(c.since) || !tr.Until.Equal(c.until) {
			t.Errorf("%q:\n got  %q rest %q [%v, %v)\n want %q rest %q [%v, %v)", c.text,
				tr.Expr, tr.Rest, tr.Since, tr.Until, c.expr, c.rest, c.since, c.until)
		}
	}
	for _, text := range []string{
		"", "connection pool size", "the last day of the sprint was fun", "weekly report", "todays", "yesterdays-build",
		"999999999 days ago", "in the last 0 days", "最近", "近期", "agoraphobia",
	} {
		if tr, ok := engine.ParseTime(text, now); ok {
			t.Errorf("%q: found %q [%v, %v), want none", text, tr.Expr, tr.Since, tr.Until)
		}
	}
}

func FuzzParseTime(f *testing.F) {
	for _, s := range []string{"yesterday", "in the last 3 days", "two days ago", "最近三天", "上周", "前天",
		"a couple of weeks ago", "last monday", "99999 years ago", "最近九十九天", "十十天前", "\xff昨天"} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 11, 15, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		tr, ok := engine.ParseTime(s, now)
		if !ok {
			return
		}
		if !tr.Since.Before(tr.Until) {
			t.Fatalf("%q: empty window [%v, %v)", s, tr.Since, tr.Until)
		}
		if tr.Since.Year() < 1900 || tr.Until.After(now.AddDate(0, 0, 2)) {
			t.Fatalf("%q: window [%v, %v) out of bounds", s, tr.Since, tr.Until)
		}
		if tr.Expr == "" || !strings.Contains(s, tr.Expr) {
			t.Fatalf("%q: expr %q not in text", s, tr.Expr)
		}
		if utf8.ValidString(s) && !utf8.ValidString(tr.Rest) {
			t.Fatalf("%q: rest %q invalid UTF-8", s, tr.Rest)
		}
		if len(tr.Rest) > len(s) {
			t.Fatalf("%q: rest %q longer than text", s, tr.Rest)
		}
	})
}

func TestFormatContext(t *testing.T) {
	ts := time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)
	ms := []engine.Memory{
		{Record: engine.Record{ID: 3, Time: ts.Add(2 * time.Hour), Session: "s1", Role: "assistant", Text: "We chose Postgres 16."}, Score: 0.9},
		{Record: engine.Record{ID: 1, Time: ts, Session: "s1", Role: "user", Text: "Which database\nshould we use?"}, Score: 0.5},
		{Record: engine.Record{ID: 2, Time: ts.Add(time.Hour), Role: "Caroline", Text: "I went to the LGBTQ support group."}, Score: 0.1},
	}
	got := engine.FormatContext(ms, 1000)
	want := "[2026-03-10 09:00] (s1) user: Which database should we use?\n" +
		"[2026-03-10 10:00] Caroline: I went to the LGBTQ support group.\n" +
		"[2026-03-10 11:00] (s1) assistant: We chose Postgres 16.\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	// A tight budget keeps the best-scored memories, still in time order,
	// and never exceeds the budget.
	for budget := 0; budget <= len([]rune(want))+5; budget++ {
		got := engine.FormatContext(ms, budget)
		if n := utf8.RuneCountInString(got); n > budget {
			t.Fatalf("budget %d: %d runes", budget, n)
		}
		if budget >= 60 && !strings.Contains(got, "Postgres") {
			t.Errorf("budget %d: best memory missing:\n%s", budget, got)
		}
	}
	got = engine.FormatContext(ms, 110)
	if !strings.HasPrefix(got, "[2026-03-10 09:00]") || !strings.Contains(got, "Postgres") || strings.Contains(got, "Caroline") {
		t.Errorf("budget 110:\n%s", got)
	}
}
