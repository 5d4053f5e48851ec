package use

import (
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode/utf16"

	"golang.org/x/text/unicode/norm"
)

// refEncode is a line-by-line port of the TF.js reference tokenizer
// (tokenizer/index.ts and trie.ts of @tensorflow-models/
// universal-sentence-encoder), with JavaScript's semantics kept where they
// matter: object keys visited in ascending order, String.length in UTF-16
// units. It is deliberately naive; Tokenizer must agree with it.
func refEncode(pieces []string, scores []float64, text string) []int32 {
	type piece struct {
		key   []rune
		score float64
		index int
	}
	trie := map[string]piece{}
	for i := reservedPieces; i < len(pieces); i++ {
		if pieces[i] != "" {
			trie[pieces[i]] = piece{[]rune(pieces[i]), scores[i], i}
		}
	}
	normalized := norm.NFKC.String(text)
	input := ""
	if len(normalized) > 0 {
		input = "\u2581" + strings.ReplaceAll(normalized, " ", "\u2581")
	}
	symbols := []rune(input)
	nodes := make([]map[int][]piece, len(symbols)+1)
	for i := range nodes {
		nodes[i] = map[int][]piece{}
	}
	words := make([]int, len(symbols)+1)
	best := make([]float64, len(symbols)+1)
	for i := range symbols {
		var matches []piece
		for j := i + 1; j <= len(symbols); j++ {
			if p, ok := trie[string(symbols[i:j])]; ok {
				matches = append(matches, p)
			}
		}
		if len(matches) == 0 {
			matches = append(matches, piece{symbols[i : i+1], 0, 0})
		}
		for _, p := range matches {
			end := i + len(p.key)
			nodes[end][i] = append(nodes[end][i], p)
		}
	}
	for end := 0; end <= len(symbols); end++ {
		starts := make([]int, 0, len(nodes[end]))
		for s := range nodes[end] {
			starts = append(starts, s)
		}
		sort.Ints(starts)
		for _, s := range starts {
			for _, w := range nodes[end][s] {
				score := w.score + best[end-len(w.key)]
				if best[end] == 0 || score >= best[end] {
					best[end] = score
					words[end] = w.index
				}
			}
		}
	}
	var results []int32
	for iter := len(words) - 1; iter > 0; {
		results = append(results, int32(words[iter]))
		step := len(utf16.Encode([]rune(pieces[words[iter]])))
		if step < 1 {
			step = 1 // the reference would loop forever
		}
		iter -= step
	}
	var merged []int32
	prevUnk := false
	for _, id := range results {
		if !(prevUnk && id == 0) {
			merged = append(merged, id)
		}
		prevUnk = id == 0
	}
	slices.Reverse(merged)
	return merged
}

// tinyVocab exercises ties, unknowns, multi-code-point pieces and an
// astral piece (two UTF-16 units, one code point).
var tinyPieces = []string{"\uFFFD", "<s>", "</s>", "x1", "x2", "x3",
	"\u2581", "\u2581a", "a", "b", "ab", "\u2581ab", "c", "abc", "é", "\u2581b", "bc", "😀", "\u2581😀", "ca"}
var tinyScores = []float64{0, 0, 0, 0, 0, 0,
	-1, -2, -3, -3, -4, -5, -2, -6, -1, -3, -3, -1, -1, -3.5}

