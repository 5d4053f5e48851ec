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

// hashStopCJK are the Chinese function characters of hash-v3: pronouns,
// particles, auxiliaries, the copula, common adverbs and measure words,
// and the question words. Every CJK character is a word of the embedder,
// so without this list "我", "的", "了", "什么" weigh as much as "虾" or
// "过敏" and dominate the cosine of two short chat turns the way English
// stopwords did before hash-v1 down-weighted them. A question's own
// function characters ("什么", "哪", "怎么") never occur in the turn that
// answers it. Frozen: changing it changes vectors, which takes a new
// Name version.
const hashStopCJK = "的了是我你他她它们在有和就也都吗呢吧啊呀嘛哦嗯这那个么什怎哪谁一不没要会能说对还" +
	"把被给让着过得地之与及或而但又很太挺再去来到上下里中为以从于可已经自己些几多少呗啦哈"

// hashStopSet holds the word-feature hash of each stopword, so a word is
// tested without building a string.
var hashStopSet = func() map[uint64]struct{} {
	m := make(map[uint64]struct{})
	for _, w := range strings.Fields(hashStopwords) {
		m[wordHash([]rune(w))] = struct{}{}
	}
	for _, r := range hashStopCJK {
		m[wordHash([]rune{r})] = struct{}{}
	}
	return m
}()

// IsCJKFunction reports whether r is one of hash-v3's Chinese function
// characters (hashStopCJK): the engine drops them where a question's
// content words are wanted alone.
func IsCJKFunction(r rune) bool { return strings.ContainsRune(hashStopCJK, r) }
