package analysis

import (
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// class is what the segmenter needs to know about a character.
type class uint8

const (
	cSep    class = iota // anything that separates words: space, punctuation, symbols, emoji
	cLower               // lowercase letter
	cUpper               // uppercase or titlecase letter (camelCase boundaries)
	cLetter              // letter without case (Arabic, Hebrew, Devanagari, Thai...)
	cDigit               // any Unicode number
	cMark                // combining mark: continues the current word
	cJoin                // . - @ : / & : joins two atoms into one identifier
	cUnder               // '_' and other connector punctuation: joins like cJoin
	cApos                // ' and U+2019: kept inside a word between two letters
	cCJK                 // Han, Hiragana, Katakana, Hangul, U+30FC: bigrammed
)

// asciiClass is the fast path: one table load per ASCII byte.
var asciiClass = func() (t [utf8.RuneSelf]class) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = cLower
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = cUpper
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = cDigit
	}
	for _, c := range ".-@:/&" {
		t[c] = cJoin
	}
	t['_'] = cUnder
	t['\''] = cApos
	return t
}()

// asciiLower folds ASCII letters; every other byte maps to itself.
var asciiLower = func() (t [utf8.RuneSelf]byte) {
	for i := range t {
		t[i] = byte(i)
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = byte(c + 'a' - 'A')
	}
	return t
}()

// nfkcSafe marks, in bmpTable, a rune that NFKC leaves alone whatever its
// neighbours: it is normal on its own and starts a segment (combining class
// 0, never composes with a rune before it). A string of safe runes is NFKC.
const nfkcSafe = 0x80

// bmpPages holds the class of every BMP rune, and nfkcSafe, so that
// non-ASCII text costs a table load per rune instead of Unicode range-table
// searches. Pages of 256 runes are built on first use (tens of
// microseconds each), so a process pays only for the scripts it sees.
var bmpPages [256]atomic.Pointer[[256]uint8]

// bmpInfo returns the class of r (< 0x10000), with nfkcSafe.
func bmpInfo(r rune) uint8 {
	p := bmpPages[r>>8].Load()
	if p == nil {
		p = buildPage(r >> 8)
	}
	return p[r&0xff]
}

func buildPage(page rune) *[256]uint8 {
	p := new([256]uint8)
	var buf [utf8.UTFMax]byte
	for i := range p {
		r := page<<8 | rune(i)
		c := uint8(asciiOrClassify(r))
		if utf8.ValidRune(r) && safeRune(buf[:0], r) {
			c |= nfkcSafe
		}
		p[i] = c
	}
	// Racing builders compute the same page; keep whichever was first.
	if !bmpPages[page].CompareAndSwap(nil, p) {
		p = bmpPages[page].Load()
	}
	return p
}

func asciiOrClassify(r rune) class {
	if r < utf8.RuneSelf {
		return asciiClass[r]
	}
	return classify(r)
}

// safeRune reports whether r is nfkcSafe; buf is scratch.
func safeRune(buf []byte, r rune) bool {
	b := utf8.AppendRune(buf, r)
	return norm.NFKC.IsNormal(b) && norm.NFKC.Properties(b).BoundaryBefore()
}

// classAt classifies the character starting at s[i] and returns its size in
// bytes. Invalid UTF-8 is one byte of cSep.
func classAt(s string, i int) (class, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	if r < 0x10000 {
		return class(bmpInfo(r) &^ nfkcSafe), size
	}
	return classify(r), size
}

// classify classifies a non-ASCII rune.
func classify(r rune) class {
	if r >= 0x1100 && isCJK(r) {
		return cCJK
	}
	switch {
	case unicode.IsLetter(r):
		if unicode.IsUpper(r) || unicode.IsTitle(r) {
			return cUpper
		}
		if unicode.IsLower(r) {
			return cLower
		}
		return cLetter
	case unicode.IsNumber(r):
		return cDigit
	case unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me):
		return cMark
	case r == '\u2019':
		return cApos
	case unicode.Is(unicode.Pc, r):
		return cUnder
	}
	return cSep
}

// isCJK reports the scripts written without spaces that we index as
// overlapping bigrams. U+30FC (prolonged sound mark) is script Common but
// lives inside Katakana words.
func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r) || r == 0x30FC
}

// IsCJK reports whether the tokenizer treats r as CJK: a character of the
// scripts written without spaces (Han, Hiragana, Katakana, Hangul, and
// U+30FC inside Katakana words), indexed as overlapping bigrams. Callers
// that match words the way the index does (on word boundaries, but
// anywhere inside CJK text) use it and IsWordRune.
func IsCJK(r rune) bool { return isCJK(r) }

// IsWordRune reports whether r is part of a word for the tokenizer: a
// letter, a number, a combining mark (it continues the word it follows) or
// a CJK character. Everything else (space, punctuation, symbols, and the
// joiners such as '.', '-', '_' and the apostrophe, which only join two
// atoms into one term) separates words.
func IsWordRune(r rune) bool {
	var c class
	switch {
	case r < 0:
		return false
	case r < utf8.RuneSelf:
		c = asciiClass[r]
	case r < 0x10000:
		c = class(bmpInfo(r) &^ nfkcSafe)
	default:
		c = classify(r)
	}
	return c >= cLower && c <= cMark || c == cCJK
}

func isAlnum(c class) bool { return c >= cLower && c <= cDigit }

func isLetter(c class) bool { return c >= cLower && c <= cLetter }
