package engine

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// gatedPatterns are the parser's gated patterns with their gates.
func gatedPatterns() []gatedRe {
	out := append([]gatedRe(nil), everyGated...)
	for i, r := range timeRules {
		out = append(out, gatedRe{r.re, timeGates[i]})
	}
	return out
}

// gateTexts are the texts of every scenario set (records and questions),
// each also in upper case and with its s and k written as the long s and
// the Kelvin sign, which case-insensitive patterns match as s and k.
func gateTexts(t *testing.T) []string {
	files, err := filepath.Glob("testdata/scenarios*/*.jsonl")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files: %v", err)
	}
	var out []string
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var v struct{ Text string }
			if json.Unmarshal(sc.Bytes(), &v) == nil && v.Text != "" {
				out = append(out, v.Text, strings.ToUpper(v.Text),
					strings.NewReplacer("s", "ſ", "k", "\u212a").Replace(v.Text))
			}
		}
		fh.Close()
	}
	return out
}

// TestGateNeverRefusesAMatch: on every scenario text, no gate refuses a
// text its pattern matches, and the gates refuse most texts (the point of
// them).
func TestGateNeverRefusesAMatch(t *testing.T) {
	texts := gateTexts(t)
	refused, tried := 0, 0
	for _, p := range gatedPatterns() {
		for _, text := range texts {
			admits := p.need.admits(&gateText{text: text})
			tried++
			if !admits {
				refused++
			}
			if !admits && p.MatchString(text) {
				t.Errorf("gate %q/%q refuses %q, which %s matches", p.need.exact, p.need.folded, text, p)
			}
		}
	}
	if refused < tried/2 {
		t.Errorf("the gates refused %d of %d pattern-text pairs; want most", refused, tried)
	}
}

func TestGateOf(t *testing.T) {
	for _, c := range []struct {
		expr          string
		exact, folded string // joined by |
		always        bool
	}{
		{expr: `(?i)\byesterday\b`, folded: "yesterday"},
		{expr: `昨天|昨日`, exact: "昨天|昨日"},
		{expr: `(?i)\b(sat(?:urday)?|sun(?:day)?)\b`, folded: "sat|saturday|sun|sunday"},
		{expr: `上个?月`, exact: "上月|上个月"},
		{expr: `\d+`, exact: "0|1|2|3|4|5|6|7|8|9"},
		{expr: `(?i)a?b*`, always: true},
		{expr: `[^x]`, always: true},
		{expr: `(?i)straße`, always: true},
	} {
		g := gateOf(c.expr)
		if g.always != c.always {
			t.Errorf("%s: always %v, want %v", c.expr, g.always, c.always)
			continue
		}
		if c.always {
			continue
		}
		if got, want := joinSorted(g.exact), joinSorted(strings.Split(c.exact, "|")); got != want {
			t.Errorf("%s: exact %q, want %q", c.expr, got, want)
		}
		if got, want := joinSorted(g.folded), joinSorted(strings.Split(c.folded, "|")); got != want {
			t.Errorf("%s: folded %q, want %q", c.expr, got, want)
		}
	}
}

func joinSorted(s []string) string {
	out := append([]string(nil), s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return strings.Join(out, "|")
}

// FuzzGate: for any pattern and text, a gate never refuses a text its
// pattern matches.
func FuzzGate(f *testing.F) {
	f.Add(`(?i)\b(sat(?:urday)?|sun(?:day)?)\b`, "on SATURDAY")
	f.Add(`(?i)\bthis\s+(week|month)\b`, "THIS ſeek")
	f.Add(`(?:本|这个?)(?:周|星期|礼拜)`, "这个礼拜")
	f.Add(`(?i)k[a-c]+x?`, "\u212aab")
	f.Add(`(a|b)(c|d)(e|f)`, "bdf")
	f.Fuzz(func(t *testing.T, expr, text string) {
		re, err := regexp.Compile(expr)
		if err != nil {
			return
		}
		g := gateOf(expr)
		if re.MatchString(text) && !g.admits(&gateText{text: text}) {
			t.Fatalf("gate %q/%q of %q refuses %q, which it matches", g.exact, g.folded, expr, text)
		}
	})
}

// TestGateAnyMatchesWhole: the slot detectors cut into alternatives match
// exactly the texts their whole patterns match.
func TestGateAnyMatchesWhole(t *testing.T) {
	texts := gateTexts(t)
	for _, d := range []detector{timeValue, placeValue, ownerVerb, ownerValue, moneyValue, amountValue} {
		for _, p := range []struct {
			whole gatedRe
			any   gatedAny
		}{{d.en, d.enAny}, {d.zh, d.zhAny}} {
			for _, text := range texts {
				if w, a := p.whole.Regexp.MatchString(text), p.any.MatchString(text); w != a {
					t.Errorf("%s: whole %v, by alternative %v on %q", p.whole, w, a, text)
				}
			}
		}
	}
}

// FuzzGateAny: a pattern cut into alternatives matches what it matches.
func FuzzGateAny(f *testing.F) {
	f.Add(`\b(?:in|at)\s+([A-Z]\w+)|(?i:\broom\s+\d+)`, "in Room 3")
	f.Add(`(?i)a|b|c`, "B")
	f.Add(`x(a|b)|y`, "xb")
	f.Fuzz(func(t *testing.T, expr, text string) {
		re, err := regexp.Compile(expr)
		if err != nil {
			return
		}
		a, err := gateAnyOf(expr)
		if err != nil {
			t.Fatalf("%q compiles whole but not by alternative: %v", expr, err)
		}
		if w, got := re.MatchString(text), a.MatchString(text); w != got {
			t.Fatalf("%q on %q: whole %v, by alternative %v", expr, text, w, got)
		}
	})
}
