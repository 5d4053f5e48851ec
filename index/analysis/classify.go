package analysis

import (
	"unicode"
	"unicode/utf8"
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

// classAt classifies the character starting at s[i] and returns its size in
// bytes. Invalid UTF-8 is one byte of cSep.
func classAt(s string, i int) (class, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, size := utf8.DecodeRuneInString(s[i:])
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

func isAlnum(c class) bool { return c >= cLower && c <= cDigit }

func isLetter(c class) bool { return c >= cLower && c <= cLetter }
