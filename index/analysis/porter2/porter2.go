package porter2

import "github.com/kljensen/snowball/english"

// maxFast is the longest word stemmed on bytes; longer ones (rare in
// text) go to the library.
const maxFast = 64

// Stem returns english.Stem(word, stemStopWords) of
// github.com/kljensen/snowball.
func Stem(word string, stemStopWords bool) string {
	if len(word) > maxFast || !lowerASCII(word) {
		return english.Stem(word, stemStopWords)
	}
	if len(word) <= 2 || (!stemStopWords && english.IsStopWord(word)) {
		return word
	}
	if s, ok := special[word]; ok {
		return s
	}
	var buf [maxFast]byte
	w := stemWord{b: buf[:copy(buf[:], word)]}
	w.preprocess()
	w.step1a()
	w.step1b()
	w.step1c()
	w.step2()
	w.step3()
	w.step4()
	w.step5()
	for i, c := range w.b {
		if c == 'Y' {
			w.b[i] = 'y'
		}
	}
	if string(w.b) == word { // no allocation: an unchanged word is returned as it came
		return word
	}
	return string(w.b)
}

// lowerASCII reports whether s holds only the letters a to z.
func lowerASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

// special holds the words the algorithm stems by a table of exceptions
// (the Porter2 definition's exceptional forms), as the library does.
var special = map[string]string{
	"skis": "ski", "skies": "sky", "dying": "die", "lying": "lie", "tying": "tie",
	"idly": "idl", "gently": "gentl", "ugly": "ugli", "early": "earli", "only": "onli",
	"singly": "singl", "sky": "sky", "news": "news", "howe": "howe", "atlas": "atlas",
	"cosmos": "cosmos", "bias": "bias", "andes": "andes",
	"inning": "inning", "innings": "inning", "outing": "outing", "outings": "outing",
	"canning": "canning", "cannings": "canning", "herring": "herring", "herrings": "herring",
	"earring": "earring", "earrings": "earring",
	"proceed": "proceed", "proceeds": "proceed", "proceeded": "proceed", "proceeding": "proceed",
	"exceed": "exceed", "exceeds": "exceed", "exceeded": "exceed", "exceeding": "exceed",
	"succeed": "succeed", "succeeds": "succeed", "succeeded": "succeed", "succeeding": "succeed",
}

// stemWord is a word being stemmed: its bytes (a to z, and Y for a y
// that is a consonant) and the starts of its regions R1 and R2.
type stemWord struct {
	b      []byte
	r1, r2 int
}

// isVowel is the library's isLowerVowel: y is a vowel, Y is not.
func isVowel(c byte) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u', 'y':
		return true
	}
	return false
}

// firstSuffix returns the first of list that ends the word ("": none), as
// the library's FirstSuffix: the list's order decides, not the length.
func (w *stemWord) firstSuffix(list []string) string {
	n := len(w.b)
	if n == 0 {
		return ""
	}
	last := w.b[n-1]
	for _, s := range list {
		// The last byte first: it rules out most of a list.
		if len(s) <= n && s[len(s)-1] == last && string(w.b[n-len(s):]) == s {
			return s
		}
	}
	return ""
}

// clamp keeps the regions within the word (the library's resetR1R2).
func (w *stemWord) clamp() {
	w.r1, w.r2 = min(w.r1, len(w.b)), min(w.r2, len(w.b))
}

// cut removes the last n bytes.
func (w *stemWord) cut(n int) {
	w.b = w.b[:len(w.b)-n]
	w.clamp()
}

// replace replaces the last n bytes with repl.
func (w *stemWord) replace(n int, repl string) {
	w.b = append(w.b[:len(w.b)-n], repl...)
	w.clamp()
}

// vnv is the library's romance.VnvSuffix: the position after the first
// non-vowel that follows a vowel at or after start, else the word's end.
func (w *stemWord) vnv(start int) int {
	for j := start + 1; j < len(w.b); j++ {
		if isVowel(w.b[j-1]) && !isVowel(w.b[j]) {
			return j + 1
		}
	}
	return len(w.b)
}

// preprocess marks consonant ys (a y first or after a vowel becomes Y)
// and finds R1 and R2. Apostrophes (step 0 too) cannot occur here.
func (w *stemWord) preprocess() {
	for i, c := range w.b {
		if c == 'y' && (i == 0 || isVowel(w.b[i-1])) {
			w.b[i] = 'Y'
		}
	}
	switch {
	case w.hasPrefix("gener"):
		w.r1 = 5
	case w.hasPrefix("commun"):
		w.r1 = 6
	case w.hasPrefix("arsen"):
		w.r1 = 5
	default:
		w.r1 = w.vnv(0)
	}
	w.r2 = w.vnv(w.r1)
}

func (w *stemWord) hasPrefix(p string) bool {
	return len(w.b) >= len(p) && string(w.b[:len(p)]) == p
}

// endsShortSyllable is the library's test on the word's first i bytes.
func (w *stemWord) endsShortSyllable(i int) bool {
	switch {
	case i == 2:
		return isVowel(w.b[0]) && !isVowel(w.b[1])
	case i >= 3:
		s1, s2, s3 := w.b[i-1], w.b[i-2], w.b[i-3]
		return !isVowel(s1) && s1 != 'w' && s1 != 'x' && s1 != 'Y' && isVowel(s2) && !isVowel(s3)
	}
	return false
}

