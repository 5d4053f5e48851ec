package engine

import (
	"regexp"
	"strings"
	"time"
)

// Holidays name a day, or a few, like a date: "since Christmas", "between
// December 20 and New Year's", "国庆期间", "元旦那天". Each resolves as a
// date without a year does (dateWindow): its latest occurrence not in
// the future, none when that is within half a year ahead (the question is
// then about a plan, not a window). Holidays of the lunar calendar (春节,
// 中秋, 端午, 除夕) and those whose date is set each year by decree are not
// parsed; Thanksgiving is the US one (the fourth Thursday of November).
var (
	holidayEN = regexp.MustCompile(`(?i)\b(?:(new\s+year(?:'|’)?s\s+eve)|(new\s+year(?:'|’)?s(?:\s+day)?)|(christmas\s+eve)|(christmas(?:\s+day)?|xmas)|(boxing\s+day)|(halloween)|(valentine(?:'|’)?s(?:\s+day)?)|(thanksgiving(?:\s+day)?))\b`)
	holidayZH = regexp.MustCompile(`(平安夜)|(圣诞节|圣诞)|(元旦)|(情人节)|(万圣节)|(劳动节|五一假期|五一长假)|(国庆节|国庆假期|国庆长假|国庆)`)
)

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
	"万圣节": {10, 31, 1}, "劳动节": {5, 1, 5}, "五一假期": {5, 1, 5}, "五一长假": {5, 1, 5},
	"国庆节": {10, 1, 7}, "国庆假期": {10, 1, 7}, "国庆长假": {10, 1, 7}, "国庆": {10, 1, 7},
}

// holiday resolves a match of holidayEN or holidayZH.
func holiday(m timeMatch) (time.Time, time.Time, bool) {
	w := strings.ToLower(m.g[0])
	w = strings.Join(strings.Fields(strings.ReplaceAll(w, "’", "'")), " ")
	if strings.HasPrefix(w, "thanksgiving") {
		return thanksgiving(m.now)
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

// thanksgiving is the latest US Thanksgiving not in the future, as
// dateWindow resolves a date.
func thanksgiving(now time.Time) (time.Time, time.Time, bool) {
	day := func(y int) time.Time {
		d := time.Date(y, time.November, 1, 0, 0, 0, 0, now.Location())
		for d.Weekday() != time.Thursday {
			d = d.AddDate(0, 0, 1)
		}
		return d.AddDate(0, 0, 21)
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
