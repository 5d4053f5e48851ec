package engine

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mozillazg/go-pinyin"
)

// TestPinyinTable holds pinyin.txt equal to what pinyinTableText derives
// from github.com/mozillazg/go-pinyin's dictionary (itself derived from
// the pinyin-data project). After a deliberate change of the derivation
// or of that module's version,
//
//	go test ./engine -run TestPinyinTable -rewrite
//
// writes the file anew.
func TestPinyinTable(t *testing.T) {
	want := pinyinTableText()
	if f := flag.Lookup("rewrite"); f != nil && f.Value.String() == "true" {
		if err := os.WriteFile("pinyin.txt", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("pinyin.txt")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("pinyin.txt is not what go-pinyin's dictionary gives (%d against %d bytes): run with -rewrite and review the difference", len(got), len(want))
	}
	if pinyinTableText() != want {
		t.Fatal("the derivation is not deterministic")
	}
}

// pinyinTableText derives pinyin.txt: every character of the CJK Unified
// Ideographs block (U+4E00-U+9FFF) under each of its first three toneless
// readings, ü written v.
func pinyinTableText() string {
	bySyl := map[string][]rune{}
	for r := rune(pinyinFirst); r <= pinyinLast; r++ {
		v, ok := pinyin.PinyinDict[int(r)]
		if !ok {
			continue
		}
		var seen []string
		for _, s := range strings.Split(v, ",") {
			s = toneless(s)
			if s == "" || slices.Contains(seen, s) || len(seen) == maxPinyinReadings {
				continue
			}
			seen = append(seen, s)
			bySyl[s] = append(bySyl[s], r)
		}
	}
	syls := make([]string, 0, len(bySyl))
	for s := range bySyl {
		syls = append(syls, s)
	}
	slices.Sort(syls)
	var b strings.Builder
	b.WriteString(pinyinHeader)
	for _, s := range syls {
		fmt.Fprintf(&b, "%s\t%s\n", s, string(bySyl[s]))
	}
	return b.String()
}

const pinyinHeader = `# The toneless pinyin readings of the CJK Unified Ideographs (U+4E00-U+9FFF),
# used to match a Chinese speaker's name written in pinyin ("Zhou Hang" for
# 周航, "Dr. Fang" for 方婷). One line per syllable: the syllable (ü written v),
# a tab, every character with that reading among its first three.
# Derived from github.com/mozillazg/go-pinyin v0.21.0 (MIT License, Copyright
# (c) 2016 mozillazg), whose dictionary comes from the pinyin-data project
# (MIT License); regenerate with: go test ./engine -run TestPinyinTable -rewrite
`

// toneless is a toned pinyin syllable ("lǜ", "zhōu") without its tone
// marks, ü written v; "" for anything else.
func toneless(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z':
			b.WriteRune(r)
		case strings.ContainsRune("āáǎà", r):
			b.WriteByte('a')
		case strings.ContainsRune("ēéěèê", r), r == 'ế', r == 'ề':
			b.WriteByte('e')
		case strings.ContainsRune("īíǐì", r):
			b.WriteByte('i')
		case strings.ContainsRune("ōóǒò", r):
			b.WriteByte('o')
		case strings.ContainsRune("ūúǔù", r):
			b.WriteByte('u')
		case strings.ContainsRune("üǖǘǚǜ", r):
			b.WriteByte('v')
		case r == 'ń' || r == 'ň' || r == 'ǹ':
			b.WriteByte('n')
		case r == 'ḿ':
			b.WriteByte('m')
		default:
			return ""
		}
	}
	return b.String()
}
