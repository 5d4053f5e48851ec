package engine

import (
	"strings"

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
func inflectionSiblings(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r < 'a' || r > 'z' }) {
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
	return out
}

// noInflect turns the inflection siblings off: false but in a test that
// shows they matter.
var noInflect bool
