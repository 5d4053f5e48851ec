package engine

// This file is one role, the parse stage's time expressions (ParseTime),
// and runs past 600 lines on purpose: most of it is the English and Chinese
// rule tables, which read best side by side in one place.

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lazymem/lazymem/index/analysis"
)

// TimeRange is a time expression found in a query.
type TimeRange struct {
	// Since and Until bound the window, [Since, Until), in Now's location.
	Since, Until time.Time
	// Expr is the expression as found in the text ("last week", "最近三天").
	Expr string
	// Rest is the text with the expression removed and spaces tidied.
	Rest string
	// At is the moment the expression points at, when it names one
	// rather than a period: "two hours ago", "40分钟前", "at 9:30 this
	// morning", "昨晚九点左右" (the window is the span around it). Zero
	// for a period ("yesterday", "last week", "between 9 and 10").
	At time.Time
}

// ParseTime finds the first time expression in text, in English or
// Chinese, and resolves it against now (in now's location; weeks start on
// Monday). ok is false when there is none.
//
// One rule decides between a calendar period and a rolling span: a NAMED
// period (a day, a part of a day, a weekday, a week, a month, a year, a
// date) is the whole calendar period, and a DURATION counted back from now
// ("in the last N units", "the past week", "最近N天", "just now") is the
// rolling span [now - N units, now], ending at now. So "last week" and
// "上周" are the previous Monday-to-Sunday week while "in the last week",
// "over the past two weeks" and "最近一周" are the 7 or 14 days up to now.
//
//	today, 今天, 今儿; yesterday, 昨天, 昨儿; the day before yesterday, 前天,
//	前儿 (大前天: 3)
//	                                    that calendar day
//	this morning, 今天上午, 今早, tonight, 今晚, yesterday afternoon, 周三下午,
//	上午 or 下午 alone (today's, once begun)
//	                                    a day narrowed to a part: morning
//	                                    (上午, 早上) 00-12, noon (中午) 11-14,
//	                                    afternoon (下午) 12-18, evening,
//	                                    night (晚上) 18-24; last night,
//	                                    昨晚: 18:00 yesterday to 06:00 today
//	earlier today, 今天早些时候          [start of today, now]
//	just now, a moment ago, 刚才, 刚刚   rolling, the last 30 minutes, moved back to
//	                                    the start of the conversation by the
//	                                    engine (recall_justnow.go); so is
//	                                    "just" before a verb of speaking
//	                                    ("what did X just say", "who just
//	                                    brought up"), the verb left in the query
//	in the last N minutes/hours/days/weeks/months/years, the past N days,
//	in the last week, the past month, 最近十分钟, 过去两个小时, 最近三天, 这两天
//	                                    rolling, [now - N units, now]
//	前几天, 前两天                        the N (几: 7) days before today
//	N days/weeks/months/years ago, N天前, N个月前
//	                                    that calendar day/week/month/year
//	N minutes/hours ago, N分钟前, 半小时前, 2h ago, 一刻钟前
//	                                    a point, so a window around it:
//	                                    now - N units +- max(N/2 units, 5 min)
//	last week/month/year, 上周, 上个月, 去年, 上上周
//	                                    the previous calendar period
//	this week/month/year, 本周, 这个月, 今年 the current calendar period
//	last weekend, 上周末                  Saturday and Sunday of last week
//	(this) past weekend                 the latest weekend begun
//	last Monday, 上周一, 上个星期三       that day of the previous calendar
//	                                    week (as "last week" is that week)
//	on Monday, 周一, 星期一               the latest Monday, today included
//	this Monday, 本周一, 这周一           Monday of the current week
//	in October, last October, 十月, 10月份, October 2025
//	                                    the latest October, the current
//	                                    month included (or that year's)
//	on Oct 20, October 20th, 20 October, 10月20日, 10月20号, 20号, 2026-10-20
//	                                    that day: the latest one, unless it
//	                                    is less than half a year ahead: a
//	                                    date soon to come names a plan
//	                                    ("launch on Dec 15"), not when
//	                                    something was said, and is left in
//	                                    the text
//	between X and Y, from X to Y, X to Y, X到Y(之间), 从X到Y, X至Y
//	                                    from the start of X to the end of Y
//	11月16日到20日, Nov 16 to 20        a date, then a bare later day of
//	                                    the same month
//	since X, 自从X, X以来, X之后          from the start of X to now
//
// N is digits or a number word (a, an, one ... twenty, thirty, a couple
// of, a few: 3; half an hour; 一 二 两 三 ... 十 二十 九十九, 几: 3, 半).
// Future periods (next week, 下周, 明天, next Friday, this coming Monday,
// Monday next week, and this week's days still ahead: this Friday, 这周五
// on a Wednesday) are not time expressions: in a memory query they name
// plans, which are content. When several
// expressions occur the leftmost (then the longest) wins, except that two
// joined by a range word form one range.
func ParseTime(text string, now time.Time) (tr TimeRange, ok bool) {
	first, ok := findTime(text, 0, now)
	if !ok {
		// A range of clock times alone (recall_parse_clock.go).
		if first, ok = clockOnly(text, now); !ok {
			return TimeRange{}, false
		}
	}
	s := first
	// A range: X to Y, between X and Y.
	if second, ok2 := findTime(text, first.end, now); ok2 {
		if m := rangeJoin.FindStringIndex(text[first.end:second.start]); m != nil && m[1] == second.start-first.end {
			joiner := strings.TrimSpace(strings.ToLower(text[first.end:second.start]))
			pre := rangeOpen.FindStringIndex(text[:first.start])
			if pre != nil || joiner != "and" && joiner != "和" && joiner != "与" {
				s.end = second.end
				if pre != nil {
					s.start = pre[0]
				}
				if m := rangeClose.FindStringIndex(text[s.end:]); m != nil {
					s.end += m[1]
				}
				s.since = minTime(first.since, second.since)
				s.until = maxTime(first.until, second.until)
				s.at = time.Time{}
			}
		}
	}
	if s.end == first.end && s.start == first.start {
		s = dayRangeTail(text, s)
	}
	if s.end == first.end && s.start == first.start {
		// Clock times next to a day narrow it (recall_parse_clock.go).
		s, _ = withClock(text, s)
	}
	if s.end == first.end && s.start == first.start {
		// Since X: from X to now.
		pre := sinceOpen.FindStringIndex(text[:s.start])
		post := sinceClose.FindStringIndex(text[s.end:])
		if (pre != nil || post != nil) && s.since.Before(now) {
			if pre != nil {
				s.start = pre[0]
			}
			if post != nil {
				s.end += post[1]
			}
			s.until = now.Add(time.Nanosecond)
			s.at = time.Time{}
		}
	}
	if !s.since.Before(s.until) {
		return TimeRange{}, false
	}
	// "大概四十分钟前", "about two weeks ago": the approximation is part of
	// the expression, not words to search.
	if m := approxBefore.FindStringIndex(text[:s.start]); m != nil {
		s.start = m[0]
	}
	return TimeRange{
		Since: s.since,
		Until: s.until,
		Expr:  strings.TrimSpace(text[s.start:s.end]),
		Rest:  joinTidy(text[:s.start], text[s.end:]),
		At:    s.at,
	}, true
}

