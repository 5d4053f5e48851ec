package engine

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Holidays name a day, or a few, like a date: "since Christmas", "between
// December 20 and New Year's", "国庆期间", "春节前后", "中秋那天". Each
// resolves as a date without a year does (dateWindow): its latest
// occurrence not in the future, none when that is within half a year
// ahead (the question is then about a plan, not a window). The holidays
// of the Chinese calendar come from lunar.txt (1990-2060): 春节 (also 过年,
// Chinese or Lunar New Year, Spring Festival) is 除夕 and the six days
// after it, 除夕 (大年三十, New Year's Eve of that calendar) one day, 元宵,
// 清明, 端午, 七夕, 中秋 and 重阳 one day each. Thanksgiving is the US one
// (the fourth Thursday of November), Mother's Day (母亲节) the second
// Sunday of May, Father's Day (父亲节) the third of June; holidays set
// each year by decree are taken at their usual dates (国庆 or National
// Day October 1-7, 劳动节 and the May Day holiday May 1-5); days of a
// fixed date (五四青年节
// May 4, 妇女节 or Women's Day March 8, 儿童节 or 六一 June 1, 教师节 September
// 10, 植树节 March 12, 愚人节 April 1, 建军节 August 1) one day each; the
// shopping days 双十一 (Singles' Day) and 双十二 at November 11 and
// December 12.
var (
	holidayEN = regexp.MustCompile(`(?i)\b(?:(new\s+year(?:'|’)?s\s+eve)|(new\s+year(?:'|’)?s(?:\s+day)?)|(christmas\s+eve)|(christmas(?:\s+day)?|xmas)|(boxing\s+day)|(halloween)|(valentine(?:'|’)?s(?:\s+day)?)|(thanksgiving(?:\s+day)?)|((?:chinese|lunar)\s+new\s+year|spring\s+festival)|(mid-?autumn(?:\s+festival)?|moon\s+festival)|(dragon\s+boat(?:\s+festival)?)|(lantern\s+festival)|(qingming(?:\s+festival)?|tomb[-\s]sweeping(?:\s+day)?)|(easter(?:\s+(?:weekend|sunday|monday))?|good\s+friday)|(singles(?:'|’)?\s+day)|(may\s+day(?:\s+holiday)?)|(national\s+day(?:\s+holiday)?)|((?:international\s+)?women(?:'|’)?s\s+day)|(children(?:'|’)?s\s+day)|(teachers?(?:'|’)?\s+day)|(april\s+fools?(?:'|’)?(?:\s+day)?)|(mother(?:'|’)?s\s+day)|(father(?:'|’)?s\s+day))\b`)
	holidayZH = regexp.MustCompile(`(平安夜)|(圣诞节|圣诞)|(元旦)|(情人节)|(万圣节)|(劳动节|五一假期|五一长假|五一)|(国庆节|国庆假期|国庆长假|国庆)|(除夕|大年三十)|(春节|过年|农历新年)|(元宵节|元宵)|(清明节|清明)|(端午节|端午)|(七夕节|七夕)|(中秋节|中秋)|(重阳节|重阳)|(双十一|双11)|(双十二|双12)|(母亲节)|(父亲节)|(五四青年节|青年节)|(三八妇女节|妇女节|三八节)|(六一儿童节|儿童节|六一)|(教师节)|(植树节)|(愚人节)|(建军节)`)
)

//go:embed lunar.txt
var lunarText string

// lunarFirst and lunarLast are the years lunar.txt covers.
const (
	lunarFirst = 1990
	lunarLast  = 2060
)

// lunarHolidays are lunar.txt's columns: a day of the Chinese calendar
// (month 0: the solar term 清明).
var lunarHolidays = []struct {
	name       string
	month, day int
}{{"春节", 1, 1}, {"元宵", 1, 15}, {"清明", 0, 0}, {"端午", 5, 5}, {"七夕", 7, 7}, {"中秋", 8, 15}, {"重阳", 9, 9}}

