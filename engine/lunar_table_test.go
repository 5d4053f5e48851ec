package engine

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	lunar "github.com/6tail/lunar-go/calendar"
)

// TestLunarTable holds lunar.txt equal to what lunarTableText derives
// from github.com/6tail/lunar-go. After a deliberate change of the
// derivation or of that module's version,
//
//	go test ./engine -run TestLunarTable -rewrite
//
// writes the file anew.
func TestLunarTable(t *testing.T) {
	want := lunarTableText()
	if f := flag.Lookup("rewrite"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile("lunar.txt", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("lunar.txt")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("lunar.txt is not what lunar-go gives (%d against %d bytes): run with -rewrite and review the difference", len(got), len(want))
	}
}

// lunarTableText derives lunar.txt: for each year lunarFirst..lunarLast,
// the Gregorian dates of the holidays of lunarHolidays' order.
func lunarTableText() string {
	var b strings.Builder
	b.WriteString(lunarHeader)
	for y := lunarFirst; y <= lunarLast; y++ {
		fmt.Fprintf(&b, "%d", y)
		for _, h := range lunarHolidays {
			var s *lunar.Solar
			if h.month == 0 {
				s = lunar.NewLunarFromYmd(y, 1, 1).GetJieQiTable()["清明"]
			} else {
				s = lunar.NewLunarFromYmd(y, h.month, h.day).GetSolar()
			}
			if s.GetYear() != y {
				panic(fmt.Sprintf("%s of %d falls in %d", h.name, y, s.GetYear()))
			}
			fmt.Fprintf(&b, " %02d-%02d", s.GetMonth(), s.GetDay())
		}
		b.WriteByte('\n')
	}
	return b.String()
}

const lunarHeader = `# The Gregorian dates of the holidays of the Chinese calendar, one year a
# line: the year, then month-day of 春节 (the first day of the first month),
# 元宵 (1/15), 清明 (the solar term), 端午 (5/5), 七夕 (7/7), 中秋 (8/15) and
# 重阳 (9/9). Derived from github.com/6tail/lunar-go v1.4.7 (MIT License,
# Copyright (c) 2020 6tail); regenerate with:
# go test ./engine -run TestLunarTable -rewrite
`
