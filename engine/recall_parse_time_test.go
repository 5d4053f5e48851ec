package engine_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lazymem/lazymem/engine"
)

func TestParseTime(t *testing.T) {
	// Wednesday 2026-03-11 15:30 in Shanghai. March 1 is a Sunday; this
	// week is Mon 9 - Sun 15, the previous one Mon 2 - Sun 8.
	loc := time.FixedZone("CST", 8*3600)
	now := time.Date(2026, 3, 11, 15, 30, 0, 0, loc)
	at := func(y int, m time.Month, day, h, min int) time.Time { return time.Date(y, m, day, h, min, 0, 0, loc) }
	d := func(m time.Month, day, h int) time.Time { return at(2026, m, day, h, 0) }
	end := now.Add(time.Nanosecond) // rolling spans end at now, inclusive
	ago := func(dur time.Duration) time.Time { return now.Add(-dur) }
	day := func(m time.Month, dd int) [2]time.Time {
		return [2]time.Time{d(m, dd, 0), d(m, dd, 0).AddDate(0, 0, 1)}
	}
	roll := func(from time.Time) [2]time.Time { return [2]time.Time{from, end} }
	win := func(a, b time.Time) [2]time.Time { return [2]time.Time{a, b} }
	cases := []struct {
		text, expr, rest string // rest "-": not checked
		w                [2]time.Time
	}{
		// Named days.
		{"what did we decide yesterday?", "yesterday", "what did we decide ?", day(3, 10)},
		{"Yesterday's standup notes", "Yesterday", "'s standup notes", day(3, 10)},
		{"notes from today", "today", "notes from", day(3, 11)},
		{"the day before yesterday we deployed", "the day before yesterday", "we deployed", day(3, 9)},
		{"day before yesterday", "day before yesterday", "", day(3, 9)},
		{"TODAY", "TODAY", "", day(3, 11)},
		{"昨天的会议", "昨天", "的会议", day(3, 10)},
		{"昨日", "昨日", "", day(3, 10)},
		{"今天", "今天", "", day(3, 11)},
		{"今日要闻", "今日", "要闻", day(3, 11)},
		{"前天部署了什么", "前天", "部署了什么", day(3, 9)},
		{"大前天", "大前天", "", day(3, 8)},
		// Parts of days.
		{"this morning", "this morning", "", win(d(3, 11, 0), d(3, 11, 12))},
		{"what came up this afternoon?", "this afternoon", "what came up ?", win(d(3, 11, 12), d(3, 11, 18))},
		{"last night", "last night", "", win(d(3, 10, 18), d(3, 11, 6))},
		{"yesterday morning", "yesterday morning", "", win(d(3, 10, 0), d(3, 10, 12))},
		{"yesterday afternoon's call", "yesterday afternoon", "'s call", win(d(3, 10, 12), d(3, 10, 18))},
		{"yesterday evening", "yesterday evening", "", win(d(3, 10, 18), d(3, 11, 0))},
		{"today at noon", "today at noon", "", win(d(3, 11, 11), d(3, 11, 14))},
		{"on Monday morning", "on Monday morning", "", win(d(3, 9, 0), d(3, 9, 12))},
		{"earlier today, what did we say?", "earlier today", ", what did we say?", win(d(3, 11, 0), end)},
		{"earlier this morning", "earlier this morning", "", win(d(3, 11, 0), end)},
		{"今天上午的会上", "今天上午", "的会上", win(d(3, 11, 0), d(3, 11, 12))},
		{"今天下午", "今天下午", "", win(d(3, 11, 12), d(3, 11, 18))},
		{"今天中午", "今天中午", "", win(d(3, 11, 11), d(3, 11, 14))},
		{"今天晚上", "今天晚上", "", win(d(3, 11, 18), d(3, 12, 0))},
		{"昨天上午", "昨天上午", "", win(d(3, 10, 0), d(3, 10, 12))},
		{"昨天下午说的", "昨天下午", "说的", win(d(3, 10, 12), d(3, 10, 18))},
		{"昨天傍晚", "昨天傍晚", "", win(d(3, 10, 17), d(3, 10, 20))},
		// Compound numbers, and a weekday of last week said the long way.
		{"about twenty-five minutes ago", "about twenty-five minutes ago", "", win(ago(25*time.Minute+12*time.Minute+30*time.Second), ago(25*time.Minute-12*time.Minute-30*time.Second))},
		{"thirty five days ago", "thirty five days ago", "", day(2, 4)},
		{"What did I note down on Monday of last week?", "on Monday of last week", "What did I note down ?", day(3, 2)},
		{"What did I tell you on Monday last week?", "on Monday last week", "What did I tell you ?", day(3, 2)},
		{"last week's Friday", "last week's Friday", "", day(3, 6)},
		// An approximation before an expression is part of it.
		{"大概四十分钟前我让你写了什么？", "大概四十分钟前", "我让你写了什么？", win(ago(60*time.Minute), ago(20*time.Minute))},
		{"about two days ago", "about two days ago", "", day(3, 9)},
		// Clock times next to a day, and ranges of them alone.
		{"what was discussed between 9:30 and 10 this morning?", "between 9:30 and 10 this morning", "what was discussed ?", win(at(2026, 3, 11, 9, 30), at(2026, 3, 11, 10, 1))},
		{"this morning between 9:30 and 10", "this morning between 9:30 and 10", "", win(at(2026, 3, 11, 9, 30), at(2026, 3, 11, 10, 1))},
		{"今天上午9点40到10点之间定了什么？", "今天上午9点40到10点之间", "定了什么？", win(at(2026, 3, 11, 9, 40), at(2026, 3, 11, 10, 1))},
		{"yesterday from 2pm to 4pm", "yesterday from 2pm to 4pm", "", win(d(3, 10, 14), at(2026, 3, 10, 16, 1))},
		{"yesterday, 2 to 4pm", "yesterday, 2 to 4pm", "", win(d(3, 10, 14), at(2026, 3, 10, 16, 1))},
		{"昨天下午两点到四点说了什么", "昨天下午两点到四点", "说了什么", win(d(3, 10, 14), at(2026, 3, 10, 16, 1))},
		{"what happened last night around 9pm?", "last night around 9pm", "what happened ?", win(d(3, 10, 20), d(3, 10, 22))},
		{"昨天晚上九点左右", "昨天晚上九点左右", "", win(d(3, 10, 20), d(3, 10, 22))},
		{"昨天下午3点多", "昨天下午3点多", "", win(d(3, 10, 15), d(3, 10, 16))},
		{"yesterday at 3pm", "yesterday at 3pm", "", win(at(2026, 3, 10, 14, 30), at(2026, 3, 10, 15, 30))},
		{"what did we say between 9:30 and 10?", "between 9:30 and 10", "what did we say ?", win(at(2026, 3, 11, 9, 30), at(2026, 3, 11, 10, 1))},
		{"9点到10点之间说了什么", "9点到10点之间", "说了什么", win(d(3, 11, 9), at(2026, 3, 11, 10, 1))},
		// One clock time said as a moment past: the latest such, ±30 min.
		{"快十点那会儿，会上在讨论什么？", "快十点那会儿", "，会上在讨论什么？", win(at(2026, 3, 11, 9, 30), at(2026, 3, 11, 10, 30))},
		{"昨天晚上九点那时候说了什么", "昨天晚上九点那时候", "说了什么", win(at(2026, 3, 10, 20, 30), at(2026, 3, 10, 21, 30))},
		{"a quarter of an hour ago", "a quarter of an hour ago", "", win(ago(22*time.Minute+30*time.Second), ago(7*time.Minute+30*time.Second))},
		{"what did I set three quarters of an hour ago?", "three quarters of an hour ago", "what did I set ?", win(ago(67*time.Minute+30*time.Second), ago(22*time.Minute+30*time.Second))},
		{"between 4pm and 5pm", "between 4pm and 5pm", "", win(d(3, 10, 16), at(2026, 3, 10, 17, 1))},
		{"前天晚上", "前天晚上", "", win(d(3, 9, 18), d(3, 10, 0))},
		{"今早", "今早", "", win(d(3, 11, 0), d(3, 11, 12))},
		{"今晨", "今晨", "", win(d(3, 11, 0), d(3, 11, 12))},
		{"昨晚", "昨晚", "", win(d(3, 10, 18), d(3, 11, 6))},
		{"今天早些时候", "今天早些时候", "", win(d(3, 11, 0), end)},
		{"周一上午", "周一上午", "", win(d(3, 9, 0), d(3, 9, 12))},
		{"上周三下午", "上周三下午", "", win(d(3, 4, 12), d(3, 4, 18))},
		// Just now: the last 30 minutes.
		{"what did I ask you just now?", "just now", "what did I ask you ?", roll(ago(30 * time.Minute))},
		{"a moment ago", "a moment ago", "", roll(ago(30 * time.Minute))},
		{"moments ago", "moments ago", "", roll(ago(30 * time.Minute))},
		{"刚才谁提到了预算问题？", "刚才", "谁提到了预算问题？", roll(ago(30 * time.Minute))},
		{"刚刚张伟说了什么", "刚刚", "张伟说了什么", roll(ago(30 * time.Minute))},
		{"方才", "方才", "", roll(ago(30 * time.Minute))},
		// "just" before a verb of speaking: only "just" is the expression.
		{"what did Zhang Wei just say about the load test?", "just", "what did Zhang Wei say about the load test?", roll(ago(30 * time.Minute))},
		{"who just brought up the budget?", "just", "who brought up the budget?", roll(ago(30 * time.Minute))},
		{"what did we just decide?", "just", "what did we decide?", roll(ago(30 * time.Minute))},
		// Rolling spans, English.
		{"what did I ask for in the last 10 minutes?", "in the last 10 minutes", "what did I ask for ?", roll(ago(10 * time.Minute))},
		{"the past 5 minutes", "the past 5 minutes", "", roll(ago(5 * time.Minute))},
		{"last 15 mins", "last 15 mins", "", roll(ago(15 * time.Minute))},
		{"in the past minute", "in the past minute", "", roll(ago(time.Minute))},
		{"in the last half hour", "in the last half hour", "", roll(ago(30 * time.Minute))},
		{"over the past half an hour", "over the past half an hour", "", roll(ago(30 * time.Minute))},
		{"in the last two hours, who talked", "in the last two hours", ", who talked", roll(ago(2 * time.Hour))},
		{"last 24 hours alerts", "last 24 hours", "alerts", roll(ago(24 * time.Hour))},
		{"within the past 3 hrs", "within the past 3 hrs", "", roll(ago(3 * time.Hour))},
		{"in the past hour", "in the past hour", "", roll(ago(time.Hour))},
		{"the last hour", "the last hour", "", roll(ago(time.Hour))},
		{"errors in the last 3 days", "in the last 3 days", "errors", roll(now.AddDate(0, 0, -3))},
		{"past 2 days", "past 2 days", "", roll(now.AddDate(0, 0, -2))},
		{"in the past day", "in the past day", "", roll(now.AddDate(0, 0, -1))},
		{"errors in the past week", "in the past week", "errors", roll(now.AddDate(0, 0, -7))},
		{"in the last week", "in the last week", "", roll(now.AddDate(0, 0, -7))},
		{"over the last week", "over the last week", "", roll(now.AddDate(0, 0, -7))},
		{"the past week", "the past week", "", roll(now.AddDate(0, 0, -7))},
		{"errors over the past two weeks", "over the past two weeks", "errors", roll(now.AddDate(0, 0, -14))},
		{"over the last two weeks", "over the last two weeks", "", roll(now.AddDate(0, 0, -14))},
		{"during the previous 3 weeks", "during the previous 3 weeks", "", roll(now.AddDate(0, 0, -21))},
		{"in the last couple of weeks", "in the last couple of weeks", "", roll(now.AddDate(0, 0, -14))},
		{"in the past few days", "in the past few days", "", roll(now.AddDate(0, 0, -3))},
		{"the past month", "the past month", "", roll(now.AddDate(0, -1, 0))},
		{"in the last 6 months", "in the last 6 months", "", roll(now.AddDate(0, -6, 0))},
		{"in the past year", "in the past year", "", roll(now.AddDate(-1, 0, 0))},
		{"over the last two years", "over the last two years", "", roll(now.AddDate(-2, 0, 0))},
		// Rolling spans, Chinese.
		{"最近10分钟谁提到了采购审批？", "最近10分钟", "谁提到了采购审批？", roll(ago(10 * time.Minute))},
		{"最近十分钟", "最近十分钟", "", roll(ago(10 * time.Minute))},
		{"过去五分钟内", "过去五分钟内", "", roll(ago(5 * time.Minute))},
		{"最近半小时", "最近半小时", "", roll(ago(30 * time.Minute))},
		{"最近半个小时", "最近半个小时", "", roll(ago(30 * time.Minute))},
		{"过去两个小时里谁负责", "过去两个小时里", "谁负责", roll(ago(2 * time.Hour))},
		{"最近一小时", "最近一小时", "", roll(ago(time.Hour))},
		{"近3个钟头", "近3个钟头", "", roll(ago(3 * time.Hour))},
		{"最近三天的错误", "最近三天", "的错误", roll(now.AddDate(0, 0, -3))},
		{"最近 3 天", "最近 3 天", "", roll(now.AddDate(0, 0, -3))},
		{"最近十五天", "最近十五天", "", roll(now.AddDate(0, 0, -15))},
		{"这两天", "这两天", "", roll(now.AddDate(0, 0, -2))},
		{"这几天", "这几天", "", roll(now.AddDate(0, 0, -3))},
		{"过去两周", "过去两周", "", roll(now.AddDate(0, 0, -14))},
		{"最近一周", "最近一周", "", roll(now.AddDate(0, 0, -7))},
		{"最近一个星期以来", "最近一个星期以来", "", roll(now.AddDate(0, 0, -7))},
		{"过去的三个月", "过去的三个月", "", roll(now.AddDate(0, -3, 0))},
		{"近两年", "近两年", "", roll(now.AddDate(-2, 0, 0))},
		{"前几天说的", "前几天", "说的", win(d(3, 4, 0), d(3, 11, 0))},
		{"前两天", "前两天", "", win(d(3, 9, 0), d(3, 11, 0))},
		// Ago: a calendar unit; minutes and hours a window around the point.
		{"bugs two days ago", "two days ago", "bugs", day(3, 9)},
		{"bugs 3 days ago", "3 days ago", "bugs", day(3, 8)},
		{"a day ago", "a day ago", "", day(3, 10)},
		{"a couple of days ago", "a couple of days ago", "", day(3, 9)},
		{"a week ago", "a week ago", "", win(d(3, 2, 0), d(3, 9, 0))},
		{"a few weeks ago", "a few weeks ago", "", win(d(2, 16, 0), d(2, 23, 0))},
		{"two months ago", "two months ago", "", win(d(1, 1, 0), d(2, 1, 0))},
		{"a year ago", "a year ago", "", win(at(2025, 1, 1, 0, 0), at(2026, 1, 1, 0, 0))},
		{"what room did we book 10 minutes ago?", "10 minutes ago", "what room did we book ?", win(ago(15*time.Minute), ago(5*time.Minute))},
		{"a minute ago", "a minute ago", "", win(ago(6*time.Minute), end)},
		{"a few minutes ago", "a few minutes ago", "", win(ago(8*time.Minute), end)},
		{"30 mins ago", "30 mins ago", "", win(ago(45*time.Minute), ago(15*time.Minute))},
		{"half an hour ago", "half an hour ago", "", win(ago(45*time.Minute), ago(15*time.Minute))},
		{"two hours ago", "two hours ago", "", win(ago(3*time.Hour), ago(time.Hour))},
		{"an hour ago", "an hour ago", "", win(ago(90*time.Minute), ago(30*time.Minute))},
		{"5分钟前", "5分钟前", "", win(ago(10*time.Minute), end)},
		{"十分钟之前", "十分钟之前", "", win(ago(15*time.Minute), ago(5*time.Minute))},
		{"半小时前", "半小时前", "", win(ago(45*time.Minute), ago(15*time.Minute))},
		{"两个小时前", "两个小时前", "", win(ago(3*time.Hour), ago(time.Hour))},
		{"两天前的日志", "两天前", "的日志", day(3, 9)},
		{"三天以前", "三天以前", "", day(3, 8)},
		{"一周前", "一周前", "", win(d(3, 2, 0), d(3, 9, 0))},
		{"两周前定的", "两周前", "定的", win(d(2, 23, 0), d(3, 2, 0))},
		{"三个月前", "三个月前", "", win(at(2025, 12, 1, 0, 0), d(1, 1, 0))},
		{"一年前", "一年前", "", win(at(2025, 1, 1, 0, 0), at(2026, 1, 1, 0, 0))},
		// Calendar weeks, months, years.
		{"pool changes last week", "last week", "pool changes", win(d(3, 2, 0), d(3, 9, 0))},
		{"previous week", "previous week", "", win(d(3, 2, 0), d(3, 9, 0))},
		{"the week before last", "the week before last", "", win(d(2, 23, 0), d(3, 2, 0))},
		{"this week", "this week", "", win(d(3, 9, 0), d(3, 16, 0))},
		{"last month's incidents", "last month", "'s incidents", win(d(2, 1, 0), d(3, 1, 0))},
		{"this month", "this month", "", win(d(3, 1, 0), d(4, 1, 0))},
		{"last year", "last year", "", win(at(2025, 1, 1, 0, 0), at(2026, 1, 1, 0, 0))},
		{"this year", "this year", "", win(at(2026, 1, 1, 0, 0), at(2027, 1, 1, 0, 0))},
		{"last weekend", "last weekend", "", win(d(3, 7, 0), d(3, 9, 0))},
		{"上周的决定", "上周", "的决定", win(d(3, 2, 0), d(3, 9, 0))},
		{"上个星期", "上个星期", "", win(d(3, 2, 0), d(3, 9, 0))},
		{"上礼拜", "上礼拜", "", win(d(3, 2, 0), d(3, 9, 0))},
		{"上上周", "上上周", "", win(d(2, 23, 0), d(3, 2, 0))},
		{"这周", "这周", "", win(d(3, 9, 0), d(3, 16, 0))},
		{"本周", "本周", "", win(d(3, 9, 0), d(3, 16, 0))},
		{"上周末", "上周末", "", win(d(3, 7, 0), d(3, 9, 0))},
		{"上个月", "上个月", "", win(d(2, 1, 0), d(3, 1, 0))},
		{"上月", "上月", "", win(d(2, 1, 0), d(3, 1, 0))},
		{"上上个月", "上上个月", "", win(d(1, 1, 0), d(2, 1, 0))},
		{"这个月", "这个月", "", win(d(3, 1, 0), d(4, 1, 0))},
		{"本月", "本月", "", win(d(3, 1, 0), d(4, 1, 0))},
		{"去年", "去年", "", win(at(2025, 1, 1, 0, 0), at(2026, 1, 1, 0, 0))},
		{"今年", "今年", "", win(at(2026, 1, 1, 0, 0), at(2027, 1, 1, 0, 0))},
		{"前年", "前年", "", win(at(2024, 1, 1, 0, 0), at(2025, 1, 1, 0, 0))},
		// Weekdays.
		{"what happened last monday", "last monday", "what happened", day(3, 2)},
		{"last wednesday", "last wednesday", "", day(3, 4)},
		{"last Thursday", "last Thursday", "", day(3, 5)},
		{"last Sunday", "last Sunday", "", day(3, 8)},
		{"last fri", "last fri", "", day(3, 6)},
		{"on Monday", "on Monday", "", day(3, 9)},
		{"on Wednesday", "on Wednesday", "", day(3, 11)},
		{"on Friday", "on Friday", "", day(3, 6)},
		{"Tuesday's meeting", "Tuesday", "'s meeting", day(3, 10)},
		{"on wed", "on wed", "", day(3, 11)},
		{"this Monday", "this Monday", "", day(3, 9)},
		{"周一", "周一", "", day(3, 9)},
		{"星期二", "星期二", "", day(3, 10)},
		{"礼拜五", "礼拜五", "", day(3, 6)},
		{"周日", "周日", "", day(3, 8)},
		{"星期天", "星期天", "", day(3, 8)},
		{"上周三我让你准备了什么？", "上周三", "我让你准备了什么？", day(3, 4)},
		{"上个星期五", "上个星期五", "", day(3, 6)},
		{"上礼拜一", "上礼拜一", "", day(3, 2)},
		{"上周日", "上周日", "", day(3, 8)},
		{"上上周二", "上上周二", "", day(2, 24)},
		{"本周一", "本周一", "", day(3, 9)},
		{"这周二", "这周二", "", day(3, 10)},
		// Months.
		{"in October, what did I say?", "in October", ", what did I say?", win(at(2025, 10, 1, 0, 0), at(2025, 11, 1, 0, 0))},
		{"during February", "during February", "", win(d(2, 1, 0), d(3, 1, 0))},
		{"in March", "in March", "", win(d(3, 1, 0), d(4, 1, 0))},
		{"in May", "in May", "", win(at(2025, 5, 1, 0, 0), at(2025, 6, 1, 0, 0))},
		{"in January", "in January", "", win(d(1, 1, 0), d(2, 1, 0))},
		{"last October", "last October", "", win(at(2025, 10, 1, 0, 0), at(2025, 11, 1, 0, 0))},
		{"last March", "last March", "", win(at(2025, 3, 1, 0, 0), at(2025, 4, 1, 0, 0))},
		{"in October 2024", "in October 2024", "", win(at(2024, 10, 1, 0, 0), at(2024, 11, 1, 0, 0))},
		{"十月团建去哪里？", "十月", "团建去哪里？", win(at(2025, 10, 1, 0, 0), at(2025, 11, 1, 0, 0))},
		{"10月份", "10月份", "", win(at(2025, 10, 1, 0, 0), at(2025, 11, 1, 0, 0))},
		{"二月", "二月", "", win(d(2, 1, 0), d(3, 1, 0))},
		{"十二月的预算", "十二月", "的预算", win(at(2025, 12, 1, 0, 0), d(1, 1, 0))},
		{"2025年10月", "2025年10月", "", win(at(2025, 10, 1, 0, 0), at(2025, 11, 1, 0, 0))},
		// Dates.
		{"what did we discuss on Oct 20?", "on Oct 20", "what did we discuss ?", day2(2025, 10, 20, loc)},
		{"on October 14 how much", "on October 14", "how much", day2(2025, 10, 14, loc)},
		{"March 2nd", "March 2nd", "", day(3, 2)},
		{"on Mar. 10", "on Mar. 10", "", day(3, 10)},
		{"the 5th of March", "the 5th of March", "", day(3, 5)},
		{"20 October", "20 October", "", day2(2025, 10, 20, loc)},
		{"Oct 20, 2024", "Oct 20, 2024", "", day2(2024, 10, 20, loc)},
		{"2026-03-01", "2026-03-01", "", day(3, 1)},
		{"2025/12/24", "2025/12/24", "", day2(2025, 12, 24, loc)},
		{"10月20日我提了什么要求？", "10月20日", "我提了什么要求？", day2(2025, 10, 20, loc)},
		{"3月2号", "3月2号", "", day(3, 2)},
		{"三月五日", "三月五日", "", day(3, 5)},
		{"2025年10月20日", "2025年10月20日", "", day2(2025, 10, 20, loc)},
		{"5号说的", "5号", "说的", day(3, 5)},
		{"on September 30", "on September 30", "", day2(2025, 9, 30, loc)},
		// Ranges and since.
		{"11月23日到11月26日之间关于入职", "11月23日到11月26日之间", "关于入职", win(d(11, 23, 0).AddDate(-1, 0, 0), d(11, 27, 0).AddDate(-1, 0, 0))},
		{"between Nov 20 and Nov 27, who", "between Nov 20 and Nov 27", ", who", win(at(2025, 11, 20, 0, 0), at(2025, 11, 28, 0, 0))},
		{"from Monday to Wednesday", "from Monday to Wednesday", "", win(d(3, 9, 0), d(3, 12, 0))},
		{"Monday through Tuesday", "Monday through Tuesday", "", win(d(3, 9, 0), d(3, 11, 0))},
		{"从3月2日到3月5日", "从3月2日到3月5日", "", win(d(3, 2, 0), d(3, 6, 0))},
		{"3月2日至3月5日", "3月2日至3月5日", "", win(d(3, 2, 0), d(3, 6, 0))},
		{"上周一到上周三", "上周一到上周三", "", win(d(3, 2, 0), d(3, 5, 0))},
		// A range whose end is a bare day: the first date's month.
		{"11月16日到20日之间，预算是多少", "11月16日到20日之间", "，预算是多少", win(d(11, 16, 0).AddDate(-1, 0, 0), d(11, 21, 0).AddDate(-1, 0, 0))},
		{"3月2日至5号", "3月2日至5号", "", win(d(3, 2, 0), d(3, 6, 0))},
		{"十月二十日到二十五日", "十月二十日到二十五日", "", win(at(2025, 10, 20, 0, 0), at(2025, 10, 26, 0, 0))},
		{"from Nov 16 to 20, who", "from Nov 16 to 20", ", who", win(at(2025, 11, 16, 0, 0), at(2025, 11, 21, 0, 0))},
		{"between Nov 16 and 20th", "between Nov 16 and 20th", "", win(at(2025, 11, 16, 0, 0), at(2025, 11, 21, 0, 0))},
		{"on Nov 16 to 20 people came", "on Nov 16", "to 20 people came", day2(2025, 11, 16, loc)},
		{"Nov 16 and 20 others", "Nov 16", "and 20 others", day2(2025, 11, 16, loc)},
		{"between October and December", "between October and December", "", win(at(2025, 10, 1, 0, 0), d(1, 1, 0))},
		{"since Monday", "since Monday", "", win(d(3, 9, 0), end)},
		{"since last week", "since last week", "", win(d(3, 2, 0), end)},
		{"since yesterday", "since yesterday", "", win(d(3, 10, 0), end)},
		{"自从上周以来", "自从上周以来", "", win(d(3, 2, 0), end)},
		{"上个月以来", "上个月以来", "", win(d(2, 1, 0), end)},
		{"3月2日之后", "3月2日之后", "", win(d(3, 2, 0), end)},
		{"what did I say 2h ago", "2h ago", "what did I say", win(ago(3*time.Hour), ago(time.Hour))},
		{"3d ago", "3d ago", "", day(3, 8)},
		{"一刻钟前说的", "一刻钟前", "说的", win(ago(15*time.Minute+7*time.Minute+30*time.Second), ago(7*time.Minute+30*time.Second))},
		{"this past weekend", "this past weekend", "", win(d(3, 7, 0), d(3, 9, 0))},
		// Holidays of a fixed date: the latest not in the future.
		{"what did we plan on Christmas Eve?", "Christmas Eve", "what did we plan on ?", day2(2025, 12, 24, loc)},
		{"anything between Christmas and New Year's?", "between Christmas and New Year's", "anything ?", win(at(2025, 12, 25, 0, 0), d(1, 2, 0))},
		{"since New Year's Day", "since New Year's Day", "", win(d(1, 1, 0), end)},
		{"what happened around Halloween", "around Halloween", "what happened", day2(2025, 10, 31, loc)},
		{"on Valentine's day", "Valentine's day", "on", day(2, 14)},
		{"over Thanksgiving", "Thanksgiving", "over", day2(2025, 11, 27, loc)},
		{"元旦那天说的", "元旦", "那天说的", day(1, 1)},
		{"圣诞节那天聚餐", "圣诞节", "那天聚餐", day2(2025, 12, 25, loc)},
		{"国庆期间聊了什么", "国庆", "期间聊了什么", win(at(2025, 10, 1, 0, 0), at(2025, 10, 8, 0, 0))},
		{"12月20号到元旦之间", "12月20号到元旦之间", "", win(at(2025, 12, 20, 0, 0), d(1, 2, 0))},
		// The Chinese calendar's holidays (lunar.txt): 春节 2026 is Feb 17.
		{"过年那几天聊了什么", "过年", "那几天聊了什么", win(d(2, 16, 0), d(2, 23, 0))},
		{"春节前后", "春节", "前后", win(d(2, 16, 0), d(2, 23, 0))},
		{"除夕晚上说的", "除夕晚上", "说的", win(d(2, 16, 18), d(2, 17, 0))},
		{"what did we plan over Chinese New Year?", "Chinese New Year", "what did we plan over ?", win(d(2, 16, 0), d(2, 23, 0))},
		{"元宵节那天", "元宵节", "那天", day(3, 3)},
		{"中秋节前后的安排", "中秋节", "前后的安排", day2(2025, 10, 6, loc)},
		{"at the Mid-Autumn Festival", "Mid-Autumn Festival", "at the", day2(2025, 10, 6, loc)},
		// A part of the day alone: today's, once begun.
		{"上午谁提到了预算？", "上午", "谁提到了预算？", win(d(3, 11, 0), d(3, 11, 12))},
		{"下午的讨论", "下午", "的讨论", win(d(3, 11, 12), d(3, 11, 18))},
		{"王芳中午说了什么", "中午", "王芳说了什么", win(d(3, 11, 11), d(3, 11, 14))},
		// Leftmost wins; the text of a plan stays.
		{"yesterday and last week", "yesterday", "and last week", day(3, 10)},
		{"最近10分钟大家说了什么？", "最近10分钟", "大家说了什么？", roll(ago(10 * time.Minute))},
		{"launch on Mar 20, decided yesterday", "yesterday", "launch on Mar 20, decided", day(3, 10)},
		{"3月20日上线是昨天定的", "昨天", "3月20日上线是定的", day(3, 10)},
	}
	if len(cases) < 150 {
		t.Fatalf("%d cases, want at least 150", len(cases))
	}
	for _, c := range cases {
		tr, ok := engine.ParseTime(c.text, now)
		if !ok {
			t.Errorf("%q: no expression found", c.text)
			continue
		}
		if tr.Expr != c.expr || (c.rest != "-" && tr.Rest != c.rest) || !tr.Since.Equal(c.w[0]) || !tr.Until.Equal(c.w[1]) {
			t.Errorf("%q:\n got  %q rest %q [%v, %v)\n want %q rest %q [%v, %v)", c.text,
				tr.Expr, tr.Rest, tr.Since, tr.Until, c.expr, c.rest, c.w[0], c.w[1])
		}
	}
	for _, text := range []string{
		"", "connection pool size", "the last day of the sprint was fun", "weekly report", "todays", "yesterdays-build",
		"999999999 days ago", "in the last 0 days", "最近", "近期", "agoraphobia",
		// Plans and content, not times.
		"what is the launch date next week?", "下周三上线", "下周", "明天", "每周三开例会", "一周一次",
		"launch on March 20", "3月20日上线", "3月15日", "20号发工资", "我们may需要", "march on", "sat down", "sun is out",
		"three months of work", "第5号方案", "2月30日", "Feb 30",
		// "just" that names no time.
		"I just want to know the pool size", "just in case", "that's just the config", "is it just me?",
		// Days still ahead (now is a Wednesday): plans, not when they were said.
		"next Monday", "what's due next Friday", "the meeting on Monday next week", "this coming Monday",
		"the upcoming Tuesday review", "coming Friday", "this Friday", "这周五", "本周五交付", "这个周五",
		// Clock times with no day: plans ("from 3pm to 4pm" is as often a
		// change), counts, a range on a day ahead.
		"did we move the call to 3pm?", "the meeting at 3pm", "from 3pm to 4pm", "between 2 and 4 people",
		"明天9点到10点之间开会", "三点到四点开会",
		"明天上午的会", "每天下午开站会", "傍晚开会", "后天下午", "王芳周五之前要交什么", "周四前发到群里",
		// A part of today not begun yet (now is 15:30): a plan.
		"tonight", "when is tonight's handoff?", "this evening", "今晚", "今晚谁值班",
	} {
		if tr, ok := engine.ParseTime(text, now); ok {
			t.Errorf("%q: found %q [%v, %v), want none", text, tr.Expr, tr.Since, tr.Until)
		}
	}
}