// theLunar holds lunar.txt: per year from lunarFirst, the month and day
// of each column.
var theLunar = sync.OnceValue(func() [][][2]int {
	var years [][][2]int
	for line := range strings.Lines(lunarText) {
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 1+len(lunarHolidays) || atoi(f[0]) != lunarFirst+len(years) {
			panic(fmt.Sprintf("lazymem: engine: lunar.txt: bad line %q", line))
		}
		days := make([][2]int, len(lunarHolidays))
		for i, md := range f[1:] {
			mo, d, _ := strings.Cut(md, "-")
			days[i] = [2]int{atoi(mo), atoi(d)}
		}
		years = append(years, days)
	}
	return years
})

// lunarDay is the date of column col in year y; false outside the table.
func lunarDay(col, y int, loc *time.Location) (time.Time, bool) {
	t := theLunar()
	if y < lunarFirst || y-lunarFirst >= len(t) {
		return time.Time{}, false
	}
	md := t[y-lunarFirst][col]
	return time.Date(y, time.Month(md[0]), md[1], 0, 0, 0, 0, loc), true
}

// lunarKinds maps a lunar holiday's words to its column (lunarHolidays)
// and its window: the first day's offset from that date and the days.
var lunarKinds = map[string]struct{ col, from, days int }{
	"春节": {0, -1, 7}, "过年": {0, -1, 7}, "农历新年": {0, -1, 7}, "chinese new year": {0, -1, 7}, "lunar new year": {0, -1, 7}, "spring festival": {0, -1, 7},
	"除夕": {0, -1, 1}, "大年三十": {0, -1, 1},
	"元宵节": {1, 0, 1}, "元宵": {1, 0, 1}, "lantern festival": {1, 0, 1},
	"清明节": {2, 0, 1}, "清明": {2, 0, 1}, "qingming": {2, 0, 1}, "qingming festival": {2, 0, 1}, "tomb-sweeping day": {2, 0, 1}, "tomb sweeping day": {2, 0, 1}, "tomb-sweeping": {2, 0, 1}, "tomb sweeping": {2, 0, 1},
	"端午节": {3, 0, 1}, "端午": {3, 0, 1}, "dragon boat festival": {3, 0, 1}, "dragon boat": {3, 0, 1},
	"七夕节": {4, 0, 1}, "七夕": {4, 0, 1},
	"中秋节": {5, 0, 1}, "中秋": {5, 0, 1}, "mid-autumn festival": {5, 0, 1}, "mid-autumn": {5, 0, 1}, "midautumn festival": {5, 0, 1}, "midautumn": {5, 0, 1}, "moon festival": {5, 0, 1},
	"重阳节": {6, 0, 1}, "重阳": {6, 0, 1},
}

// holidayDaysOff, after 清明, 端午 or 中秋, names the days off around it.
var holidayDaysOff = mustGate(`^(?:放假|假期|小长假|长假|那几天|期间)`)

// easter resolves Easter (Sunday), Easter Monday, Good Friday and the
// Easter weekend (Good Friday to Easter Monday) as dateWindow resolves a
// date without a year.
func easter(w string, now time.Time) (time.Time, time.Time, bool) {
	from, days := 0, 1
	switch {
	case strings.HasSuffix(w, "weekend"):
		from, days = -2, 4
	case strings.HasSuffix(w, "monday"):
		from = 1
	case strings.HasPrefix(w, "good"):
		from = -2
	}
	start := func(y int) time.Time { return easterSunday(y, now.Location()).AddDate(0, 0, from) }
	s := start(now.Year())
	if s.After(now) {
		if s.Sub(now) < soon {
			return time.Time{}, time.Time{}, false
		}
		s = start(now.Year() - 1)
	}
	return s, minTime(s.AddDate(0, 0, days), now.Add(time.Nanosecond)), true
}

// easterSunday is Easter Sunday of year y in the Gregorian calendar (the
// anonymous Gregorian computus).
func easterSunday(y int, loc *time.Location) time.Time {
	a, b, c := y%19, y/100, y%100
	d, e := b/4, b%4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i, k := c/4, c%4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	month := (h + l - 7*m + 114) / 31
	day := (h+l-7*m+114)%31 + 1
	return time.Date(y, time.Month(month), day, 0, 0, 0, 0, loc)
}

