package engine

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// TimeRange is a relative time expression found in a query.
type TimeRange struct {
	// Since and Until bound the window, [Since, Until), in Now's location.
	Since, Until time.Time
	// Expr is the expression as found in the text ("last week", "最近三天").
	Expr string
	// Rest is the text with the expression removed and spaces tidied.
	Rest string
}

// ParseTime finds the first relative time expression in text, in English or
// Chinese, and resolves it against now (days, weeks, months in now's
// location; weeks start on Monday):
//
//	today, 今天                          [start of today, start of tomorrow)
//	yesterday, 昨天                      the day before today
//	the day before yesterday, 前天       two days before today (大前天: three)
//	N days/weeks/months/years ago,
//	N天前, N周前, N个月前                 that one calendar day/week/month/year
//	N hours ago, N小时前                 that clock hour
//	last week/month/year, 上周, 上个月, 去年 the previous calendar period
//	this week/month/year, 本周, 这个月, 今年 the current calendar period
//	last monday ... last sunday         the latest such day before today
//	last night                          18:00 yesterday to 06:00 today
//	in the last N days, past N hours,
//	the past week, 最近三天, 过去两周      rolling: [now - N units, end of today)
//
// N is digits or a number word (a, an, one ... twenty, a couple of, a few;
// 一 二 两 三 ... 十 二十 九十九). When several expressions occur, the leftmost
// (then the longest) wins. ok is false when there is none.
func ParseTime(text string, now time.Time) (tr TimeRange, ok bool) {
	best := -1
	var bestLoc []int
	for i := range timeRules {
		loc := timeRules[i].re.FindStringSubmatchIndex(text)
		if loc == nil {
			continue
		}
		if best < 0 || loc[0] < bestLoc[0] || (loc[0] == bestLoc[0] && loc[1] > bestLoc[1]) {
			best, bestLoc = i, loc
		}
	}
	if best < 0 {
		return TimeRange{}, false
	}
	groups := make([]string, len(bestLoc)/2)
	for g := range groups {
		if a, b := bestLoc[2*g], bestLoc[2*g+1]; a >= 0 {
			groups[g] = text[a:b]
		}
	}
	since, until, ok := timeRules[best].resolve(groups, now)
	if !ok {
		return TimeRange{}, false
	}
	rest := text[:bestLoc[0]] + " " + text[bestLoc[1]:]
	return TimeRange{
		Since: since,
		Until: until,
		Expr:  strings.TrimSpace(text[bestLoc[0]:bestLoc[1]]),
		Rest:  strings.Join(strings.Fields(rest), " "),
	}, true
}

type timeRule struct {
	re      *regexp.Regexp
	resolve func(g []string, now time.Time) (since, until time.Time, ok bool)
}

const (
	enNum  = `(\d{1,6}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|(?:a\s+)?couple(?:\s+of)?|(?:a\s+)?few)`
	enUnit = `(hour|day|week|month|year)s?`
	zhNum  = `([0-9]{1,6}|[零一二两三四五六七八九十百]{1,4}|几)`
	zhUnit = `(小时|钟头|天|日|周|星期|礼拜|月|年)`
)

var enNumbers = map[string]int{
	"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
	"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
	"fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
}

var weekdays = map[string]time.Weekday{
	"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
}

// maxUnits bounds N so that now - N units stays far from time.Time overflow.
var maxUnits = map[string]int{"hour": 24 * 36500, "day": 36500, "week": 5300, "month": 1200, "year": 100}