func tinyTokenizer(t testing.TB) *Tokenizer {
	t.Helper()
	tok, err := NewTokenizer(tinyPieces, tinyScores)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestTokenizerTiny(t *testing.T) {
	tok := tinyTokenizer(t)
	for _, tc := range []struct {
		text string
		want []int32
	}{
		{"", nil},
		{"a", []int32{7}},               // ▁a -2 beats ▁ + a -4
		{"ab", []int32{7, 9}},           // ▁ab, ▁+ab, ▁a+b all score -5: the last start wins
		{"abc", []int32{7, 16}},         // ▁a+bc -5 beats ▁+abc -7
		{"zz", []int32{6, 0}},           // unknowns merged
		{"a zz a", []int32{7, 6, 0, 7}}, // space is ▁, unknowns merged
		{"😀", []int32{18}},              // astral piece: one code point, two UTF-16 units
		{"\u00e9", []int32{6, 14}},      // NFC é
		{"e\u0301", []int32{6, 14}},     // NFKC composes e + U+0301
		{"ﬀ", []int32{6, 0}},            // NFKC: ff, unknown
		{"  ", []int32{6, 6, 6}},        // leading ▁ plus two spaces
	} {
		got := tok.Encode(tc.text)
		ref := refEncode(tinyPieces, tinyScores, tc.text)
		if !equalIDs(got, ref) {
			t.Errorf("%q: got %v, the reference port %v", tc.text, got, ref)
		}
		if !equalIDs(got, tc.want) {
			t.Errorf("%q: got %v (%s), want %v", tc.text, got, tok.String(got), tc.want)
		}
	}
}

func TestNewTokenizerErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pieces []string
		scores []float64
	}{
		{"count mismatch", tinyPieces, tinyScores[:3]},
		{"too few", tinyPieces[:6], tinyScores[:6]},
		{"invalid utf-8", append(slices.Clone(tinyPieces), "\xff"), append(slices.Clone(tinyScores), -1)},
	} {
		if _, err := NewTokenizer(tc.pieces, tc.scores); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func TestParseVocabErrors(t *testing.T) {
	for _, in := range []string{
		``, `{}`, `[]`, `[["a",0]]`, `[1,2,3,4,5,6,7]`,
		`[["a",0],["b",0],["c",0],["d",0],["e",0],["f",0],["g"]]`,
		`[["a",0],["b",0],["c",0],["d",0],["e",0],["f",0],["g","x"]]`,
		`[["a",0],["b",0],["c",0],["d",0],["e",0],["f",0],[1,2]]`,
	} {
		if _, err := ParseVocab([]byte(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
	tok, err := ParseVocab([]byte(`[["a",0],["b",0],["c",0],["d",0],["e",0],["f",0],["\u2581g",-1.5]]`))
	if err != nil {
		t.Fatal(err)
	}
	// The reference's quirk: "▁" is not a piece, so position 1 is
	// unreachable and keeps score 0; the unknown "g" from there (score 0)
	// beats "▁g" (-1.5).
	if got := tok.Encode("g"); !equalIDs(got, []int32{0}) {
		t.Errorf("g: %v, want [0]", got)
	}
	if got := tok.Encode("g"); !equalIDs(got, refEncode([]string{"a", "b", "c", "d", "e", "f", "\u2581g"}, []float64{0, 0, 0, 0, 0, 0, -1.5}, "g")) {
		t.Errorf("g: %v differs from the reference port", got)
	}
}

// FuzzTokenizer checks the tokenizer against the naive port of the
// reference on the tiny vocabulary, and the invariants every encoding
// keeps: ids in range, no two unknowns in a row.
func FuzzTokenizer(f *testing.F) {
	for _, s := range []string{"", "a", "ab abc", "zz a", "😀😀", "e\u0301", "ﬁ ① ｆｕｌｌ", "\t\n", "\xff\xfe", "  a  "} {
		f.Add(s)
	}
	tok, err := NewTokenizer(tinyPieces, tinyScores)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 512 {
			return // the naive port is quadratic
		}
		got := tok.Encode(s)
		if want := refEncode(tinyPieces, tinyScores, s); !equalIDs(got, want) {
			t.Fatalf("%q: got %v, the reference port %v", s, got, want)
		}
		for i, id := range got {
			if id < 0 || int(id) >= tok.VocabSize() {
				t.Fatalf("%q: id %d out of range", s, id)
			}
			if i > 0 && id == 0 && got[i-1] == 0 {
				t.Fatalf("%q: two unknowns in a row: %v", s, got)
			}
		}
	})
}

func FuzzParseVocab(f *testing.F) {
	f.Add([]byte(`[["a",0],["b",0],["c",0],["d",0],["e",0],["f",0],["\u2581g",-1.5]]`))
	f.Add([]byte(`[["a",0],["b",0],["c",0],["d",0],["e",0],["f",0],["",-1],["",-2]]`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tok, err := ParseVocab(data)
		if err != nil {
			return
		}
		// Whatever loaded must encode without failing and stay in range.
		for _, s := range []string{"", "abc", "g g", "\u2581"} {
			for _, id := range tok.Encode(s) {
				if id < 0 || int(id) >= tok.VocabSize() {
					t.Fatalf("%q: id %d out of range", s, id)
				}
			}
		}
	})
}

// safePieces is tinyPieces without astral pieces, so AppendIDsMax may
// tokenize prefixes.
var safePieces = []string{"\uFFFD", "<s>", "</s>", "x1", "x2", "x3",
	"\u2581", "\u2581a", "a", "b", "ab", "\u2581ab", "c", "abc", "é", "\u2581b", "bc", "ü", "\u2581ü", "ca"}

func TestPrefixSafe(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pieces []string
		want   bool
	}{
		{"safe", safePieces, true},
		{"astral piece", tinyPieces, false},
		{"no ▁ piece", append(append([]string{}, safePieces[:6]...), "\u2581a", "a"), false},
		{"interior ▁", append(append([]string{}, safePieces...), "a\u2581"), false},
	} {
		scores := make([]float64, len(tc.pieces))
		for i := reservedPieces; i < len(scores); i++ {
			scores[i] = -float64(i % 7)
		}
		tok, err := NewTokenizer(tc.pieces, scores)
		if err != nil {
			t.Fatal(err)
		}
		if tok.prefixSafe != tc.want {
			t.Errorf("%s: prefixSafe %v, want %v", tc.name, tok.prefixSafe, tc.want)
		}
	}
}

// FuzzTokenizerMax checks AppendIDsMax against the whole encoding cut to
// max, with a vocabulary that allows prefixes and one that does not.
func FuzzTokenizerMax(f *testing.F) {
	f.Add("ab ab abc ca zz zz ü a", uint8(3))
	f.Add("zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz a b", uint8(2))
	f.Add("a  b   c    ab", uint8(1))
	f.Add("", uint8(5))
	safe, err := NewTokenizer(safePieces, tinyScores)
	if err != nil {
		f.Fatal(err)
	}
	unsafe, err := NewTokenizer(tinyPieces, tinyScores)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string, m uint8) {
		max := int(m%40) + 1
		var sc tokScratch
		for _, tok := range []*Tokenizer{safe, unsafe} {
			full := tok.Encode(s)
			if len(full) > max {
				full = full[:max]
			}
			got := tok.AppendIDsMax([]int32{-7}, s, max, &sc)
			if got[0] != -7 || !equalIDs(got[1:], full) {
				t.Fatalf("%q max %d (prefixSafe %v): got %v, want [-7] + %v", s, max, tok.prefixSafe, got, full)
			}
		}
	})
}

func TestAppendIDsMaxRealVocab(t *testing.T) {
	tok := loadVocab(t)
	if !tok.prefixSafe {
		t.Fatal("the USE-lite vocabulary should allow prefix tokenization")
	}
	long := strings.Repeat("We decided to use PostgreSQL for the database; the pool holds 20 connections. ", 200)
	for _, text := range []string{
		long,
		strings.Repeat("中文", 3000) + long,        // one collapsed unknown, then words
		strings.Repeat("中 ", 300) + long,         // unknowns between spaces
		strings.Repeat("a", 5000) + " b " + long, // a long word
		"short text",
	} {
		for _, max := range []int{1, 7, 128} {
			full := tok.Encode(text)
			if len(full) > max {
				full = full[:max]
			}
			var sc tokScratch
			if got := tok.AppendIDsMax(nil, text, max, &sc); !equalIDs(got, full) {
				t.Errorf("%.30q... max %d: got %v, want %v", text, max, got, full)
			}
		}
	}
}