// lunarWindow resolves a holiday of the Chinese calendar as dateWindow
// resolves a date without a year.
func lunarWindow(col, from, days int, now time.Time) (time.Time, time.Time, bool) {
	start := func(y int) (time.Time, bool) {
		d, ok := lunarDay(col, y, now.Location())
		return d.AddDate(0, 0, from), ok
	}
	s, ok := start(now.Year())
	if ok && s.After(now) {
		if s.Sub(now) < soon {
			return time.Time{}, time.Time{}, false
		}
		ok = false
	}
	if !ok || s.After(now) {
		if s, ok = start(now.Year() - 1); !ok || s.After(now) {
			return time.Time{}, time.Time{}, false
		}
	}
	return s, minTime(s.AddDate(0, 0, days), now.Add(time.Nanosecond)), true
}

// holidayDays maps a holiday (its group's first word, lower case) to its
// month, day and number of days.
var holidayDays = map[string]struct {
	mo   time.Month
	d, n int
}{
	"new year's eve": {12, 31, 1}, "new year's": {1, 1, 1}, "new year's day": {1, 1, 1},
	"christmas eve": {12, 24, 1}, "christmas": {12, 25, 1}, "christmas day": {12, 25, 1}, "xmas": {12, 25, 1},
	"boxing day": {12, 26, 1}, "halloween": {10, 31, 1}, "valentine's": {2, 14, 1}, "valentine's day": {2, 14, 1},
	"平安夜": {12, 24, 1}, "圣诞节": {12, 25, 1}, "圣诞": {12, 25, 1}, "元旦": {1, 1, 1}, "情人节": {2, 14, 1},
	"万圣节": {10, 31, 1}, "劳动节": {5, 1, 5}, "五一假期": {5, 1, 5}, "五一长假": {5, 1, 5}, "五一": {5, 1, 5},
	"国庆节": {10, 1, 7}, "国庆假期": {10, 1, 7}, "国庆长假": {10, 1, 7}, "国庆": {10, 1, 7},
	"双十一": {11, 11, 1}, "双11": {11, 11, 1}, "双十二": {12, 12, 1}, "双12": {12, 12, 1},
	"singles' day": {11, 11, 1}, "singles day": {11, 11, 1},
	"may day": {5, 1, 5}, "may day holiday": {5, 1, 5}, "national day": {10, 1, 7}, "national day holiday": {10, 1, 7},
	"五四青年节": {5, 4, 1}, "青年节": {5, 4, 1}, "三八妇女节": {3, 8, 1}, "妇女节": {3, 8, 1}, "三八节": {3, 8, 1},
	"六一儿童节": {6, 1, 1}, "儿童节": {6, 1, 1}, "六一": {6, 1, 1}, "教师节": {9, 10, 1}, "植树节": {3, 12, 1},
	"愚人节": {4, 1, 1}, "建军节": {8, 1, 1},
	"women's day": {3, 8, 1}, "womens day": {3, 8, 1}, "international women's day": {3, 8, 1}, "international womens day": {3, 8, 1},
	"children's day": {6, 1, 1}, "childrens day": {6, 1, 1}, "teachers' day": {9, 10, 1}, "teacher's day": {9, 10, 1},
	"teachers day": {9, 10, 1}, "teacher day": {9, 10, 1},
	"april fools' day": {4, 1, 1}, "april fool's day": {4, 1, 1}, "april fools day": {4, 1, 1}, "april fool": {4, 1, 1},
	"april fools'": {4, 1, 1}, "april fools": {4, 1, 1}, "april fool's": {4, 1, 1},
}

// sundayHolidays are the holidays on the nth Sunday of a month: Mother's
// Day (the second Sunday of May) and Father's Day (the third of June), as
// in China, the US and many other places.
var sundayHolidays = map[string]struct {
	mo time.Month
	n  int
}{
	"mother's day": {time.May, 2}, "mothers day": {time.May, 2}, "母亲节": {time.May, 2},
	"father's day": {time.June, 3}, "fathers day": {time.June, 3}, "父亲节": {time.June, 3},
}