// TestParseTimeColloquialDays: 昨儿, 今儿 and 前儿 are days like 昨天;
// Mother's Day and Father's Day are the second Sunday of May and the
// third of June, the May Day holiday May 1-5; "5号楼" (building 5) and
// "2号线" (line 2) are numbers, not days.
func TestParseTimeColloquialDays(t *testing.T) {
	loc := time.FixedZone("CST", 8*3600)
	now := time.Date(2027, 5, 12, 10, 50, 0, 0, loc) // a Wednesday
	for _, c := range []struct {
		text, expr string
		w          [2]time.Time
	}{
		{"昨儿都有哪些事？", "昨儿", day2(2027, 5, 11, loc)},
		{"昨儿个说的", "昨儿个", day2(2027, 5, 11, loc)},
		{"今儿一早定了啥", "今儿", day2(2027, 5, 12, loc)},
		{"前儿谁来过", "前儿", day2(2027, 5, 10, loc)},
		{"母亲节那天小区里发生了啥？", "母亲节", day2(2027, 5, 9, loc)},
		{"what happened on Mother's Day?", "Mother's Day", day2(2027, 5, 9, loc)},
		{"五四青年节那天记了点啥？", "五四青年节", day2(2027, 5, 4, loc)},
		{"What did I log late last night?", "late last night", [2]time.Time{time.Date(2027, 5, 11, 18, 0, 0, 0, loc), time.Date(2027, 5, 12, 6, 0, 0, 0, loc)}},
		{"妇女节那天发了什么", "妇女节", day2(2027, 3, 8, loc)},
		{"五一放假那几天我记了些什么？", "五一", [2]time.Time{time.Date(2027, 5, 1, 0, 0, 0, 0, loc), time.Date(2027, 5, 6, 0, 0, 0, 0, loc)}},
		{"what did we do on April Fools' Day?", "April Fools' Day", day2(2027, 4, 1, loc)},
		{"Who was on duty over the May Day holiday?", "May Day holiday", [2]time.Time{time.Date(2027, 5, 1, 0, 0, 0, 0, loc), time.Date(2027, 5, 6, 0, 0, 0, 0, loc)}},
	} {
		tr, ok := engine.ParseTime(c.text, now)
		if !ok || tr.Expr != c.expr || !tr.Since.Equal(c.w[0]) || !tr.Until.Equal(c.w[1]) {
			t.Errorf("%q: got %q [%v, %v) ok %v, want %q [%v, %v)", c.text, tr.Expr, tr.Since, tr.Until, ok, c.expr, c.w[0], c.w[1])
		}
	}
	if tr, ok := engine.ParseTime("What did I note down during the National Day holiday?", now.AddDate(0, 6, 0)); !ok || tr.Expr != "National Day holiday" || !tr.Since.Equal(day2(2027, 10, 1, loc)[0]) || !tr.Until.Equal(day2(2027, 10, 7, loc)[1]) {
		t.Errorf("National Day holiday in November: got %q [%v, %v) ok %v, want October 1-7", tr.Expr, tr.Since, tr.Until, ok)
	}
	// Father's Day 2027 (June 20) is weeks ahead: a plan, no window; in
	// July it is the day past.
	if tr, ok := engine.ParseTime("父亲节那天聚餐", now.AddDate(0, 2, 0)); !ok || !tr.Since.Equal(day2(2027, 6, 20, loc)[0]) {
		t.Errorf("父亲节 in July: got %q [%v, %v) ok %v, want June 20", tr.Expr, tr.Since, tr.Until, ok)
	}
	for _, text := range []string{"5号楼电梯现在谈下来一部多少钱？", "坐2号线过去", "3号门口集合", "my mother's flat", "on Father's Day",
		"六一儿童节的活动怎么安排"} { // a topic (no time word after it), and weeks ahead
		if tr, ok := engine.ParseTime(text, now); ok {
			t.Errorf("%q: found %q [%v, %v), want none", text, tr.Expr, tr.Since, tr.Until)
		}
	}
}