// dayTail is a range word and a bare day of the month after a date:
// "11月16日到20日", "16日至20号", "Nov 16 to 20", "between Nov 16 and 20th".
var dayTail = regexp.MustCompile(`^\s*(?:到|至|-|–|~|(?i:to|until|till|through|thru|and))\s*(?:([0-9]{1,2})|([一二三四五六七八九十]{1,3}))\s*([日号]|(?i:st|nd|rd|th)\b)?`)

// dayRangeTail extends s, a single day's expression, over a range whose
// end is a bare day of the same month ("11月16日到20日"): the bare day
// alone is no expression (it would be this month's), so the range word's
// other side names the first date's month. A bare number needs 日/号/th
// or nothing but the end of a word after it ("to 20 people" is a count);
// "and" needs "between" before the date, as for two full dates.
func dayRangeTail(text string, s span) span {
	if s.until.Sub(s.since) < 20*time.Hour || s.until.Sub(s.since) > 28*time.Hour {
		return s // not one day
	}
	m := dayTail.FindStringSubmatchIndex(text[s.end:])
	if m == nil {
		return s
	}
	end := s.end + m[1]
	num := [2]int{m[2], m[3]} // the digits, or the Chinese numeral
	if num[0] < 0 {
		num = [2]int{m[4], m[5]}
	}
	if m[6] < 0 { // no 日/号/th: the number must end the phrase
		rest := strings.TrimLeft(text[end:], " ")
		if r, _ := utf8.DecodeRuneInString(rest); unicode.IsDigit(r) || unicode.IsLetter(r) && !analysis.IsCJK(r) {
			return s // "Nov 16 to 20 people"
		}
	}
	joiner := strings.ToLower(strings.TrimSpace(text[s.end : s.end+num[0]]))
	pre := rangeOpen.FindStringIndex(text[:s.start])
	if joiner == "and" && pre == nil {
		return s
	}
	d, ok := parseZhNum(text[s.end+num[0] : s.end+num[1]])
	first := s.since
	last := time.Date(first.Year(), first.Month(), d, 0, 0, 0, 0, first.Location())
	if !ok || d <= first.Day() || last.Day() != d {
		return s
	}
	out := s
	out.end = end
	if pre != nil {
		out.start = pre[0]
	}
	if c := rangeClose.FindStringIndex(text[out.end:]); c != nil {
		out.end += c[1]
	}
	out.until = last.AddDate(0, 0, 1)
	return out
}

// joinTidy joins the text around a removed expression with one space, or
// none where either side is CJK (which is written without spaces), and
// collapses runs of spaces.
func joinTidy(a, b string) string {
	a = strings.Join(strings.Fields(a), " ")
	b = strings.Join(strings.Fields(b), " ")
	if a == "" || b == "" {
		return a + b
	}
	l, _ := utf8.DecodeLastRuneInString(a)
	r, _ := utf8.DecodeRuneInString(b)
	if analysis.IsCJK(l) || analysis.IsCJK(r) {
		return a + b
	}
	return a + " " + b
}

var (
	rangeJoin       = regexp.MustCompile(`(?i)^\s*(?:and|to|until|till|through|thru|-|–|~|到|至|和|与)\s*$`)
	futureDayBefore = regexp.MustCompile(`(?i)\b(?:next|coming|upcoming|following|this)\s+$`)
	futureDayAfter  = regexp.MustCompile(`(?i)^\s+(?:next|this|the\s+coming)\s+week\b`)
	// A plan's question has a present or future verb and no past one
	// (planDay).
	planVerbEN      = regexp.MustCompile(`(?i)\b(?:does|do|will|is|are|going\s+to|should|shall|can|won't)\b`)
	pastVerbEN      = regexp.MustCompile(`(?i)\b(?:did|was|were|had|said|told|mentioned|noted|discussed|talked|asked|decided|agreed|wrote|sent|planned)\b`)
	planVerbZH      = regexp.MustCompile(`要|去|来|还|打算|准备|安排|陪|带|送|接`)
	pastVerbZH      = regexp.MustCompile(`了|过|说|提|聊|讲|讨论|记|问|定的`)
	rangeWordBefore = regexp.MustCompile(`(?i)\b(?:since|after|from|between|and|to|until|till|through)\s+$`)
	rangeOpen       = regexp.MustCompile(`(?i)(?:\bbetween|\bfrom|从|在)\s*$`)
	rangeClose      = regexp.MustCompile(`^\s*(?:之间|期间|这段时间)`)
	sinceOpen       = regexp.MustCompile(`(?i)(?:\bsince|\bafter|自从|自)\s*$`)
	sinceClose      = regexp.MustCompile(`^\s*(?:以来|之后|以后)`)
	approxBefore    = regexp.MustCompile(`(?i)(?:大概|大约|差不多|约莫|\b(?:about|around|roughly|approximately))\s*$`)
	dayPart         = regexp.MustCompile(`(?i)^\s*(?:的\s*)?(?:in\s+the\s+|at\s+)?(上午|早上|早晨|中午|下午|傍晚|晚上|夜里|morning|noon|afternoon|evening|night)`)
)

