package consolidate

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Date is a date or time expression found in a text and resolved against
// the time the text was said.
type Date struct {
	// Time is the resolved instant, in the reference time's location. A
	// date without a time of day resolves to midnight at its start.
	Time time.Time
	// Expr is the expression as written ("下周一下午两点", "next Friday").
	Expr string
	// HasClock is set when the expression gave a time of day.
	HasClock bool
}

// ResolveDate finds the first date expression in text and resolves it
// against ref (the time the text was said, in the location whose calendar
// applies). It reports false when text names no date.
//
// Weeks start on Monday. "下周X" and "next X" are day X of the next
// calendar week (said on Tuesday 2026-12-01, "下周一" is 2026-12-07 and
// "next Friday" 2026-12-11); "周X", "这周X", "this X", "on X", "by X",
// "X前" are the coming day X, today included. "月底" and "end of the month"
// are the month's last day, "end of the week" its Friday. "明天", "后天",
// "tomorrow", "tonight" (20:00 unless a time is given) count from ref's
// day. "12月5日", "5号", "the 12th", "March 3rd" take the nearest such date
// not before ref's day. A time of day ("下午两点", "3pm", "14:30", "十点半")
// attaches to the date before it, or to ref's day when no date is given;
// "下午", "晚上" add 12 hours to hours below 12.
func ResolveDate(text string, ref time.Time) (Date, bool) {
	if d, ok := resolveZH(text, ref); ok {
		return d, true
	}
	return resolveEN(text, ref)
}

var weekdayZH = map[string]time.Weekday{"一": time.Monday, "二": time.Tuesday, "三": time.Wednesday, "四": time.Thursday,
	"五": time.Friday, "六": time.Saturday, "日": time.Sunday, "天": time.Sunday, "末": time.Saturday}

const zhNum = `[零〇一二两三四五六七八九十\d]+`

var (
	zhDateRe      = regexp.MustCompile(`(大后天|后天|明天|明早|明晚|今天|今晚|今早|(?:下|下个|这|这个|本)?(?:周|星期|礼拜)[一二三四五六日天末]|下周|月底|年底|下个?月(?:` + zhNum + `)[号日]|(?:` + zhNum + `)月(?:` + zhNum + `)[号日]?|本月(?:` + zhNum + `)[号日]|(?:` + zhNum + `)[号日])`)
	zhBareClockRe = regexp.MustCompile(`(?:上午|早上|早晨|中午|下午|傍晚|晚上)?(?:` + zhNum + `)点`)
	zhClockRe     = regexp.MustCompile(`^(?:的)?(上午|早上|早晨|中午|下午|傍晚|晚上)?(` + zhNum + `)?(?:点|:|：)?(半|一刻|三刻|(` + zhNum + `)分?)?`)
)

func resolveZH(text string, ref time.Time) (Date, bool) {
	loc := zhDateRe.FindStringIndex(text)
	clockStart := -1
	var day time.Time
	today := midnight(ref)
	if loc != nil {
		expr := text[loc[0]:loc[1]]
		switch {
		case expr == "今天" || expr == "今晚" || expr == "今早":
			day = today
		case expr == "明天" || expr == "明早" || expr == "明晚":
			day = today.AddDate(0, 0, 1)
		case expr == "后天":
			day = today.AddDate(0, 0, 2)
		case expr == "大后天":
			day = today.AddDate(0, 0, 3)
		case expr == "下周":
			day = weekStart(today).AddDate(0, 0, 7)
		case expr == "月底":
			day = time.Date(ref.Year(), ref.Month()+1, 0, 0, 0, 0, 0, ref.Location())
		case expr == "年底":
			day = time.Date(ref.Year(), 12, 31, 0, 0, 0, 0, ref.Location())
		case strings.ContainsAny(expr, "周期拜"):
			wd := weekdayZH[lastRune(expr)]
			if strings.HasPrefix(expr, "下") {
				day = weekStart(today).AddDate(0, 0, 7+mondayIndex(wd))
			} else {
				day = comingWeekday(today, wd)
			}
		case strings.HasPrefix(expr, "下"): // 下个月5号
			n := zhNumber(strings.Trim(expr[strings.Index(expr, "月")+len("月"):], "号日"))
			day = time.Date(ref.Year(), ref.Month()+1, n, 0, 0, 0, 0, ref.Location())
		case strings.Contains(expr, "月") && !strings.HasPrefix(expr, "本"):
			i := strings.Index(expr, "月")
			m, dd := zhNumber(expr[:i]), zhNumber(strings.Trim(expr[i+len("月"):], "号日"))
			if m < 1 || m > 12 || dd < 1 || dd > 31 {
				return Date{}, false
			}
			day = time.Date(ref.Year(), time.Month(m), dd, 0, 0, 0, 0, ref.Location())
			if day.Before(today) {
				day = day.AddDate(1, 0, 0)
			}
		default: // 5号, 本月5号
			dd := zhNumber(strings.Trim(strings.TrimPrefix(expr, "本月"), "号日"))
			if dd < 1 || dd > 31 {
				return Date{}, false
			}
			day = time.Date(ref.Year(), ref.Month(), dd, 0, 0, 0, 0, ref.Location())
			if day.Before(today) {
				day = day.AddDate(0, 1, 0)
			}
		}
		clockStart = loc[1]
		d := Date{Time: day, Expr: expr}
		if expr == "今晚" || expr == "明晚" {
			d.Time = day.Add(20 * time.Hour)
			d.HasClock = true
		}
		if h, m, n, ok := zhClock(text[clockStart:], strings.HasSuffix(expr, "晚")); ok {
			d.Time = day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
			d.Expr = text[loc[0] : clockStart+n]
			d.HasClock = true
		}
		return d, true
	}
	// A time of day alone: "下午三点" is today.
	// A bare clock needs 点, so a lone number is never a time.
	if loc := zhBareClockRe.FindStringIndex(text); loc != nil {
		if h, m, n, ok := zhClock(text[loc[0]:], false); ok {
			return Date{Time: today.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute), Expr: text[loc[0] : loc[0]+n], HasClock: true}, true
		}
	}
	return Date{}, false
}