func day2(y int, m time.Month, d int, loc *time.Location) [2]time.Time {
	s := time.Date(y, m, d, 0, 0, 0, 0, loc)
	return [2]time.Time{s, s.AddDate(0, 0, 1)}
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

// TestParseTimeHolidayDaysOff: 清明, 端午, 中秋 as days off are the days
// around the day; Easter's days. Asked on Sunday 2027-04-25 (清明 was
// Monday April 5, Easter Sunday March 28).
func TestParseTimeHolidayDaysOff(t *testing.T) {
	loc := time.FixedZone("CST", 8*3600)
	now := time.Date(2027, 4, 25, 11, 40, 0, 0, loc)
	d := func(m time.Month, day int) time.Time { return time.Date(2027, m, day, 0, 0, 0, 0, loc) }
	for _, c := range []struct {
		text, expr  string
		since, till time.Time
	}{
		{"清明放假那几天我都记了些什么？", "清明", d(4, 3), d(4, 8)},
		{"清明那天", "清明", d(4, 5), d(4, 6)},
		{"Did I note anything down over the Easter weekend?", "Easter weekend", d(3, 26), d(3, 30)},
		{"on Good Friday", "Good Friday", d(3, 26), d(3, 27)},
		{"what did I note on the morning of New Year's Day?", "New Year's Day", d(1, 1), d(1, 2)},
		{"on the evening of Easter Sunday", "Easter Sunday", d(3, 28), d(3, 29)},
		{"since Easter Monday", "since Easter Monday", d(3, 29), now.Add(time.Nanosecond)},
		{"双十一那天我记了什么？", "双十一", d(11, 11).AddDate(-1, 0, 0), d(11, 12).AddDate(-1, 0, 0)},
		{"what did I buy on Singles' Day?", "Singles' Day", d(11, 11).AddDate(-1, 0, 0), d(11, 12).AddDate(-1, 0, 0)},
	} {
		tr, ok := engine.ParseTime(c.text, now)
		if !ok || tr.Expr != c.expr || !tr.Since.Equal(c.since) || !tr.Until.Equal(c.till) {
			t.Errorf("%q: %q [%v, %v) %v, want %q [%v, %v)", c.text, tr.Expr, tr.Since, tr.Until, ok, c.expr, c.since, c.till)
		}
	}
}

// TestEasterSunday: the computus against known dates.
func TestEasterSunday(t *testing.T) {
	for y, want := range map[int]string{2000: "2000-04-23", 2019: "2019-04-21", 2024: "2024-03-31", 2025: "2025-04-20", 2026: "2026-04-05", 2027: "2027-03-28", 2038: "2038-04-25"} {
		tr, ok := engine.ParseTime("since Easter", time.Date(y, 12, 1, 0, 0, 0, 0, time.UTC))
		if !ok || tr.Since.Format("2006-01-02") != want {
			t.Errorf("Easter %d: %v %v, want %s", y, tr.Since, ok, want)
		}
	}
}

// TestParseTimeHolidayTopic: a holiday named as a topic is no window.
func TestParseTimeHolidayTopic(t *testing.T) {
	now := time.Date(2026, 3, 11, 15, 30, 0, 0, time.FixedZone("CST", 8*3600))
	for _, s := range []string{"the Halloween party", "what gift did I get for Christmas?", "中秋节的安排", "春节回家的交通方式", "圣诞节聚餐去哪"} {
		if tr, ok := engine.ParseTime(s, now); ok {
			t.Errorf("%q: window %q %v-%v, want none (a topic)", s, tr.Expr, tr.Since, tr.Until)
		}
	}
}

// TestParseTimePlanDay: a bare weekday in a question about a plan (a
// present or future verb, no past one) names the plan's day, not a window;
// with a past verb it is the day something was said.
func TestParseTimePlanDay(t *testing.T) {
	now := time.Date(2026, 3, 11, 15, 30, 0, 0, time.FixedZone("CST", 8*3600))
	for _, s := range []string{"周三谁陪我爸去医院？", "周日几点去爬山？", "周四上午还看诊吗", "What time does Saturday's pilot run start?", "who is driving on Friday?", "What will we need on Monday?"} {
		if tr, ok := engine.ParseTime(s, now); ok {
			t.Errorf("%q: window %q %v-%v, want none (a plan's day)", s, tr.Expr, tr.Since, tr.Until)
		}
	}
	for s, expr := range map[string]string{"What did I tell you on Monday?": "on Monday", "周三开会说了什么": "周三", "周一": "周一", "on Friday": "on Friday", "who was driving on Friday?": "on Friday"} {
		if tr, ok := engine.ParseTime(s, now); !ok || tr.Expr != expr {
			t.Errorf("%q: window %q (%v), want %q", s, tr.Expr, ok, expr)
		}
	}
}

// TestParseTimeHolidayAhead: a holiday less than half a year ahead is a
// plan, not a window; one further ahead is last year's.
func TestParseTimeHolidayAhead(t *testing.T) {
	loc := time.FixedZone("CST", 8*3600)
	now := time.Date(2026, 3, 11, 15, 30, 0, 0, loc)           // 劳动节 is seven weeks ahead
	for _, s := range []string{"劳动节去哪玩", "端午节去哪玩", "清明回老家吗"} { // 端午 2026 is June 19, 清明 April 5
		if tr, ok := engine.ParseTime(s, now); ok {
			t.Errorf("%q: window %v-%v, want none (a plan)", s, tr.Since, tr.Until)
		}
	}
	tr, ok := engine.ParseTime("during the Christmas party", time.Date(2026, 6, 1, 12, 0, 0, 0, loc))
	if !ok || !tr.Since.Equal(time.Date(2025, 12, 25, 0, 0, 0, 0, loc)) {
		t.Errorf("Christmas from June: %v %v, want 2025-12-25", tr, ok)
	}
}

// TestParseTimeEvening: once the evening has begun, "tonight" and 今晚 are
// this evening's window (before it, TestParseTime: a plan).
func TestParseTimeEvening(t *testing.T) {
	loc := time.FixedZone("CST", 8*3600)
	now := time.Date(2026, 3, 11, 21, 0, 0, 0, loc)
	for _, text := range []string{"what did we decide tonight?", "今晚谁说了预算", "this evening"} {
		tr, ok := engine.ParseTime(text, now)
		if !ok || !tr.Since.Equal(time.Date(2026, 3, 11, 18, 0, 0, 0, loc)) || !tr.Until.Equal(time.Date(2026, 3, 12, 0, 0, 0, 0, loc)) {
			t.Errorf("%q at 21:00: %v [%v, %v), want this evening", text, ok, tr.Since, tr.Until)
		}
	}
}

// TestParseTimeAt: an expression naming a moment ("two hours ago", a
// clock time of a day) gives it in At; a period or a range gives none.
// TestParseTimeClockPlan: one clock time with no day and no question
// about what was said names a plan, not a window.
func TestParseTimeClockPlan(t *testing.T) {
	now := time.Date(2026, 12, 1, 11, 30, 0, 0, time.FixedZone("CST", 8*3600))
	for _, s := range []string{"十点左右开会吗？", "did we move the call to 3pm?", "明天十点左右说一下进度", "what did we say about around ten people?", "what did we discuss around nine?"} {
		if tr, ok := engine.ParseTime(s, now); ok {
			t.Errorf("%q: window %q, want none", s, tr.Expr)
		}
	}
}

func TestParseTimeAt(t *testing.T) {
	loc := time.FixedZone("CST", 8*3600)
	now := time.Date(2026, 12, 1, 11, 30, 0, 0, loc)
	at := func(h, m int) time.Time { return time.Date(2026, 12, 1, h, m, 0, 0, loc) }
	for _, c := range []struct {
		text string
		want time.Time
	}{
		{"what were we discussing about two hours ago?", at(9, 30)},
		{"40分钟前谁说了预算？", at(10, 50)},
		{"half an hour ago", at(11, 0)},
		{"a quarter of an hour ago", at(11, 15)},
		{"快十点那会儿，会上在讨论什么？", at(10, 0)},
		{"what did we say at 9:40 this morning?", at(9, 40)},
		{"昨晚九点左右说了什么", time.Date(2026, 11, 30, 21, 0, 0, 0, loc)},
		{"十点左右开会在聊什么？", at(10, 0)}, // approximate, and asking what was said
		{"十点多开会说了什么", at(10, 30)},
		{"九点半的时候在说什么", at(9, 30)},
		{"十点左右我让你起草了什么？", at(10, 0)},
		{"What were we talking about on the call around half past nine?", at(9, 30)},
		{"what did we say at a quarter to eleven?", at(10, 45)},
		{"what did I note at about ten o'clock?", at(10, 0)},
		{"what were we discussing at about 10:00?", at(10, 0)},
		{"What were we discussing around nine this morning?", at(9, 0)}, // an hour in words next to a day
		{"What were we talking about around noon yesterday?", time.Date(2026, 11, 30, 12, 0, 0, 0, loc)},
		{"What were we talking about at around twenty to nine this morning?", at(8, 40)},
		{"what did we say at ten past ten?", at(10, 10)},
		{"yesterday", time.Time{}},
		{"three days ago", time.Time{}},
		{"between 9:30 and 10 this morning", time.Time{}},
		{"from two hours ago to an hour ago", time.Time{}},
	} {
		tr, ok := engine.ParseTime(c.text, now)
		if !ok || !tr.At.Equal(c.want) {
			t.Errorf("%q: ok %v, At %v, want %v", c.text, ok, tr.At, c.want)
		}
	}
}