// A holiday is a time only where the question uses it as one: after a
// preposition or a range word ("on Christmas Eve", "over Chinese New
// Year", "between December 20 and New Year's", "since Christmas"), or in
// Chinese with a word of time after it or a range word before it ("国庆期
// 间", "元旦那天", "春节前后", "12月20号到元旦"). Otherwise it names a topic
// ("the Christmas party", "中秋节的安排", "春节回家的交通"), not when the
// answer was said.
var (
	holidayBeforeEN = map[string]bool{"on": true, "over": true, "during": true, "at": true, "around": true, "since": true,
		"after": true, "before": true, "until": true, "till": true, "through": true, "between": true, "from": true,
		"and": true, "to": true, "last": true, "this": true, "past": true}
	holidayPartEN   = map[string]bool{"day": true, "morning": true, "evening": true, "night": true}
	holidayAfterZH  = mustGate(`^(?:期间|放假|小长假|节假日|那天|那几天|那周|那一周|那阵子|那阵|那会儿|的时候|时候|前后|假期|长假|之前|以前|前|之后|以后|后|左右|当天|以来|晚上|上午|下午|早上|中午|那晚)`)
	holidayBeforeZH = mustGate(`(?:从|在|到|至|自从|自|和|与|去年|今年|上个|上一个)$`)
)

// holidayAsTime reports whether the holiday matched in m is used as a
// time.
func holidayAsTime(m timeMatch) bool {
	if r, _ := utf8.DecodeRuneInString(m.g[0]); r >= utf8.RuneSelf {
		return holidayAfterZH.MatchString(strings.TrimSpace(m.after)) || holidayBeforeZH.MatchString(strings.TrimSpace(m.before))
	}
	ws := strings.Fields(strings.ToLower(m.before))
	if n := len(ws); n > 0 && ws[n-1] == "the" {
		ws = ws[:n-1]
	}
	// "on the day of", "on the evening of": the holiday's own day.
	if n := len(ws); n >= 3 && ws[n-1] == "of" && holidayPartEN[ws[n-2]] && ws[n-3] == "the" {
		ws = ws[:n-3]
	}
	return len(ws) > 0 && holidayBeforeEN[ws[len(ws)-1]]
}

// holiday resolves a match of holidayEN or holidayZH.
func holiday(m timeMatch) (time.Time, time.Time, bool) {
	if !holidayAsTime(m) {
		return time.Time{}, time.Time{}, false
	}
	w := strings.ToLower(m.g[0])
	w = strings.Join(strings.Fields(strings.ReplaceAll(w, "’", "'")), " ")
	if strings.HasPrefix(w, "thanksgiving") {
		return nthWeekday(time.November, time.Thursday, 4, m.now)
	}
	if h, ok := sundayHolidays[w]; ok {
		return nthWeekday(h.mo, time.Sunday, h.n, m.now)
	}
	if strings.HasPrefix(w, "easter") || strings.HasPrefix(w, "good") {
		return easter(w, m.now)
	}
	if k, ok := lunarKinds[w]; ok {
		if (k.col == 2 || k.col == 3 || k.col == 5) && holidayDaysOff.MatchString(strings.TrimSpace(m.after)) {
			// 清明, 端午, 中秋 as days off ("清明放假那几天"): the
			// holiday around the day, which moves with the weekend.
			k.from, k.days = -2, 5
		}
		return lunarWindow(k.col, k.from, k.days, m.now)
	}
	h, ok := holidayDays[w]
	if !ok {
		h, ok = holidayDays[strings.ReplaceAll(w, "new years", "new year's")]
	}
	if !ok {
		return time.Time{}, time.Time{}, false
	}
	since, until, ok := dateWindow(0, h.mo, h.d, m.now)
	if !ok {
		return time.Time{}, time.Time{}, false
	}
	return since, minTime(until.AddDate(0, 0, h.n-1), m.now.Add(time.Nanosecond)), true
}

// nthWeekday is the latest nth weekday wd of month mo (the US
// Thanksgiving: the fourth Thursday of November) not in the future, as
// dateWindow resolves a date.
func nthWeekday(mo time.Month, wd time.Weekday, n int, now time.Time) (time.Time, time.Time, bool) {
	day := func(y int) time.Time {
		d := time.Date(y, mo, 1, 0, 0, 0, 0, now.Location())
		for d.Weekday() != wd {
			d = d.AddDate(0, 0, 1)
		}
		return d.AddDate(0, 0, 7*(n-1))
	}
	s := day(now.Year())
	if s.After(now) {
		if s.Sub(now) < soon {
			return time.Time{}, time.Time{}, false
		}
		s = day(now.Year() - 1)
	}
	return s, s.AddDate(0, 0, 1), true
}