// zhClock parses a time of day at the start of s ("下午两点半"); evening
// says the date word already meant the evening (今晚八点).
func zhClock(s string, evening bool) (h, m, n int, ok bool) {
	sub := zhClockRe.FindStringSubmatch(s)
	if sub == nil || sub[0] == "" {
		return 0, 0, 0, false
	}
	period, hour, frac := sub[1], sub[2], sub[3]
	if hour == "" || !strings.Contains(sub[0], "点") && !strings.ContainsAny(sub[0], ":：") {
		return 0, 0, 0, false
	}
	h = zhNumber(hour)
	switch {
	case frac == "半":
		m = 30
	case frac == "一刻":
		m = 15
	case frac == "三刻":
		m = 45
	case sub[4] != "":
		m = zhNumber(sub[4])
	}
	if (period == "下午" || period == "傍晚" || period == "晚上" || evening) && h < 12 {
		h += 12
	}
	if period == "中午" && h < 6 {
		h += 12
	}
	if h > 23 || m > 59 {
		return 0, 0, 0, false
	}
	return h, m, len(sub[0]), true
}

// zhNumber parses 0-99 in Arabic or Chinese numerals; -1 when it cannot.
func zhNumber(s string) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	digit := map[rune]int{'零': 0, '〇': 0, '一': 1, '二': 2, '两': 2, '三': 3, '四': 4, '五': 5, '六': 6, '七': 7, '八': 8, '九': 9}
	rs := []rune(s)
	switch {
	case len(rs) == 1 && rs[0] == '十':
		return 10
	case len(rs) == 1:
		if v, ok := digit[rs[0]]; ok {
			return v
		}
	case len(rs) == 2 && rs[0] == '十':
		return 10 + digit[rs[1]]
	case len(rs) == 2 && rs[1] == '十':
		return digit[rs[0]] * 10
	case len(rs) == 3 && rs[1] == '十':
		return digit[rs[0]]*10 + digit[rs[2]]
	}
	return -1
}

