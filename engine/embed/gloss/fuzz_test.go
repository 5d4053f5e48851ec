package gloss

import (
	"errors"
	"os"
	"path/filepath"
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

// FuzzParseDict: any bytes parse to a dictionary or to an error wrapping
// ErrCorrupt, never a panic; what parses glosses without one.
func FuzzParseDict(f *testing.F) {
	good, err := os.ReadFile(filepath.Join("testdata", DictFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	for _, s := range []string{`export default {"all":[]}`, `export default {"all":[["a","a","a",["x; see 乙[yi3]"],[],[]]]};`,
		`export default {"all":[["王","王","Wang2","surname Wang"],["说","说","shuo1",["to speak"]]]}`, `export default`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := ParseDict(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		_ = d.Gloss("王说：谁提到了预算问题？", 2)
	})
}
