package engine

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Clock times narrow a day ("between 9:30 and 10 this morning", "今天上午
// 9点40到10点之间", "yesterday from 2pm to 4pm", "昨天晚上九点左右", "last
// night around 9pm"): a range of clock times, or one clock time, next to a
// named day or part of a day (nothing but spaces, "的" or a comma between
// them) narrows the day's window to [start, end + 1 minute) of that day,
// and one clock time to within clockSpan of it (clockAround with "around",
// "about", "左右", "前后"; the hour after it with "多": "九点多"). A range
// with no day next to it ("what did we say between 9:30 and 10?", "9点到10
// 点之间") is the latest such span begun: today's, or yesterday's when
// today's has not begun; so is one clock time with "那会儿" or "那时候"
// after it ("快十点那会儿在讨论什么"), and an approximate one (左右, 前后,
// 多, around, about) or one with "的时候" in a question about what was
// said or discussed ("十点左右开会在聊什么"). Any other single clock time
// with no day is not a window:
// "did we move the call to 3pm?" names a plan, and so does a range without
// "between" or "之间" ("from 3pm to 4pm" is as often a change as a time),
// and any range in a text that names a future day.
//
// Hours: am/pm, or the part of the day (afternoon, evening, night, 下午, 晚
// 上: +12 for an hour under 12), decide; with neither, an hour under 7 is
// taken as the afternoon (a conversation at 2 to 4 is rarely at night). A
// clock time must have minutes (9:30, 9点40, 九点半), am/pm, "o'clock" or
// 点 (a bare "9 and 10" is a count); a window that misses the day's own
// window, or a time out of range, leaves the day as it was.
const (
	clockSpan   = 30 * time.Minute
	clockAround = time.Hour
)

var (
	enClockRe = `(\d{1,2})(?::([0-5]\d))?\s*(a\.?m\.?|p\.?m\.?|o'clock)?`
	zhClockRe = `(上午|早上|中午|下午|晚上)?([0-9]{1,2}|[零一二两三四五六七八九十]{1,3})(?:点|:|：)(半|一刻|三刻|[0-5]?[0-9]分?|[一二三四五六七八九十]{1,3}分?)?`
	// enClockRange: groups 1 between/from, 2-4 the first clock (hour,
	// minutes, am/pm), 5-7 the second.
	enClockRange = mustGate(`(?i)(\bbetween\s+|\bfrom\s+)?\b` + enClockRe + `\s*(?:and|to|until|till|-|–|~)\s*` + enClockRe + `(?:\b|$)`)
	// zhClockRange: groups 1 从/在, 2-4 the first clock (part of the day,
	// hour, minutes), 5-7 the second, 8 之间.
	zhClockRange = mustGate(`(从|在)?` + zhClockRe + `\s*(?:到|至|-|–|~)\s*` + zhClockRe + `(之间|期间)?`)
	// enClockAt: groups 1 at/around, 2-4 the clock.
	enClockAt = mustGate(`(?i)\b(at|around|about|near)\s+` + enClockRe + `(?:\b|$)`)
	// enWordClockAt: a clock time in words ("around half past nine", "at
	// a quarter to ten", "at twenty to nine", "about ten o'clock", "at
	// nine thirty", "around noon"): groups 1 at/around, 2 the minutes
	// before past/to, 3 past/to, 4 the hour, 5 o'clock or the minutes. A
	// bare "around ten" is a count as often as a time: a clock time only
	// next to a day ("around nine this morning"), never alone.
	enWordClockAt = mustGate(`(?i)\b(at|around|about|near)\s+(?:(half|a\s+quarter|quarter|five|ten|twenty|twenty-five)\s+(past|to)\s+)?(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|noon|midday)\b(?:\s+(o'clock|fifteen|thirty|forty-five))?`)
	// zhClockAt: groups 1-3 the clock, 4 左右/前后/多.
	zhClockAt = mustGate(zhClockRe + `(左右|前后|多)?`)
	// clockGap is what may stand between a day and its clock times.
	clockGap = regexp.MustCompile(`^\s*(?:的|,|，)?\s*$`)
	// futureDay names a day ahead: a range of clock times in the same
	// text is a plan's.
	futureDay = regexp.MustCompile(`(?i)\b(tomorrow|tonight|next|upcoming|coming)\b|明天|明早|明晚|后天|下周|下个|下星期|下礼拜|今晚|待会|一会儿`)
)

// clockOf is one clock time: its hour and minute as written, whether
// am/pm was given (pm), and whether it is a clock time at all.
type clockOf struct {
	h, m     int
	am, pm   bool
	explicit bool // minutes, am/pm, o'clock or 点: a time, not a count
}

func enClock(g []string) (clockOf, bool) {
	h, err := strconv.Atoi(g[0])
	if err != nil {
		return clockOf{}, false
	}
	c := clockOf{h: h}
	if g[1] != "" {
		c.m, _ = strconv.Atoi(g[1])
		c.explicit = true
	}
	switch s := strings.ToLower(strings.ReplaceAll(g[2], ".", "")); s {
	case "am":
		c.am, c.explicit = true, true
	case "pm":
		c.pm, c.explicit = true, true
	case "o'clock":
		c.explicit = true
	}
	return c, c.h <= 24
}

// enWordClock reads a clock time in words: the hour, and half or a
// quarter past or to it, or o'clock or the minutes after it; false
// without any of them ("around ten").
// wordMinutes are the minutes before "past" or "to" in words but a
// quarter.
var wordMinutes = map[string]int{"half": 30, "five": 5, "ten": 10, "twenty": 20, "twenty-five": 25}

func enWordClock(part, rel, hour, after string) (clockOf, bool) {
	if lh := strings.ToLower(hour); lh == "noon" || lh == "midday" {
		return clockOf{h: 12, pm: true, explicit: true}, part == "" && after == ""
	}
	h := slices.Index([]string{"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}, strings.ToLower(hour)) + 1
	if h == 0 {
		return clockOf{}, false
	}
	c := clockOf{h: h, explicit: true}
	switch m := map[string]int{"fifteen": 15, "thirty": 30, "forty-five": 45}[strings.ToLower(after)]; {
	case part != "":
		q := wordMinutes[strings.ToLower(part)]
		if q == 0 {
			q = 15 // a quarter
		}
		if strings.EqualFold(rel, "to") {
			c.h, c.m = h-1, 60-q
			if c.h == 0 {
				c.h = 12
			}
		} else {
			c.m = q
		}
	case m > 0:
		c.m = m
	case strings.EqualFold(after, "o'clock"):
	default:
		c.explicit = false // "around nine": a time only next to a day
	}
	return c, true
}

func zhClock(g []string) (clockOf, bool) {
	h, ok := parseZhNum(g[1])
	if !ok {
		return clockOf{}, false
	}
	c := clockOf{h: h, explicit: true}
	switch g[0] {
	case "上午", "早上":
		c.am = true
	case "下午", "晚上":
		c.pm = true
	case "中午":
		c.pm = h < 6
	}
	switch m := strings.TrimSuffix(g[2], "分"); m {
	case "":
	case "半":
		c.m = 30
	case "一刻":
		c.m = 15
	case "三刻":
		c.m = 45
	default:
		n, ok := parseZhNum(m)
		if !ok || n > 59 {
			return clockOf{}, false
		}
		c.m = n
	}
	return c, c.h <= 24
}

// at returns the clock time on the day of base, pm meaning the afternoon
// or later part of the day (from the day's own window or its pm flag).
func (c clockOf) at(base time.Time, pm bool) time.Time {
	h := c.h
	switch {
	case c.am:
		if h == 12 {
			h = 0
		}
	case c.pm || pm:
		if h < 12 {
			h += 12
		}
	case h < 7:
		h += 12
	}
	return dayStart(base).Add(time.Duration(h)*time.Hour + time.Duration(c.m)*time.Minute)
}

// clockMatch is one clock expression at text[start:end] and the window it
// names on the day of a base time.
type clockMatch struct {
	start, end int
	first      clockOf
	second     *clockOf // a range's end; nil: one clock time
	around     string   // around, about, 左右, 前后, 多
	ranged     bool     // between, 之间: a range that needs no day
}

func (c clockMatch) window(base time.Time, pm bool) (time.Time, time.Time) {
	if c.second != nil {
		// "2 to 4pm": the second's am/pm is the first's too.
		first := c.first
		if !first.am && !first.pm {
			first.am, first.pm = c.second.am, c.second.pm
		}
		t := first.at(base, pm)
		u := c.second.at(base, pm || t.Hour() >= 12)
		return t, u.Add(time.Minute)
	}
	t := c.first.at(base, pm)
	switch c.around {
	case "around", "about", "near", "左右", "前后":
		return t.Add(-clockAround), t.Add(clockAround)
	case "多":
		return t, t.Add(clockAround)
	}
	return t.Add(-clockSpan), t.Add(clockSpan)
}

// findClocks returns the clock expressions of text, ranges first; with
// withDay (a day is named next to them) an hour in words alone too.
func findClocks(text string, withDay bool) []clockMatch {
	var out []clockMatch
	gt := gateText{text: text} // lowered once for the four gates
	find := func(re gatedRe) [][]int {
		if !re.need.admits(&gt) {
			return nil
		}
		return re.Regexp.FindAllStringSubmatchIndex(text, -1) // past the gate already
	}
	sub := func(m []int, g int) string {
		if m[2*g] < 0 {
			return ""
		}
		return text[m[2*g]:m[2*g+1]]
	}
	for _, m := range find(enClockRange) {
		a, ok1 := enClock([]string{sub(m, 2), sub(m, 3), sub(m, 4)})
		b, ok2 := enClock([]string{sub(m, 5), sub(m, 6), sub(m, 7)})
		if ok1 && ok2 && (a.explicit || b.explicit) {
			out = append(out, clockMatch{start: m[0], end: m[1], first: a, second: &b, ranged: strings.EqualFold(strings.TrimSpace(sub(m, 1)), "between")})
		}
	}
	for _, m := range find(zhClockRange) {
		a, ok1 := zhClock([]string{sub(m, 2), sub(m, 3), sub(m, 4)})
		b, ok2 := zhClock([]string{sub(m, 5), sub(m, 6), sub(m, 7)})
		if ok1 && ok2 {
			out = append(out, clockMatch{start: m[0], end: m[1], first: a, second: &b, ranged: sub(m, 8) != ""})
		}
	}
	for _, m := range find(enClockAt) {
		if a, ok := enClock([]string{sub(m, 2), sub(m, 3), sub(m, 4)}); ok && a.explicit {
			out = append(out, clockMatch{start: m[0], end: m[1], first: a, around: strings.ToLower(sub(m, 1))})
		}
	}
	for _, m := range find(enWordClockAt) {
		if a, ok := enWordClock(sub(m, 2), sub(m, 3), sub(m, 4), sub(m, 5)); ok && (a.explicit || withDay) {
			out = append(out, clockMatch{start: m[0], end: m[1], first: a, around: strings.ToLower(sub(m, 1))})
		}
	}
	for _, m := range find(zhClockAt) {
		if a, ok := zhClock([]string{sub(m, 1), sub(m, 2), sub(m, 3)}); ok {
			out = append(out, clockMatch{start: m[0], end: m[1], first: a, around: sub(m, 4)})
		}
	}
	return out
}

// withClock narrows s, a named day or part of a day, by the clock times
// next to it (above); ok is false when there are none.
func withClock(text string, s span) (span, bool) {
	d := s.until.Sub(s.since)
	if d > 25*time.Hour || d < 2*time.Hour {
		return s, false
	}
	for _, c := range findClocks(text, true) {
		var gap string
		switch {
		case c.end <= s.start:
			gap = text[c.end:s.start]
		case c.start >= s.end:
			gap = text[s.end:c.start]
		case c.start >= s.start && c.end > s.end:
			// "今天上午9点40到10点": the clock's part of the day is the
			// day's own.
		default:
			continue
		}
		if !clockGap.MatchString(gap) {
			continue
		}
		pm := s.since.Sub(dayStart(s.since)) >= 12*time.Hour
		since, until := c.window(s.since, pm)
		if !since.Before(until) || !since.Before(s.until) || !until.After(s.since) {
			continue
		}
		out := span{start: min(s.start, c.start), end: max(s.end, c.end), since: maxTime(since, s.since), until: minTime(until, s.until)}
		if c.second == nil {
			// One clock time names a moment: the middle of its span.
			out.at = since.Add(until.Sub(since) / 2)
			if m := pastMoment.FindStringIndex(text[out.end:]); m != nil {
				out.end += m[1]
			}
		}
		return out, true
	}
	return s, false
}

// clockOnly returns the window of a range of clock times that needs no
// day ("between 9:30 and 10", "9点到10点之间"), or of one clock time said
// as a moment past ("十点那会儿"): today's, or yesterday's when today's has
// not begun; none in a text naming a future day.
func clockOnly(text string, now time.Time) (span, bool) {
	for _, c := range findClocks(text, false) {
		end := c.end
		if c.second == nil {
			// "快十点那会儿": one clock time said as a past moment; so is
			// an approximate one, or one "的时候", in a question about
			// what was said then ("十点左右开会在聊什么", "what were we
			// discussing around 10:30?").
			m := pastMoment.FindStringIndex(text[c.end:])
			if m == nil && (c.around != "" || strings.HasPrefix(text[c.end:], "的时候")) && discussWord.MatchString(text) {
				m = []int{0, 0}
				if strings.HasPrefix(text[c.end:], "的时候") {
					m[1] = len("的时候")
				}
			}
			if m == nil || c.ranged {
				continue
			}
			end += m[1]
		} else if !c.ranged {
			continue
		}
		if futureDay.MatchString(text) {
			return span{}, false
		}
		since, until := c.window(now, false)
		if !since.Before(now) {
			since, until = c.window(now.AddDate(0, 0, -1), false)
		}
		if since.Before(until) {
			start := c.start
			if c.second == nil && strings.HasSuffix(text[:start], "快") {
				start -= len("快") // "快十点那会儿": nearly ten
			}
			s := span{start: start, end: end, since: since, until: until}
			if c.second == nil {
				s.at = since.Add(until.Sub(since) / 2)
			}
			return s, true
		}
	}
	return span{}, false
}

// pastMoment, right after one clock time, makes it a moment past ("十点
// 那会儿", "九点半那时候"): the latest such time begun, as a range of clock
// times with "between" is.
// discussWord: a question about what was said, discussed, asked for or
// noted ("十点左右我让你起草了什么", "what did I note around 10:30?").
var discussWord = mustGate(`(?i)\b(?:say|said|saying|discuss|discussed|discussing|talk|talked|talking|mention|mentioned|tell|told|ask|asked|note|noted|wrote|draft|drafted|remind)\b|说|聊|讨论|谈|讲|提到|让你|叫你|起草|写了|记了|记下|提醒`)

var pastMoment = mustGate(`^\s*(?:那会儿|那会|那时候|那时|那个时候)`)
