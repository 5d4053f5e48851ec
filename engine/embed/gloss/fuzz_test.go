package gloss

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzGloss: any text glosses without a panic, to valid UTF-8 when the
// input is, and a text without Han characters comes back unchanged;
// Segment's words put together give back the run.
func FuzzGloss(f *testing.F) {
	d, err := LoadDict("testdata")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"谁提到了预算问题？", "王说：hello", "资金:", "：", "plain", "\xff王", "預算上线了了了"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		g := d.Gloss(text, 2)
		if utf8.ValidString(text) && !utf8.ValidString(g) {
			t.Fatalf("Gloss(%q) = %q: invalid UTF-8", text, g)
		}
		if !hasHan(text) && g != text {
			t.Fatalf("Gloss(%q) = %q, want the text unchanged", text, g)
		}
		if !utf8.ValidString(text) {
			return
		}
		run := strings.Map(func(r rune) rune {
			if hasHan(string(r)) {
				return r
			}
			return -1
		}, text)
		if got := strings.Join(d.Segment(run), ""); got != run {
			t.Fatalf("Segment(%q) joined = %q", run, got)
		}
	})
}
