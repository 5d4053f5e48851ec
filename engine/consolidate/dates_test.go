package consolidate

import (
	"testing"
	"time"
)

func TestResolveDate(t *testing.T) {
	shanghai := time.FixedZone("CST", 8*3600)
	// Tuesday 2026-12-01, 10:00 in Shanghai.
	ref := time.Date(2026, 12, 1, 10, 0, 0, 0, shanghai)
	at := func(m time.Month, d, h, min int) time.Time { return time.Date(2026, m, d, h, min, 0, 0, shanghai) }
	for _, tc := range []struct {
		text  string
		want  time.Time
		clock bool
	}{
		{"我们下周一下午两点再碰一下", at(12, 7, 14, 0), true},
		{"tomorrow at 3pm works", at(12, 2, 15, 0), true},
		{"let's do it next Friday", at(12, 11, 0, 0), false},
		{"by Friday please", at(12, 4, 0, 0), false},
		{"月底前交", at(12, 31, 0, 0), false},
		{"周五前给报告", at(12, 4, 0, 0), false},
		{"周二", at(12, 1, 0, 0), false},
		{"明天上午十点半", at(12, 2, 10, 30), true},
		{"今晚十点前完成", at(12, 1, 22, 0), true},
		{"今晚", at(12, 1, 20, 0), true},
		{"后天", at(12, 3, 0, 0), false},
		{"下个月5号", time.Date(2027, 1, 5, 0, 0, 0, 0, shanghai), false},
		{"十二月十五号上线", at(12, 15, 0, 0), false},
		{"12月5日", at(12, 5, 0, 0), false},
		{"三月三号", time.Date(2027, 3, 3, 0, 0, 0, 0, shanghai), false},
		{"本月二十号完成", at(12, 20, 0, 0), false},
		{"下周", at(12, 7, 0, 0), false},
		{"下午三点开会", at(12, 1, 15, 0), true},
		{"end of the month", at(12, 31, 0, 0), false},
		{"end of week", at(12, 4, 0, 0), false},
		{"March 3rd", time.Date(2027, 3, 3, 0, 0, 0, 0, shanghai), false},
		{"Dec 15", at(12, 15, 0, 0), false},
		{"before the 12th", at(12, 12, 0, 0), false},
		{"at 14:30", at(12, 1, 14, 30), true},
		{"tonight", at(12, 1, 20, 0), true},
		{"next Monday at 9am", at(12, 7, 9, 0), true},
		{"下星期三", at(12, 9, 0, 0), false},
	} {
		d, ok := ResolveDate(tc.text, ref)
		if !ok || !d.Time.Equal(tc.want) || d.HasClock != tc.clock {
			t.Errorf("ResolveDate(%q) = %v %q clock=%v ok=%v, want %v clock=%v", tc.text, d.Time, d.Expr, d.HasClock, ok, tc.want, tc.clock)
		}
	}
	for _, text := range []string{"no date here", "我们三个人", "version 3", "好的"} {
		if d, ok := ResolveDate(text, ref); ok {
			t.Errorf("ResolveDate(%q) = %v %q, want none", text, d.Time, d.Expr)
		}
	}
}