// span is one resolved expression at text[start:end].
type span struct {
	start, end   int
	since, until time.Time
	at           time.Time // the moment it names, if it names one (TimeRange.At)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// findTime returns the leftmost (then longest) expression of text at or
// after off that resolves, a whole day narrowed by a part of the day that
// follows it.
func findTime(text string, off int, now time.Time) (span, bool) {
	gt := gateText{text: text[off:]}
	var admitted [maxTimeRules]bool
	for i := range timeGates {
		admitted[i] = timeGates[i].admits(&gt)
	}
	for off < len(text) {
		best := -1
		var bestLoc []int
		for i := range timeRules {
			if !admitted[i] {
				continue
			}
			loc := timeRules[i].re.FindStringSubmatchIndex(text[off:])
			if loc == nil {
				continue
			}
			if best < 0 || loc[0] < bestLoc[0] || (loc[0] == bestLoc[0] && loc[1] > bestLoc[1]) {
				best, bestLoc = i, loc
			}
		}
		if best < 0 {
			return span{}, false
		}
		var at time.Time
		m := timeMatch{now: now, before: text[:off+bestLoc[0]], after: text[off+bestLoc[1]:], point: &at}
		m.g = make([]string, len(bestLoc)/2)
		for g := range m.g {
			if a, b := bestLoc[2*g], bestLoc[2*g+1]; a >= 0 {
				m.g[g] = text[off+a : off+b]
			}
		}
		since, until, ok := timeRules[best].resolve(m)
		if ok && since.Before(until) {
			s := span{start: off + bestLoc[0], end: off + bestLoc[1], since: since, until: until, at: at}
			if g := timeRules[best].re.SubexpIndex("expr"); g > 0 {
				// A rule whose group "expr" is the expression: the rest
				// of its match is context that stays in the query ("just"
				// of "just said": a speaker question keeps its verb).
				s.start, s.end = off+bestLoc[2*g], off+bestLoc[2*g+1]
			}
			if until.Sub(since) >= 23*time.Hour && until.Sub(since) <= 25*time.Hour && since.Equal(dayStart(since)) {
				if dp := dayPart.FindStringSubmatchIndex(text[s.end:]); dp != nil {
					a, b := partOfDay(strings.ToLower(text[s.end+dp[2] : s.end+dp[3]]))
					s.since, s.until = since.Add(a), since.Add(b)
					s.end += dp[1]
				}
			}
			return s, true
		}
		// Not an expression here (a number out of range, a future date):
		// look further right, from the next word (the next rune in CJK).
		off = nextWord(text, off+bestLoc[0])
	}
	return span{}, false
}

// nextWord returns the offset after the rune at i and the ASCII letters
// and digits that follow it.
func nextWord(text string, i int) int {
	_, sz := utf8.DecodeRuneInString(text[i:])
	i += sz
	for i < len(text) && isASCIIAlnum(text[i]) {
		i++
	}
	return i
}

func isASCIIAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// partOfDay returns the offsets from the start of the day of a part of it.
func partOfDay(w string) (time.Duration, time.Duration) {
	switch w {
	case "上午", "早上", "早晨", "morning":
		return 0, 12 * time.Hour
	case "中午", "noon":
		return 11 * time.Hour, 14 * time.Hour
	case "下午", "afternoon":
		return 12 * time.Hour, 18 * time.Hour
	case "傍晚":
		return 17 * time.Hour, 20 * time.Hour
	default: // evening, night, 晚上, 夜里
		return 18 * time.Hour, 24 * time.Hour
	}
}

// timeMatch is one rule's match: its groups and the text around it.
type timeMatch struct {
	g             []string
	now           time.Time
	before, after string
	point         *time.Time // set by ago when the expression names a moment
}

// planDay reports whether a bare weekday names the day of a plan, not the
// day something was said: the question around it has a present or future
// verb and no past one ("周三谁陪我爸去医院", "What time does Saturday's
// pilot run start?" against "What did I tell you on Monday?",
// "周三开会说了什么"). A past window would hide the plan, said on another
// day.
func (m timeMatch) planDay(plan, past *regexp.Regexp) bool {
	around := m.before + " " + m.after
	return plan.MatchString(around) && !past.MatchString(around)
}

// ago is the window of an expression n units ago (the package's ago);
// of minutes and hours it names a moment, which it records in m.point.
func (m timeMatch) ago(unit string, n int) (time.Time, time.Time, bool) {
	if (unit == "minute" || unit == "hour") && m.point != nil {
		*m.point = back(unit, n, m.now)
	}
	return ago(unit, n, m.now)
}

type timeRule struct {
	re      *regexp.Regexp
	resolve func(m timeMatch) (since, until time.Time, ok bool)
}

const (
	enNum   = `(\d{1,6}|(?:twenty|thirty|forty|fifty)[-\s](?:one|two|three|four|five|six|seven|eight|nine)|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|(?:a\s+)?couple(?:\s+of)?|(?:a\s+)?few)`
	enUnit  = `(minute|min|hour|hr|day|week|month|year)s?`
	zhNum   = `([0-9]{1,6}|[零一二两三四五六七八九十百]{1,4}|几|半)`
	zhUnit  = `(分钟|小时|钟头|天|日|周|星期|礼拜|月|年)`
	enMonth = `(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?`
	enWday  = `(monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)`
	zhWday  = `([一二三四五六日天])`
	zhDay   = `([0-9]{1,2}|[一二三四五六七八九十]{1,3})`
)

var enNumbers = map[string]int{
	"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
	"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
	"fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
	"forty": 40, "fifty": 50, "sixty": 60,
}

var enUnits = map[string]string{
	"minute": "minute", "min": "minute", "hour": "hour", "hr": "hour",
	"day": "day", "week": "week", "month": "month", "year": "year",
}

// maxUnits bounds N so that now - N units stays far from time.Time overflow.
var maxUnits = map[string]int{"minute": 60 * 24 * 36500, "hour": 24 * 36500, "day": 36500, "week": 5300, "month": 1200, "year": 100}

func parseEnNum(s string) (int, bool) {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	if n, err := strconv.Atoi(s); err == nil {
		return n, true
	}
	if tens, unit, ok := strings.Cut(strings.ReplaceAll(s, "-", " "), " "); ok && enNumbers[tens] >= 20 && enNumbers[unit] > 0 && enNumbers[unit] < 10 {
		return enNumbers[tens] + enNumbers[unit], true // twenty-five
	}
	switch {
	case strings.Contains(s, "couple"):
		return 2, true
	case strings.Contains(s, "few"):
		return 3, true
	}
	n, ok := enNumbers[s]
	return n, ok
}

var zhDigits = map[rune]int{'零': 0, '一': 1, '二': 2, '两': 2, '三': 3, '四': 4, '五': 5, '六': 6, '七': 7, '八': 8, '九': 9}

// parseZhNum reads 0-999 written in digits or Chinese numerals (三, 十五,
// 二十, 二十三, 一百); 几 ("a few") is 3.
func parseZhNum(s string) (int, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		return n, true
	}
	if s == "几" {
		return 3, true
	}
	total, cur := 0, -1
	for _, r := range s {
		switch r {
		case '十':
			if cur < 0 {
				cur = 1
			}
			total += cur * 10
			cur = -1
		case '百':
			if cur < 0 {
				cur = 1
			}
			total += cur * 100
			cur = -1
		default:
			d, ok := zhDigits[r]
			if !ok || cur >= 0 { // two digits in a row ("三三") is not a number
				return 0, false
			}
			cur = d
		}
	}
	if cur > 0 {
		total += cur
	}
	return total, true
}