func (w *stemWord) isShortWord() bool {
	return w.r1 >= len(w.b) && w.endsShortSyllable(len(w.b))
}

var step1aList = []string{"sses", "ied", "ies", "us", "ss", "s"}

func (w *stemWord) step1a() {
	switch s := w.firstSuffix(step1aList); s {
	case "sses":
		w.replace(4, "ss")
	case "ies", "ied":
		if len(w.b) > 4 {
			w.replace(3, "i")
		} else {
			w.replace(3, "ie")
		}
	case "s":
		for i := 0; i < len(w.b)-2; i++ {
			if isVowel(w.b[i]) {
				w.cut(1)
				return
			}
		}
	}
}

var (
	step1bList  = []string{"eedly", "ingly", "edly", "ing", "eed", "ed"}
	step1bAfter = []string{"at", "bl", "iz", "bb", "dd", "ff", "gg", "mm", "nn", "pp", "rr", "tt"}
)

func (w *stemWord) step1b() {
	s := w.firstSuffix(step1bList)
	switch s {
	case "":
		return
	case "eed", "eedly":
		if len(s) <= len(w.b)-w.r1 {
			w.replace(len(s), "ee")
		}
		return
	}
	vowel := false
	for i := 0; i < len(w.b)-len(s); i++ {
		if isVowel(w.b[i]) {
			vowel = true
			break
		}
	}
	if !vowel {
		return
	}
	r1, r2 := w.r1, w.r2
	w.cut(len(s))
	switch t := w.firstSuffix(step1bAfter); t {
	case "":
		if w.isShortWord() {
			w.b = append(w.b, 'e')
			w.r1, w.r2 = len(w.b), len(w.b)
			return
		}
	case "at", "bl", "iz":
		w.replace(2, t+"e")
	default: // a double
		w.cut(1)
	}
	w.r1, w.r2 = min(r1, len(w.b)), min(r2, len(w.b))
}

func (w *stemWord) step1c() {
	n := len(w.b)
	if n > 2 && (w.b[n-1] == 'y' || w.b[n-1] == 'Y') && !isVowel(w.b[n-2]) {
		w.b[n-1] = 'i'
	}
}

var step2List = []string{
	"ational", "fulness", "iveness", "ization", "ousness",
	"biliti", "lessli", "tional", "alism", "aliti", "ation",
	"entli", "fulli", "iviti", "ousli", "anci", "abli",
	"alli", "ator", "enci", "izer", "bli", "ogi", "li",
}

var step2Repl = map[string]string{
	"tional": "tion", "enci": "ence", "anci": "ance", "abli": "able", "entli": "ent",
	"izer": "ize", "ization": "ize", "ational": "ate", "ation": "ate", "ator": "ate",
	"alism": "al", "aliti": "al", "alli": "al", "fulness": "ful", "ousli": "ous",
	"ousness": "ous", "iveness": "ive", "iviti": "ive", "biliti": "ble", "bli": "ble",
	"fulli": "ful", "lessli": "less",
}

func (w *stemWord) step2() {
	s := w.firstSuffix(step2List)
	if s == "" || len(s) > len(w.b)-w.r1 {
		return
	}
	n := len(w.b)
	switch s {
	case "li":
		if n >= 3 {
			switch w.b[n-3] {
			case 'c', 'd', 'e', 'g', 'h', 'k', 'm', 'n', 'r', 't':
				w.cut(2)
			}
		}
	case "ogi":
		if n >= 4 && w.b[n-4] == 'l' {
			w.replace(3, "og")
		}
	default:
		w.replace(len(s), step2Repl[s])
	}
}

var step3List = []string{"ational", "tional", "alize", "icate", "ative", "iciti", "ical", "ful", "ness"}

var step3Repl = map[string]string{
	"ational": "ate", "tional": "tion", "alize": "al", "icate": "ic", "iciti": "ic",
	"ical": "ic", "ful": "", "ness": "",
}

func (w *stemWord) step3() {
	s := w.firstSuffix(step3List)
	if s == "" || len(s) > len(w.b)-w.r1 {
		return
	}
	if s == "ative" {
		if len(w.b)-w.r2 >= 5 {
			w.cut(5)
		}
		return
	}
	w.replace(len(s), step3Repl[s])
}

var step4List = []string{
	"ement", "ance", "ence", "able", "ible", "ment",
	"ent", "ant", "ism", "ate", "iti", "ous", "ive",
	"ize", "ion", "al", "er", "ic",
}

func (w *stemWord) step4() {
	s := w.firstSuffix(step4List)
	if s == "" || len(s) > len(w.b)-w.r2 {
		return
	}
	if s == "ion" {
		if n := len(w.b); n >= 4 && (w.b[n-4] == 's' || w.b[n-4] == 't') {
			w.cut(3)
		}
		return
	}
	w.cut(len(s))
}

func (w *stemWord) step5() {
	lri := len(w.b) - 1
	if w.r1 > lri {
		return
	}
	switch {
	case w.b[lri] == 'e':
		if w.r2 <= lri || !w.endsShortSyllable(lri) {
			w.cut(1)
		}
	case w.r2 <= lri && w.b[lri] == 'l' && lri >= 1 && w.b[lri-1] == 'l':
		w.cut(1)
	}
}
