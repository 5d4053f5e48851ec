package zipf

// Letters of the Latin vocabulary. No e, s or y, and strict consonant-vowel
// alternation with a final a, o or u: Porter's stemmer (Bleve's "en"
// analyzer) finds no suffix to strip (its vowel-final suffixes need "ou",
// "i" or "e") and no stop word has this shape.
const (
	consonants  = "bdfgklmnprtvz"
	vowels      = "aiou"
	finalVowels = "aou"
)

// Word spells Latin rank r (0 the most frequent): a final syllable from
// r mod 39, then the rest of r in base 52, at least one syllable. Every
// syllable is two letters, so distinct ranks give distinct words.
func Word(r int) string {
	b := make([]byte, 0, 8)
	last := r % (len(consonants) * len(finalVowels))
	n := r / (len(consonants) * len(finalVowels))
	for {
		d := n % (len(consonants) * len(vowels))
		b = append(b, consonants[d/len(vowels)], vowels[d%len(vowels)])
		n /= len(consonants) * len(vowels)
		if n == 0 {
			break
		}
	}
	return string(append(b, consonants[last/len(finalVowels)], finalVowels[last%len(finalVowels)]))
}

// CJK ranks map to two Han characters from two disjoint blocks of the
// CJK Unified Ideographs: the first from r/256, the second from r%256.
const (
	cjkFirst  = 0x4E00
	cjkSecond = 0x5E00
)

// CJKWord spells CJK rank r.
func CJKWord(r int) string {
	return string([]rune{rune(cjkFirst + r/256), rune(cjkSecond + r%256)})
}

// Vocabulary bounds: the rare query class draws ranks below minVocab, and
// CJKWord's first character has 4096 code points.
const (
	minVocab = 30000
	maxVocab = 4096 * 256
)