var weekdayEN = map[string]time.Weekday{"monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday, "sunday": time.Sunday,
	"mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday, "thu": time.Thursday, "fri": time.Friday}

var monthEN = map[string]time.Month{"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
	"august": 8, "september": 9, "october": 10, "november": 11, "december": 12, "jan": 1, "feb": 2, "mar": 3, "apr": 4,
	"jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12}

var (
	enDateRe  = regexp.MustCompile(`\b(day after tomorrow|tomorrow|tonight|today|next week|end of (?:the )?(?:week|month|day)|eod|eow|(?:next|this|on|by|until|before)\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?\s+\d{1,2}(?:st|nd|rd|th)?|the\s+\d{1,2}(?:st|nd|rd|th))\b`)
	enClockRe = regexp.MustCompile(`\b(?:at\s+)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)\b|\b(?:at\s+)(\d{1,2}):(\d{2})\b|\b(noon|midnight)\b`)
	enDayNum  = regexp.MustCompile(`\d{1,2}`)
)

func resolveEN(text string, ref time.Time) (Date, bool) {
	low := asciiLower(text)
	today := midnight(ref)
	var d Date
	found := false
	if loc := enDateRe.FindStringIndex(low); loc != nil {
		expr := text[loc[0]:loc[1]]
		low := strings.ToLower(expr)
		fields := strings.Fields(low)
		last := fields[len(fields)-1]
		var day time.Time
		switch {
		case low == "today" || low == "eod" || low == "end of day" || low == "end of the day":
			day = today
		case low == "tonight":
			day = today
		case low == "tomorrow":
			day = today.AddDate(0, 0, 1)
		case low == "day after tomorrow":
			day = today.AddDate(0, 0, 2)
		case low == "next week":
			day = weekStart(today).AddDate(0, 0, 7)
		case low == "eow" || strings.HasSuffix(low, "week"):
			day = comingWeekday(today, time.Friday)
		case strings.HasSuffix(low, "month"):
			day = time.Date(ref.Year(), ref.Month()+1, 0, 0, 0, 0, 0, ref.Location())
		case weekdayEN[last] != 0 || last == "sunday":
			wd := weekdayEN[last]
			if fields[0] == "next" {
				day = weekStart(today).AddDate(0, 0, 7+mondayIndex(wd))
			} else {
				day = comingWeekday(today, wd)
			}
		case strings.HasPrefix(low, "the "):
			dd, _ := strconv.Atoi(enDayNum.FindString(low))
			if dd < 1 || dd > 31 {
				return Date{}, false
			}
			day = time.Date(ref.Year(), ref.Month(), dd, 0, 0, 0, 0, ref.Location())
			if day.Before(today) {
				day = day.AddDate(0, 1, 0)
			}
		default:
			m := monthEN[strings.TrimSuffix(fields[0], ".")]
			dd, _ := strconv.Atoi(enDayNum.FindString(low))
			if m == 0 || dd < 1 || dd > 31 {
				return Date{}, false
			}
			day = time.Date(ref.Year(), m, dd, 0, 0, 0, 0, ref.Location())
			if day.Before(today) {
				day = day.AddDate(1, 0, 0)
			}
		}
		d, found = Date{Time: day, Expr: expr}, true
		if low == "tonight" {
			d.Time, d.HasClock = day.Add(20*time.Hour), true
		}
	}
	if m := enClockRe.FindStringSubmatchIndex(low); m != nil {
		h, mm := -1, 0
		switch {
		case m[2] >= 0:
			h, _ = strconv.Atoi(text[m[2]:m[3]])
			if m[4] >= 0 {
				mm, _ = strconv.Atoi(text[m[4]:m[5]])
			}
			ampm := strings.ToLower(text[m[6]:m[7]])
			if h == 12 {
				h = 0
			}
			if ampm == "pm" {
				h += 12
			}
		case m[8] >= 0:
			h, _ = strconv.Atoi(text[m[8]:m[9]])
			mm, _ = strconv.Atoi(text[m[10]:m[11]])
		default:
			if strings.EqualFold(text[m[12]:m[13]], "noon") {
				h = 12
			} else {
				h = 0
			}
		}
		if h >= 0 && h < 24 && mm < 60 {
			if !found {
				d = Date{Time: today, Expr: ""}
				found = true
			}
			base := midnight(d.Time)
			d.Time = base.Add(time.Duration(h)*time.Hour + time.Duration(mm)*time.Minute)
			d.HasClock = true
			if d.Expr == "" {
				d.Expr = strings.TrimSpace(text[m[0]:m[1]])
			} else {
				d.Expr += " " + strings.TrimSpace(text[m[0]:m[1]])
			}
		}
	}
	return d, found
}

func midnight(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}

// mondayIndex is 0 for Monday ... 6 for Sunday.
func mondayIndex(wd time.Weekday) int { return (int(wd) + 6) % 7 }

func weekStart(day time.Time) time.Time { return day.AddDate(0, 0, -mondayIndex(day.Weekday())) }

// comingWeekday is the next day with weekday wd, today included.
func comingWeekday(today time.Time, wd time.Weekday) time.Time {
	return today.AddDate(0, 0, (int(wd)-int(today.Weekday())+7)%7)
}

func lastRune(s string) string {
	rs := []rune(s)
	return string(rs[len(rs)-1])
}