var zhUnits = map[string]string{
	"分钟": "minute", "小时": "hour", "钟头": "hour", "天": "day", "日": "day", "周": "week", "星期": "week", "礼拜": "week",
	"月": "month", "年": "year",
}

// zhCount reads a Chinese count and unit; 半 is half an hour (半小时) and
// otherwise not a count.
func zhCount(num, unit string) (int, string, bool) {
	u := zhUnits[unit]
	if num == "半" {
		if u != "hour" {
			return 0, "", false
		}
		return 30, "minute", true
	}
	n, ok := parseZhNum(num)
	if !ok || !unitOK(u, n) {
		return 0, "", false
	}
	return n, u, true
}

func enCount(num, unit string) (int, string, bool) {
	n, ok := parseEnNum(num)
	u := enUnits[strings.ToLower(unit)]
	if !ok || !unitOK(u, n) {
		return 0, "", false
	}
	return n, u, true
}

func dayStart(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}

func weekStart(t time.Time) time.Time {
	d := dayStart(t)
	back := (int(d.Weekday()) + 6) % 7 // Monday = 0
	return d.AddDate(0, 0, -back)
}

func monthStart(t time.Time) time.Time {
	y, m, _ := t.Date()
	return time.Date(y, m, 1, 0, 0, 0, 0, t.Location())
}

func yearStart(t time.Time) time.Time {
	return time.Date(t.Year(), 1, 1, 0, 0, 0, 0, t.Location())
}

// period returns the calendar unit containing now shifted back by n units.
func period(unit string, n int, now time.Time) (time.Time, time.Time) {
	switch unit {
	case "minute":
		s := now.Truncate(time.Minute).Add(-time.Duration(n) * time.Minute)
		return s, s.Add(time.Minute)
	case "hour":
		s := now.Truncate(time.Hour).Add(-time.Duration(n) * time.Hour)
		return s, s.Add(time.Hour)
	case "day":
		s := dayStart(now).AddDate(0, 0, -n)
		return s, s.AddDate(0, 0, 1)
	case "week":
		s := weekStart(now).AddDate(0, 0, -7*n)
		return s, s.AddDate(0, 0, 7)
	case "month":
		s := monthStart(now).AddDate(0, -n, 0)
		return s, s.AddDate(0, 1, 0)
	default: // year
		s := yearStart(now).AddDate(-n, 0, 0)
		return s, s.AddDate(1, 0, 0)
	}
}

// back returns now - n units.
func back(unit string, n int, now time.Time) time.Time {
	switch unit {
	case "minute":
		return now.Add(-time.Duration(n) * time.Minute)
	case "hour":
		return now.Add(-time.Duration(n) * time.Hour)
	case "day":
		return now.AddDate(0, 0, -n)
	case "week":
		return now.AddDate(0, 0, -7*n)
	case "month":
		return now.AddDate(0, -n, 0)
	default:
		return now.AddDate(-n, 0, 0)
	}
}

// rolling returns [now - n units, now] (as a half-open window ending just
// after now).
func rolling(unit string, n int, now time.Time) (time.Time, time.Time, bool) {
	return back(unit, n, now), now.Add(time.Nanosecond), true
}

// ago resolves "N units ago": the calendar day, week, month or year N
// back; for minutes and hours, which name a point rather than a period, a
// window of max(N/2 units, 5 minutes) either side of now - N units.
func ago(unit string, n int, now time.Time) (time.Time, time.Time, bool) {
	if unit != "minute" && unit != "hour" {
		s, u := period(unit, n, now)
		return s, u, true
	}
	at := back(unit, n, now)
	half := max(now.Sub(at)/2, 5*time.Minute)
	until := at.Add(half)
	if !until.Before(now) {
		until = now.Add(time.Nanosecond)
	}
	return at.Add(-half), until, true
}

