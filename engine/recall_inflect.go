package engine

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/lazymem/lazymem/index/analysis/porter2"
)

// inflectionSiblings gives, for each English word of text ending in
// -ance or -ence, the inflected form Porter2 stems apart from it. Porter2
// removes the ending from the base and the plural ("experience",
// "experiences" -> "experi"; "rebalances" -> "rebal") but not from the
// -ed and -ing forms, whose final "e" its step 1b has dropped before the
// ending could match ("experienced", "experiencing" -> "experienc";
// "rebalancing" -> "rebalanc"): a question saying one form missed every
// record saying the other ("what fixed the consumer rebalancing?" against
// "the rebalances stopped"). Its step 1b restores the "e" after "at",
// "bl" and "iz" (so -ate, -able, -ible and -ize words keep together);
// -ance and -ence are the endings of its step 4 that end in "e" and that
// it does not restore. The sibling is returned as a surface word (the
// -ed form of a base, the base of an -ed or -ing form), searched beside
// the question at its own words' weight.
//
// A word spelled the British or the American way has the other spelling
// as a sibling (spellingSibling): "organise" and "organize" stem apart.
//
// An irregular verb's base form after "did" or "does" (do-support puts a
// question's verb in its base form, while the history narrates it in the
// past) is returned apart, in irregular, with the verb's other forms
// (irregular.txt): "When did Caroline go to the support group?" also
// searches "went" and "gone", for "I went to a support group". A past form
// in the question ("what came out of the meeting") is left alone: the
// history says it the same way, and a phrasal verb's other forms ("come
// out") find noise.
func inflectionSiblings(text string) (out, irregular []string) {
	irr := theIrregular()
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return (r < 'a' || r > 'z') && r != '\'' && r != '’' })
	for i, w := range words {
		if strings.ContainsAny(w, "'’") && !doSupport[w] {
			continue // "won't", "Caroline's": not a form of a verb
		}
		if forms, ok := irr[w]; ok {
			if !noIrregular && forms[0] == w && afterDo(words[:i]) {
				for _, f := range forms[1:] {
					if !containsString(irregular, f) {
						irregular = append(irregular, f)
					}
				}
			}
			continue
		}
		if v, ok := spellingSibling(w); ok && !noSpelling && !containsString(out, v) {
			out = append(out, v)
		}
		var v string
		switch b := strings.TrimSuffix(w, "s"); {
		case strings.HasSuffix(b, "ance"), strings.HasSuffix(b, "ence"):
			v = b + "d"
		case strings.HasSuffix(w, "anced"), strings.HasSuffix(w, "enced"):
			v = w[:len(w)-1]
		case strings.HasSuffix(b, "ancing"), strings.HasSuffix(b, "encing"):
			v = b[:len(b)-3] + "e"
		default:
			continue
		}
		if porter2.Stem(v, false) != porter2.Stem(w, false) && !containsString(out, v) {
			out = append(out, v)
		}
	}
	return out, irregular
}

// noInflect turns every rule of inflectionSiblings off: false but in a test that
// shows they matter.
var noInflect bool

// noIrregular turns the irregular verbs' forms off: false but in a test
// that shows they matter.
var noIrregular bool

//go:embed irregular.txt
var irregularText string

// theIrregular maps each form of irregular.txt's verbs to all of the
// verb's forms, parsed once.
var theIrregular = sync.OnceValue(func() map[string][]string {
	m, err := parseIrregular(irregularText)
	if err != nil {
		panic(err) // the embedded table is checked by TestIrregularParses
	}
	return m
})

// parseIrregular reads irregular.txt: one verb a line, two or more
// lower-case forms; "#" starts a comment. A form in two verbs is an
// error: its siblings would be ambiguous.
func parseIrregular(text string) (map[string][]string, error) {
	m := map[string][]string{}
	for n, line := range strings.Split(text, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		forms := strings.Fields(line)
		if len(forms) == 0 {
			continue
		}
		if len(forms) < 2 {
			return nil, fmt.Errorf("lazymem: engine: irregular.txt line %d: %q has one form, want two or more", n+1, line)
		}
		for _, f := range forms {
			for _, r := range f {
				if r < 'a' || r > 'z' {
					return nil, fmt.Errorf("lazymem: engine: irregular.txt line %d: %q is not a lower-case word", n+1, f)
				}
			}
			if _, ok := m[f]; ok {
				return nil, fmt.Errorf("lazymem: engine: irregular.txt line %d: %q is a form of two verbs", n+1, f)
			}
			m[f] = forms
		}
	}
	return m, nil
}

// irregularReps is the weight of an irregular verb's other forms in the
// BM25 text, in repetitions: that of a same-script expansion, half the
// question's own words'. LoCoMo (883 questions, R@1/5/10/25, base
// without the forms): lazy hash .466/.719/.783/.844 -> .469/.719/.784/.845
// at 2, .469/.721/.782/.845 at 1, .468/.718/.783/.846 at 4; sparse
// .466/.718/.778/.840 -> .465/.720/.779/.842 at 2; the scenario sets
// unchanged at 1 and 2 (hit@5 -0.9 at 4); newer2-en lazy R@1 .455 -> .477.
const irregularReps = expandSame

// doSupport holds the auxiliaries that put the next verb in its base form.
var doSupport = map[string]bool{"did": true, "didn't": true, "didn’t": true, "does": true, "doesn't": true, "doesn’t": true, "do": true, "don't": true, "don’t": true}

// afterDo reports whether one of the last four words before a verb is an
// auxiliary of do-support ("did", "does": "when did Caroline go", "what
// did the new manager buy").
func afterDo(before []string) bool {
	for i := len(before) - 1; i >= 0 && i >= len(before)-4; i-- {
		if doSupport[before[i]] {
			return true
		}
	}
	return false
}

// noSpelling turns the spelling siblings off: false but in a test that
// shows they matter.
var noSpelling bool

// spellIse matches -ise/-ize and -yse/-yze with their inflections and
// -isation: at least three letters before, so "raised" and "seized" stay
// whole.
var spellIse = regexp.MustCompile(`^([a-z]{3,})([iy])([sz])(e|ed|es|ing|ation|ations|er|ers)$`)

// spellingSibling returns w in the other of the British and American
// spellings that Porter2 stems apart, when w has a form that has one:
// "organise" -> "organize", "analysed" -> "analyzed", and back. The other
// form may be no word ("exercize"): then no record holds it and searching
// it costs nothing. (Porter2 already keeps "travelled" with "traveled",
// "colour" and "color" are the lexicon's and the glossary's.)
func spellingSibling(w string) (string, bool) {
	if len(w) < 6 || !strings.Contains(w, "is") && !strings.Contains(w, "iz") && !strings.Contains(w, "ys") && !strings.Contains(w, "yz") {
		return "", false
	}
	if m := spellIse.FindStringSubmatch(w); m != nil {
		z := map[string]string{"s": "z", "z": "s"}[m[3]]
		return m[1] + m[2] + z + m[4], true
	}
	return "", false
}
