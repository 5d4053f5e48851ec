package embed

import "strings"

// hashStopwords is the English stop list of hash-v1 (the NLTK/Snowball 127
// words, also used by index/analysis). It is frozen here, not imported:
// changing it changes vectors, which takes a new Name version.
const hashStopwords = "a about above after again against all am an and any are as at be " +
	"because been before being below between both but by can did do does doing don down " +
	"during each few for from further had has have having he her here hers herself him " +
	"himself his how i if in into is it its itself just me more most my myself no nor not " +
	"now of off on once only or other our ours ourselves out over own s same she should so " +
	"some such t than that the their theirs them themselves then there these they this " +
	"those through to too under until up very was we were what when where which while who " +
	"whom why will with you your yours yourself yourselves"

// hashStopSet holds the word-feature hash of each stopword, so a word is
// tested without building a string.
var hashStopSet = func() map[uint64]struct{} {
	m := make(map[uint64]struct{})
	for _, w := range strings.Fields(hashStopwords) {
		m[wordHash([]rune(w))] = struct{}{}
	}
	return m
}()