func fixed(n int) func(timeMatch) (time.Time, time.Time, bool) {
	return func(m timeMatch) (time.Time, time.Time, bool) {
		s, u := period("day", n, m.now)
		return s, u, true
	}
}

func calendar(unit string, n int) func(timeMatch) (time.Time, time.Time, bool) {
	return func(m timeMatch) (time.Time, time.Time, bool) {
		s, u := period(unit, n, m.now)
		return s, u, true
	}
}

func partToday(from, to time.Duration) func(timeMatch) (time.Time, time.Time, bool) {
	return func(m timeMatch) (time.Time, time.Time, bool) {
		d := dayStart(m.now)
		if d.Add(from).After(m.now) {
			// Not begun yet: "when is tonight's handoff?" at noon names a
			// plan, as a day still ahead does, and a window on it would
			// hold nothing.
			return time.Time{}, time.Time{}, false
		}
		return d.Add(from), d.Add(to), true
	}
}

func unitOK(unit string, n int) bool { return n >= 1 && n <= maxUnits[unit] }

var enWeekdays = map[string]time.Weekday{
	"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "tues": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "thur": time.Thursday, "thurs": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

var zhWeekdays = map[string]time.Weekday{
	"一": time.Monday, "二": time.Tuesday, "三": time.Wednesday, "四": time.Thursday,
	"五": time.Friday, "六": time.Saturday, "日": time.Sunday, "天": time.Sunday,
}

// latestDay is the latest wd on or before today.
func latestDay(wd time.Weekday, now time.Time) (time.Time, time.Time, bool) {
	s, u := period("day", (int(now.Weekday())-int(wd)+7)%7, now)
	return s, u, true
}

// dayOfWeek is wd of the week n weeks before the current one, if it is not
// in the future.
func dayOfWeek(wd time.Weekday, n int, now time.Time) (time.Time, time.Time, bool) {
	s := weekStart(now).AddDate(0, 0, -7*n+(int(wd)+6)%7)
	if s.After(now) {
		return time.Time{}, time.Time{}, false
	}
	return s, s.AddDate(0, 0, 1), true
}

var enMonths = map[string]time.Month{
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}

func enMonthOf(s string) time.Month { return enMonths[strings.ToLower(s)[:3]] }

func zhMonthOf(s string) (time.Month, bool) {
	n, ok := parseZhNum(s)
	if !ok || n < 1 || n > 12 {
		return 0, false
	}
	return time.Month(n), true
}

// monthWindow is month mo of year y, or with y == 0 the latest mo, the
// current month included (strict: before the current month).
func monthWindow(y int, mo time.Month, now time.Time, strict bool) (time.Time, time.Time, bool) {
	if y == 0 {
		y = now.Year()
		if mo > now.Month() || (strict && mo == now.Month()) {
			y--
		}
	}
	if y < 1900 || y > 9999 {
		return time.Time{}, time.Time{}, false
	}
	s := time.Date(y, mo, 1, 0, 0, 0, 0, now.Location())
	if s.After(now) {
		return time.Time{}, time.Time{}, false
	}
	return s, s.AddDate(0, 1, 0), true
}

// soon is how far ahead a date without a year may lie and still name a
// plan (left in the text) rather than last year's day.
const soon = 183 * 24 * time.Hour

// dateWindow is day d of month mo of year y; with y == 0 the latest such
// day, unless it is less than half a year ahead (a plan: not a time
// expression).
func dateWindow(y int, mo time.Month, d int, now time.Time) (time.Time, time.Time, bool) {
	explicit := y != 0
	if !explicit {
		y = now.Year()
	}
	if y < 1900 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 {
		return time.Time{}, time.Time{}, false
	}
	s := time.Date(y, mo, d, 0, 0, 0, 0, now.Location())
	if s.Day() != d { // February 30
		return time.Time{}, time.Time{}, false
	}
	if !explicit && s.After(now) {
		if s.Sub(now) < soon {
			return time.Time{}, time.Time{}, false
		}
		s = time.Date(y-1, mo, d, 0, 0, 0, 0, now.Location())
		if s.Day() != d {
			return time.Time{}, time.Time{}, false
		}
	}
	if s.After(now) {
		return time.Time{}, time.Time{}, false
	}
	return s, s.AddDate(0, 0, 1), true
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// timeGates are the gates of timeRules' patterns (regex_gate.go): a rule
// runs only on a text its gate admits.
var timeGates = func() []reGate {
	if len(timeRules) > maxTimeRules {
		panic("engine: more time rules than maxTimeRules")
	}
	g := make([]reGate, len(timeRules))
	for i, r := range timeRules {
		g[i] = gateOf(r.re.String())
	}
	return g
}()

// maxTimeRules bounds timeRules (findTime keeps a flag for each on its
// stack).
const maxTimeRules = 128

var timeRules = []timeRule{
	// English: days and parts of days.
	{regexp.MustCompile(`(?i)\b(?:the\s+)?day\s+before\s+yesterday\b`), fixed(2)},
	{regexp.MustCompile(`(?i)\byesterday\b`), fixed(1)},
	{regexp.MustCompile(`(?i)\btoday\b`), fixed(0)},
	{regexp.MustCompile(`(?i)\bearlier\s+today\b|\bearlier\s+this\s+(?:morning|afternoon)\b`), func(m timeMatch) (time.Time, time.Time, bool) {
		return dayStart(m.now), m.now.Add(time.Nanosecond), true
	}},
	{regexp.MustCompile(`(?i)\b(?:early\s+)?this\s+morning\b`), partToday(0, 12*time.Hour)},
	{regexp.MustCompile(`(?i)\bthis\s+afternoon\b`), partToday(12*time.Hour, 18*time.Hour)},
	{regexp.MustCompile(`(?i)\bthis\s+evening\b|\btonight\b`), partToday(18*time.Hour, 24*time.Hour)},
	{regexp.MustCompile(`(?i)\b(?:late\s+)?last\s+night\b`), func(m timeMatch) (time.Time, time.Time, bool) {
		d := dayStart(m.now)
		return d.Add(-6 * time.Hour), d.Add(6 * time.Hour), true
	}},
	{justNowEN.Regexp, func(m timeMatch) (time.Time, time.Time, bool) {
		return rolling("minute", int(justNowSpan/time.Minute), m.now)
	}},
	{justSaidEN.Regexp, func(m timeMatch) (time.Time, time.Time, bool) {
		return rolling("minute", int(justNowSpan/time.Minute), m.now)
	}},
	// English: durations back from now.
	{regexp.MustCompile(`(?i)\b(?:(?:in|over|during|within|for)\s+)?(?:the\s+)?(?:last|past|previous)\s+` + enNum + `\s+` + enUnit + `\b`),
		func(m timeMatch) (time.Time, time.Time, bool) {
			n, u, ok := enCount(m.g[1], m.g[2])
			if !ok {
				return time.Time{}, time.Time{}, false
			}
			return rolling(u, n, m.now)
		}},
	{regexp.MustCompile(`(?i)\b(?:(?:in|over|during|within|for)\s+)?the\s+(?:last|past)\s+half\s+(?:an\s+)?hour\b`),
		func(m timeMatch) (time.Time, time.Time, bool) { return rolling("minute", 30, m.now) }},
	{regexp.MustCompile(`(?i)\bhalf\s+an\s+hour\s+ago\b`), func(m timeMatch) (time.Time, time.Time, bool) { return m.ago("minute", 30) }},
	{regexp.MustCompile(`(?i)\b(?:a\s+)?quarter\s+(?:of\s+)?an\s+hour\s+ago\b`), func(m timeMatch) (time.Time, time.Time, bool) { return m.ago("minute", 15) }},
	{regexp.MustCompile(`(?i)\bthree\s+quarters\s+of\s+an\s+hour\s+ago\b`), func(m timeMatch) (time.Time, time.Time, bool) { return m.ago("minute", 45) }},
	{regexp.MustCompile(`(?i)\b(?:(?:in|over|during|within|for)\s+)?(?:the\s+past|the\s+last|past)\s+(minute|hour|day|week|month|year)\b`),
		func(m timeMatch) (time.Time, time.Time, bool) {
			if strings.HasPrefix(strings.ToLower(strings.TrimSpace(m.after)), "of ") {
				return time.Time{}, time.Time{}, false // "the last day of the sprint"
			}
			return rolling(strings.ToLower(m.g[1]), 1, m.now)
		}},
	{regexp.MustCompile(`(?i)\b` + enNum + `\s+` + enUnit + `\s+ago\b`),
		func(m timeMatch) (time.Time, time.Time, bool) {
			n, u, ok := enCount(m.g[1], m.g[2])
			if !ok {
				return time.Time{}, time.Time{}, false
			}
			return m.ago(u, n)
		}},
	{regexp.MustCompile(`(?i)\b(\d{1,6})\s?(h|d|w)\s+ago\b`), // 2h ago, 3d ago
		func(m timeMatch) (time.Time, time.Time, bool) {
			u := map[string]string{"h": "hour", "d": "day", "w": "week"}[strings.ToLower(m.g[2])]
			n, ok := parseEnNum(m.g[1])
			if !ok || !unitOK(u, n) {
				return time.Time{}, time.Time{}, false
			}
			return m.ago(u, n)
		}},
	// English: named periods.
	{regexp.MustCompile(`(?i)\b(?:this\s+)?past\s+weekend\b`), func(m timeMatch) (time.Time, time.Time, bool) {
		// The latest weekend that has begun: this week's on a Saturday or
		// Sunday, else last week's.
		s := weekStart(m.now).AddDate(0, 0, 5)
		if s.After(m.now) {
			s = s.AddDate(0, 0, -7)
		}
		return s, s.AddDate(0, 0, 2), true
	}},
	{regexp.MustCompile(`(?i)\b(?:last|previous)\s+(week|month|year)\b`),
		func(m timeMatch) (time.Time, time.Time, bool) {
			s, e := period(strings.ToLower(m.g[1]), 1, m.now)
			return s, e, true
		}},
	{regexp.MustCompile(`(?i)\b(?:the\s+)?week\s+before\s+last\b`), calendar("week", 2)},
	{regexp.MustCompile(`(?i)\bthis\s+(week|month|year)\b`),
		func(m timeMatch) (time.Time, time.Time, bool) {
			s, e := period(strings.ToLower(m.g[1]), 0, m.now)
			return s, e, true
		}},
	{regexp.MustCompile(`(?i)\b(?:last|over\s+the)\s+weekend\b`), func(m timeMatch) (time.Time, time.Time, bool) {
		s := weekStart(m.now).AddDate(0, 0, -2)
		return s, s.AddDate(0, 0, 2), true
	}},
	{regexp.MustCompile(`(?i)\blast\s+` + enWday + `\b`),
		func(m timeMatch) (time.Time, time.Time, bool) {
			return dayOfWeek(enWeekdays[strings.ToLower(m.g[1])], 1, m.now)
		}},
	// "Monday of last week", "Monday last week", "on the Monday of the previous week", "last
	// week's Monday": as "last Monday".
	{regexp.MustCompile(`(?i)\b(?:on\s+)?(?:the\s+)?` + enWday + `\s+(?:of\s+)?(?:the\s+)?(?:last|previous)\s+week\b`),
		func(m timeMatch) (time.Time, time.Time, bool) {
			return dayOfWeek(enWeekdays[strings.ToLower(m.g[1])], 1, m.now)
		}},
	{regexp.MustCompile(`(?i)\b(?:on\s+)?(?:last|the\s+previous)\s+week'?s\s+` + enWday + `\b`),
		func(m timeMatch) (time.Time, time.Time, bool) {
			return dayOfWeek(enWeekdays[strings.ToLower(m.g[1])], 1, m.now)
		}},
	{regexp.MustCompile(`(?i)\bthis\s+` + enWday + `\b`),
		func(m timeMatch) (time.Time, time.Time, bool) {
			return dayOfWeek(enWeekdays[strings.ToLower(m.g[1])], 0, m.now)
		}},
	{regexp.MustCompile(`(?i)\b(on\s+)?` + enWday + `\b`),
		func(m timeMatch) (time.Time, time.Time, bool) {
			// "mon", "wed", "sat" and "sun" are words too: an abbreviation
			// needs "on" or a range word before it.
			if w := m.g[2]; len(w) < 6 && m.g[1] == "" && !rangeWordBefore.MatchString(m.before) {
				return time.Time{}, time.Time{}, false
			}
			// A day to come names a plan: "next Friday", "this coming
			// Monday", "Monday next week", and "this Friday" when the rule
			// for this week's days found it still ahead.
			if futureDayBefore.MatchString(m.before) || futureDayAfter.MatchString(m.after) || m.planDay(planVerbEN, pastVerbEN) {
				return time.Time{}, time.Time{}, false
			}
			return latestDay(enWeekdays[strings.ToLower(m.g[2])], m.now)
		}},
	// English: months and dates.
	{regexp.MustCompile(`(?i)\b((?:in|during|of)\s+)?(?:the\s+month\s+of\s+)?(january|february|march|april|may|june|july|august|september|october|november|december)(?:\s+(\d{4}))?\b`),
		func(m timeMatch) (time.Time, time.Time, bool) {
			// "may" and "march" are words too: they need "in" or a range
			// word before them.
			if w := strings.ToLower(m.g[2]); (w == "may" || w == "march") && m.g[1] == "" && !rangeWordBefore.MatchString(m.before) {
				return time.Time{}, time.Time{}, false
			}
			return monthWindow(atoi(m.g[3]), enMonthOf(m.g[2]), m.now, false)
		}},
	{regexp.MustCompile(`(?i)\blast\s+(january|february|march|april|may|june|july|august|september|october|november|december)\b`),
		func(m timeMatch) (time.Time, time.Time, bool) {
			return monthWindow(0, enMonthOf(m.g[1]), m.now, true)
		}},
	{regexp.MustCompile(`(?i)\b(?:on\s+)?` + enMonth + `\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4})\b)?`),
		func(m timeMatch) (time.Time, time.Time, bool) {
			return dateWindow(atoi(m.g[3]), enMonthOf(m.g[1]), atoi(m.g[2]), m.now)
		}},
	{regexp.MustCompile(`(?i)\b(?:on\s+)?(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?` + enMonth + `(?:,?\s+(\d{4}))?\b`),
		func(m timeMatch) (time.Time, time.Time, bool) {
			return dateWindow(atoi(m.g[3]), enMonthOf(m.g[2]), atoi(m.g[1]), m.now)
		}},
	{regexp.MustCompile(`\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b`),
		func(m timeMatch) (time.Time, time.Time, bool) {
			return dateWindow(atoi(m.g[1]), time.Month(atoi(m.g[2])), atoi(m.g[3]), m.now)
		}},
	// Holidays of a fixed date (recall_parse_holiday.go).
	{holidayEN, holiday},
	{holidayZH, holiday},

	// Chinese: days and parts of days.
	{regexp.MustCompile(`大前天|大前儿`), fixed(3)},
	{regexp.MustCompile(`前天|前儿个|前儿`), fixed(2)},
	{regexp.MustCompile(`昨天|昨日|昨儿个|昨儿`), fixed(1)},
	{regexp.MustCompile(`昨晚|昨夜`), func(m timeMatch) (time.Time, time.Time, bool) {
		d := dayStart(m.now)
		return d.Add(-6 * time.Hour), d.Add(6 * time.Hour), true
	}},
	{regexp.MustCompile(`今天|今日|今儿个|今儿`), fixed(0)},
	{regexp.MustCompile(`今早|今晨`), partToday(0, 12*time.Hour)},
	{regexp.MustCompile(`今晚`), partToday(18*time.Hour, 24*time.Hour)},
	{regexp.MustCompile(`上午|早上|早晨|中午|下午|傍晚`), func(m timeMatch) (time.Time, time.Time, bool) {
		// A part of the day alone is today's, once it has begun ("上午谁提到了
		// 预算？" in the afternoon); after a day that is no expression
		// (明天上午, 每天下午, 3号下午) or before it begins, it names a plan.
		if r, _ := utf8.DecodeLastRuneInString(m.before); strings.ContainsRune("天日号周期拜末每明后今昨前个", r) || zhNumeral(r) || r >= '0' && r <= '9' {
			return time.Time{}, time.Time{}, false
		}
		from, to := partOfDay(m.g[0])
		d := dayStart(m.now)
		if d.Add(from).After(m.now) {
			return time.Time{}, time.Time{}, false
		}
		return d.Add(from), d.Add(to), true
	}},
	{regexp.MustCompile(`今天早些时候|今天早前`), func(m timeMatch) (time.Time, time.Time, bool) {
		return dayStart(m.now), m.now.Add(time.Nanosecond), true
	}},
	{justNowZH.Regexp, func(m timeMatch) (time.Time, time.Time, bool) {
		return rolling("minute", int(justNowSpan/time.Minute), m.now)
	}},
	// Chinese: durations back from now.
	{regexp.MustCompile(`(?:最近|近|过去|过去的|这)\s*` + zhNum + `\s*个?\s*` + zhUnit + `(?:以来|里|内|中)?`),
		func(m timeMatch) (time.Time, time.Time, bool) {
			n, u, ok := zhCount(m.g[1], m.g[2])
			if !ok {
				return time.Time{}, time.Time{}, false
			}
			return rolling(u, n, m.now)
		}},
	{regexp.MustCompile(`前\s*(几|两|[二三四五六七])\s*天`), func(m timeMatch) (time.Time, time.Time, bool) {
		n := 7
		if m.g[1] != "几" {
			n, _ = parseZhNum(m.g[1])
		}
		d := dayStart(m.now)
		return d.AddDate(0, 0, -n), d, true
	}},
	{regexp.MustCompile(`([一两三])刻钟?(?:以前|之前|前)`), func(m timeMatch) (time.Time, time.Time, bool) {
		return m.ago("minute", 15*map[string]int{"一": 1, "两": 2, "三": 3}[m.g[1]])
	}},
	{regexp.MustCompile(zhNum + `\s*个?\s*` + zhUnit + `(?:以前|之前|前)`),
		func(m timeMatch) (time.Time, time.Time, bool) {
			if strings.HasSuffix(m.before, "最近") || strings.HasSuffix(m.before, "过去") {
				return time.Time{}, time.Time{}, false
			}
			n, u, ok := zhCount(m.g[1], m.g[2])
			if !ok {
				return time.Time{}, time.Time{}, false
			}
			return m.ago(u, n)
		}},
	// Chinese: named periods.
	{regexp.MustCompile(`上上个?(?:周|星期|礼拜)`), calendar("week", 2)},
	{regexp.MustCompile(`上个?(?:周|星期|礼拜)`), calendar("week", 1)},
	{regexp.MustCompile(`(?:本|这个?)(?:周|星期|礼拜)`), calendar("week", 0)},
	{regexp.MustCompile(`上个?(?:周|星期|礼拜)末`), func(m timeMatch) (time.Time, time.Time, bool) {
		s := weekStart(m.now).AddDate(0, 0, -2)
		return s, s.AddDate(0, 0, 2), true
	}},
	{regexp.MustCompile(`(上上|上|本|这)个?(?:周|星期|礼拜)` + zhWday), func(m timeMatch) (time.Time, time.Time, bool) {
		n := map[string]int{"上上": 2, "上": 1, "本": 0, "这": 0}[m.g[1]]
		return dayOfWeek(zhWeekdays[m.g[2]], n, m.now)
	}},
	{regexp.MustCompile(`(?:周|星期|礼拜)` + zhWday), func(m timeMatch) (time.Time, time.Time, bool) {
		// 每周三 is every Wednesday, 下周三 a plan, 一周一次 a count; 这周五
		// or 本周五 reach here only when that day is still ahead: a plan.
		if r, _ := utf8.DecodeLastRuneInString(m.before); r == '每' || r == '下' || r == '个' || r == '这' || r == '本' || zhNumeral(r) {
			return time.Time{}, time.Time{}, false
		}
		// 周五之前交 is a deadline: a plan.
		if strings.HasPrefix(m.after, "之前") || strings.HasPrefix(m.after, "以前") || strings.HasPrefix(m.after, "前") || m.planDay(planVerbZH, pastVerbZH) {
			return time.Time{}, time.Time{}, false
		}
		return latestDay(zhWeekdays[m.g[1]], m.now)
	}},
	{regexp.MustCompile(`上上个?月`), calendar("month", 2)},
	{regexp.MustCompile(`上个?月`), calendar("month", 1)},
	{regexp.MustCompile(`(?:本|这个)月`), calendar("month", 0)},
	{regexp.MustCompile(`前年`), calendar("year", 2)},
	{regexp.MustCompile(`去年`), calendar("year", 1)},
	{regexp.MustCompile(`今年`), calendar("year", 0)},
	// Chinese: months and dates.
	{regexp.MustCompile(`(?:([0-9]{4})\s*年\s*)?` + zhDay + `\s*月\s*份?`), func(m timeMatch) (time.Time, time.Time, bool) {
		if strings.HasSuffix(m.before, "个") || strings.HasPrefix(m.after, "前") || strings.HasPrefix(m.after, "以前") || strings.HasPrefix(m.after, "之前") {
			return time.Time{}, time.Time{}, false // 三个月, 三月前: counts, not months
		}
		mo, ok := zhMonthOf(m.g[2])
		if !ok {
			return time.Time{}, time.Time{}, false
		}
		return monthWindow(atoi(m.g[1]), mo, m.now, false)
	}},
	{regexp.MustCompile(`(?:([0-9]{4})\s*年\s*)?` + zhDay + `\s*月\s*` + zhDay + `\s*[日号]`), func(m timeMatch) (time.Time, time.Time, bool) {
		mo, ok := zhMonthOf(m.g[2])
		d, ok2 := parseZhNum(m.g[3])
		if !ok || !ok2 {
			return time.Time{}, time.Time{}, false
		}
		return dateWindow(atoi(m.g[1]), mo, d, m.now)
	}},
	{regexp.MustCompile(`([0-9]{1,2})\s*[日号]|` + zhDay + `\s*号`), func(m timeMatch) (time.Time, time.Time, bool) {
		// A day of the month alone: this month's; a day yet to come names
		// a plan.
		if r, _ := utf8.DecodeLastRuneInString(strings.TrimSpace(m.before)); r == '月' || r == '第' || zhNumeral(r) || r >= '0' && r <= '9' {
			return time.Time{}, time.Time{}, false
		}
		// 5号楼, 2号线, 3号门: a number, not a day.
		if r, _ := utf8.DecodeRuneInString(m.after); strings.ContainsRune(numberedThings, r) {
			return time.Time{}, time.Time{}, false
		}
		d, ok := parseZhNum(m.g[1] + m.g[2])
		if !ok || d < 1 || d > 31 {
			return time.Time{}, time.Time{}, false
		}
		s := time.Date(m.now.Year(), m.now.Month(), d, 0, 0, 0, 0, m.now.Location())
		if s.Day() != d || s.After(m.now) {
			return time.Time{}, time.Time{}, false
		}
		return s, s.AddDate(0, 0, 1), true
	}},
}

// numberedThings are the characters after 号 that make "N号" a number of
// a thing (5号楼 building 5, 2号线 line 2, 3号门, 8号床, 1号店, 6号桌,
// 号码), not a day of the month.
const numberedThings = "楼线门床房室店桌台位馆厅口窗柜机车码箱库仓场院栋座铺厂道"

func zhNumeral(r rune) bool {
	_, ok := zhDigits[r]
	return ok || r == '十' || r == '百'
}
