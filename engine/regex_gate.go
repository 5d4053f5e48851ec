package engine

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
)

// The time parser tries some seventy patterns on every question, and most
// questions name no time: Go's regexp has no literal prefilter for a
// pattern that starts with \b or (?i), so each pattern scanned the whole
// question (90 µs of a recall's CPU for an English question without a
// time). A gate is a necessary condition derived from a pattern's syntax:
// a set of strings one of which every match contains. A pattern runs only
// when the text holds one of them; the condition is exact (a gate never
// refuses a text the pattern matches: TestGateNeverRefusesAMatch,
// FuzzGate), only cheaper to test.

// maxGateStrings bounds a gate's set; a pattern whose smallest sufficient
// set is larger is always run.
const maxGateStrings = 48

// reGate is the strings one of which every match of a pattern contains:
// exact ones in the text as written, folded ones (lower case, from a
// case-insensitive pattern) in the text as lowerFold returns it. A gate
// with always set has no condition.
type reGate struct {
	exact, folded []string
	always        bool
}

// gatedRe is a pattern with its gate.
type gatedRe struct {
	*regexp.Regexp
	need reGate
}

// mustGate compiles expr and derives its gate.
func mustGate(expr string) gatedRe {
	g := gatedRe{regexp.MustCompile(expr), gateOf(expr)}
	everyGated = append(everyGated, g)
	return g
}

// everyGated is every pattern mustGate compiled, for the tests that hold
// the gates exact.
var everyGated []gatedRe

// admits reports whether the pattern may match t.
func (g reGate) admits(t *gateText) bool {
	if g.always {
		return true
	}
	for _, s := range g.exact {
		if strings.Contains(t.text, s) {
			return true
		}
	}
	if len(g.folded) > 0 {
		lower := t.lowered()
		for _, s := range g.folded {
			if strings.Contains(lower, s) {
				return true
			}
		}
	}
	return false
}

// gateText is a text with its folded form, made once when a gate asks.
type gateText struct {
	text, lower string
	done        bool
}

func (t *gateText) lowered() string {
	if !t.done {
		t.lower, t.done = lowerFold(t.text), true
	}
	return t.lower
}

// lowerFold is text in lower case with the two non-ASCII letters whose
// case folding reaches an ASCII letter mapped to it: the Kelvin sign (which
// strings.ToLower already maps to k) and the long s.
func lowerFold(text string) string {
	return strings.ReplaceAll(strings.ToLower(text), "ſ", "s")
}

// gateOf derives the gate of expr; a pattern it cannot reason about gets
// one with always set.
func gateOf(expr string) reGate {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return reGate{always: true}
	}
	set, ok := needed(re.Simplify())
	if !ok {
		return reGate{always: true}
	}
	var g reGate
	for _, s := range set {
		if s.folded {
			g.folded = append(g.folded, s.s)
		} else {
			g.exact = append(g.exact, s.s)
		}
	}
	return g
}

// gateString is one string of a gate's set.
type gateString struct {
	s      string
	folded bool
}

// needed returns a set of strings one of which every match of re
// contains, or false when it finds none.
func needed(re *syntax.Regexp) ([]gateString, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		s := string(re.Rune)
		if fold {
			for _, r := range re.Rune {
				if r >= 0x80 && unicode.SimpleFold(r) != r {
					return nil, false // a cased non-ASCII letter: lower case is not folding
				}
			}
			s = strings.ToLower(s)
		}
		return []gateString{{s, fold}}, true
	case syntax.OpCharClass:
		var set []gateString
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				if len(set) == maxGateStrings {
					return nil, false
				}
				set = append(set, gateString{s: string(r)})
			}
		}
		return set, len(set) > 0
	case syntax.OpCapture, syntax.OpPlus:
		return needed(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return needed(re.Sub[0])
		}
		return nil, false
	case syntax.OpConcat:
		var best []gateString
		found := false
		consider := func(set []gateString) {
			if !found || betterGate(set, best) {
				best, found = set, true
			}
		}
		// A run of children with finite sets of matches needs one of
		// their concatenations; any other child its own set.
		var run []gateString
		inRun := false
		for _, sub := range re.Sub {
			if set, ok := matches(sub); ok {
				if !inRun {
					run, inRun = set, true
				} else if run, ok = product(run, set); !ok {
					run, inRun = set, true // too many: start again here
				}
				if shortest(run) > 0 {
					consider(run)
				}
				continue
			}
			inRun = false
			if set, ok := needed(sub); ok {
				consider(set)
			}
		}
		return best, found
	case syntax.OpAlternate:
		var set []gateString
		for _, sub := range re.Sub {
			s, ok := needed(sub)
			if !ok || len(set)+len(s) > maxGateStrings {
				return nil, false
			}
			set = append(set, s...)
		}
		return set, true
	}
	return nil, false
}

// betterGate reports whether set a is the more selective: its shortest
// string is longer, or as long and it has fewer strings.
func betterGate(a, b []gateString) bool {
	ma, mb := shortest(a), shortest(b)
	if ma != mb {
		return ma > mb
	}
	return len(a) < len(b)
}

func shortest(set []gateString) int {
	n := -1
	for _, s := range set {
		if n < 0 || len(s.s) < n {
			n = len(s.s)
		}
	}
	return n
}