func parseEnNum(s string) (int, bool) {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	if n, err := strconv.Atoi(s); err == nil {
		return n, true
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
	"小时": "hour", "钟头": "hour", "天": "day", "日": "day", "周": "week", "星期": "week", "礼拜": "week",
	"月": "month", "年": "year",
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
	case "hour":
		h := now.Truncate(time.Hour)
		s := h.Add(-time.Duration(n) * time.Hour)
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

// rolling returns [now - n units, end of today).
func rolling(unit string, n int, now time.Time) (time.Time, time.Time) {
	end := dayStart(now).AddDate(0, 0, 1)
	switch unit {
	case "hour":
		return now.Add(-time.Duration(n) * time.Hour), end
	case "day":
		return now.AddDate(0, 0, -n), end
	case "week":
		return now.AddDate(0, 0, -7*n), end
	case "month":
		return now.AddDate(0, -n, 0), end
	default:
		return now.AddDate(-n, 0, 0), end
	}
}

func fixed(n int) func([]string, time.Time) (time.Time, time.Time, bool) {
	return func(_ []string, now time.Time) (time.Time, time.Time, bool) {
		s, u := period("day", n, now)
		return s, u, true
	}
}

func calendar(unit string, n int) func([]string, time.Time) (time.Time, time.Time, bool) {
	return func(_ []string, now time.Time) (time.Time, time.Time, bool) {
		s, u := period(unit, n, now)
		return s, u, true
	}
}

func unitOK(unit string, n int) bool { return n >= 1 && n <= maxUnits[unit] }

var timeRules = []timeRule{
	// English.
	{regexp.MustCompile(`(?i)\b(?:the\s+)?day\s+before\s+yesterday\b`), fixed(2)},
	{regexp.MustCompile(`(?i)\byesterday\b`), fixed(1)},
	{regexp.MustCompile(`(?i)\btoday\b`), fixed(0)},
	{regexp.MustCompile(`(?i)\blast\s+night\b`), func(_ []string, now time.Time) (time.Time, time.Time, bool) {
		d := dayStart(now)
		return d.Add(-6 * time.Hour), d.Add(6 * time.Hour), true
	}},
	{regexp.MustCompile(`(?i)\b(?:(?:in|over|during|within|for)\s+)?(?:the\s+)?(?:last|past|previous)\s+` + enNum + `\s+` + enUnit + `\b`),
		func(g []string, now time.Time) (time.Time, time.Time, bool) {
			n, ok := parseEnNum(g[1])
			u := strings.ToLower(g[2])
			if !ok || !unitOK(u, n) {
				return time.Time{}, time.Time{}, false
			}
			s, e := rolling(u, n, now)
			return s, e, true
		}},
	{regexp.MustCompile(`(?i)\b(?:(?:in|over|during|within)\s+)?(?:the\s+)?past\s+` + enUnit + `\b`),
		func(g []string, now time.Time) (time.Time, time.Time, bool) {
			s, e := rolling(strings.ToLower(g[1]), 1, now)
			return s, e, true
		}},
	{regexp.MustCompile(`(?i)\b` + enNum + `\s+` + enUnit + `\s+ago\b`),
		func(g []string, now time.Time) (time.Time, time.Time, bool) {
			n, ok := parseEnNum(g[1])
			u := strings.ToLower(g[2])
			if !ok || !unitOK(u, n) {
				return time.Time{}, time.Time{}, false
			}
			s, e := period(u, n, now)
			return s, e, true
		}},
	{regexp.MustCompile(`(?i)\b(?:last|previous)\s+(week|month|year)\b`),
		func(g []string, now time.Time) (time.Time, time.Time, bool) {
			s, e := period(strings.ToLower(g[1]), 1, now)
			return s, e, true
		}},
	{regexp.MustCompile(`(?i)\bthis\s+(week|month|year)\b`),
		func(g []string, now time.Time) (time.Time, time.Time, bool) {
			s, e := period(strings.ToLower(g[1]), 0, now)
			return s, e, true
		}},
	{regexp.MustCompile(`(?i)\blast\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b`),
		func(g []string, now time.Time) (time.Time, time.Time, bool) {
			wd := weekdays[strings.ToLower(g[1])]
			back := (int(now.Weekday())-int(wd)+7)%7 + 0
			if back == 0 {
				back = 7
			}
			s, e := period("day", back, now)
			return s, e, true
		}},
	// Chinese.
	{regexp.MustCompile(`大前天`), fixed(3)},
	{regexp.MustCompile(`前天`), fixed(2)},
	{regexp.MustCompile(`昨天|昨日|昨晚`), fixed(1)},
	{regexp.MustCompile(`今天|今日|今晚`), fixed(0)},
	{regexp.MustCompile(`(?:最近|近|过去|过去的|这)\s*` + zhNum + `\s*个?\s*` + zhUnit + `(?:以来|里|内|中)?`),
		func(g []string, now time.Time) (time.Time, time.Time, bool) {
			n, ok := parseZhNum(g[1])
			u := zhUnits[g[2]]
			if !ok || !unitOK(u, n) {
				return time.Time{}, time.Time{}, false
			}
			s, e := rolling(u, n, now)
			return s, e, true
		}},
	{regexp.MustCompile(zhNum + `\s*个?\s*` + zhUnit + `(?:以前|之前|前)`),
		func(g []string, now time.Time) (time.Time, time.Time, bool) {
			n, ok := parseZhNum(g[1])
			u := zhUnits[g[2]]
			if !ok || !unitOK(u, n) {
				return time.Time{}, time.Time{}, false
			}
			s, e := period(u, n, now)
			return s, e, true
		}},
	{regexp.MustCompile(`上个?(?:周|星期|礼拜)`), calendar("week", 1)},
	{regexp.MustCompile(`(?:本|这个?)(?:周|星期|礼拜)`), calendar("week", 0)},
	{regexp.MustCompile(`上个?月`), calendar("month", 1)},
	{regexp.MustCompile(`(?:本|这个)月`), calendar("month", 0)},
	{regexp.MustCompile(`去年`), calendar("year", 1)},
	{regexp.MustCompile(`今年`), calendar("year", 0)},
}