// matches returns every string re matches when they are few (a literal, a
// small class, alternations, concatenations and optional parts of them),
// or false.
func matches(re *syntax.Regexp) ([]gateString, bool) {
	switch re.Op {
	case syntax.OpLiteral, syntax.OpCharClass:
		return needed(re)
	case syntax.OpCapture:
		return matches(re.Sub[0])
	case syntax.OpEmptyMatch:
		return []gateString{{}}, true
	case syntax.OpQuest:
		set, ok := matches(re.Sub[0])
		if !ok || len(set) == maxGateStrings {
			return nil, false
		}
		return append(set, gateString{}), true
	case syntax.OpAlternate:
		var set []gateString
		for _, sub := range re.Sub {
			s, ok := matches(sub)
			if !ok || len(set)+len(s) > maxGateStrings {
				return nil, false
			}
			set = append(set, s...)
		}
		return set, true
	case syntax.OpConcat:
		set := []gateString{{}}
		for _, sub := range re.Sub {
			s, ok := matches(sub)
			if !ok {
				return nil, false
			}
			if set, ok = product(set, s); !ok {
				return nil, false
			}
		}
		return set, true
	}
	return nil, false
}

// product is every string of a followed by one of b, or false when there
// are too many or a folded string meets an exact one with letters the
// folding would change.
func product(a, b []gateString) ([]gateString, bool) {
	if len(a)*len(b) > maxGateStrings {
		return nil, false
	}
	out := make([]gateString, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			if x.folded != y.folded && x.s != "" && y.s != "" {
				exact := x.s
				if x.folded {
					exact = y.s
				}
				if lowerFold(exact) != exact {
					return nil, false
				}
			}
			out = append(out, gateString{s: x.s + y.s, folded: (x.folded && x.s != "") || (y.folded && y.s != "")})
		}
	}
	return out, true
}

// The methods below are the regexp methods the engine calls, each behind
// the gate: a text the gate refuses has no match.

func (g gatedRe) MatchString(s string) bool {
	return g.need.admits(&gateText{text: s}) && g.Regexp.MatchString(s)
}

func (g gatedRe) FindString(s string) string {
	if !g.need.admits(&gateText{text: s}) {
		return ""
	}
	return g.Regexp.FindString(s)
}

func (g gatedRe) FindStringIndex(s string) []int {
	if !g.need.admits(&gateText{text: s}) {
		return nil
	}
	return g.Regexp.FindStringIndex(s)
}

func (g gatedRe) FindStringSubmatch(s string) []string {
	if !g.need.admits(&gateText{text: s}) {
		return nil
	}
	return g.Regexp.FindStringSubmatch(s)
}

func (g gatedRe) FindStringSubmatchIndex(s string) []int {
	if !g.need.admits(&gateText{text: s}) {
		return nil
	}
	return g.Regexp.FindStringSubmatchIndex(s)
}

func (g gatedRe) FindAllString(s string, n int) []string {
	if !g.need.admits(&gateText{text: s}) {
		return nil
	}
	return g.Regexp.FindAllString(s, n)
}

func (g gatedRe) FindAllStringIndex(s string, n int) [][]int {
	if !g.need.admits(&gateText{text: s}) {
		return nil
	}
	return g.Regexp.FindAllStringIndex(s, n)
}

func (g gatedRe) FindAllStringSubmatch(s string, n int) [][]string {
	if !g.need.admits(&gateText{text: s}) {
		return nil
	}
	return g.Regexp.FindAllStringSubmatch(s, n)
}

func (g gatedRe) FindAllStringSubmatchIndex(s string, n int) [][]int {
	if !g.need.admits(&gateText{text: s}) {
		return nil
	}
	return g.Regexp.FindAllStringSubmatchIndex(s, n)
}

func (g gatedRe) ReplaceAllString(src, repl string) string {
	if !g.need.admits(&gateText{text: src}) {
		return src
	}
	return g.Regexp.ReplaceAllString(src, repl)
}

func (g gatedRe) ReplaceAllLiteralString(src, repl string) string {
	if !g.need.admits(&gateText{text: src}) {
		return src
	}
	return g.Regexp.ReplaceAllLiteralString(src, repl)
}

// gatedAny is a pattern cut into its top-level alternatives, each a
// gatedRe: MatchString holds exactly when the whole pattern's would, and
// runs only the alternatives whose gate the text passes. A pattern whose
// alternatives have gates of their own ("in <Name>" or "room 3" or "the
// Grand Hotel") gets a whole-pattern gate that admits nearly every text;
// most alternatives refuse it alone (BenchmarkSlots).
type gatedAny []gatedRe

// mustGateAny compiles expr as its top-level alternatives.
func mustGateAny(expr string) gatedAny {
	a, err := gateAnyOf(expr)
	if err != nil {
		panic(err)
	}
	for _, g := range a {
		everyGated = append(everyGated, g)
	}
	return a
}

// gateAnyOf compiles expr as its top-level alternatives.
func gateAnyOf(expr string) (gatedAny, error) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, err
	}
	subs := []*syntax.Regexp{re}
	if re.Op == syntax.OpAlternate {
		subs = re.Sub
	}
	out := make(gatedAny, len(subs))
	for i, sub := range subs {
		x := sub.String()
		c, err := regexp.Compile(x)
		if err != nil {
			return nil, err
		}
		out[i] = gatedRe{c, gateOf(x)}
	}
	return out, nil
}

// MatchString reports whether one of the alternatives matches s.
func (a gatedAny) MatchString(s string) bool {
	t := &gateText{text: s}
	for _, g := range a {
		if g.need.admits(t) && g.Regexp.MatchString(s) {
			return true
		}
	}
	return false
}
