package analysis

import (
	"hash/maphash"
	"slices"
	"sync"

	"github.com/kljensen/snowball/english"
)

// stopwords is Lucene's classic English stop set (EnglishAnalyzer,
// ENGLISH_STOP_WORDS_SET): small on purpose. BM25's idf already discounts
// frequent words; the list only removes the ones that carry no meaning at
// all, so "what did Alice decide" keeps "what", "did" and "decide".
var stopwords = map[string]struct{}{
	"a": {}, "an": {}, "and": {}, "are": {}, "as": {}, "at": {}, "be": {}, "but": {},
	"by": {}, "for": {}, "if": {}, "in": {}, "into": {}, "is": {}, "it": {}, "no": {},
	"not": {}, "of": {}, "on": {}, "or": {}, "such": {}, "that": {}, "the": {},
	"their": {}, "then": {}, "there": {}, "these": {}, "they": {}, "this": {}, "to": {},
	"was": {}, "will": {}, "with": {},
}

// StopWords returns a copy of the English stopword list, sorted.
func StopWords() []string {
	out := make([]string, 0, len(stopwords))
	for w := range stopwords {
		out = append(out, w)
	}
	slices.Sort(out)
	return out
}

// stemmable reports whether w (already folded) is an English word for the
// Porter2 stemmer: ASCII letters and apostrophes only, with a letter.
// Identifiers with digits or joiners, and non-Latin words, are kept as is.
func stemmable(w []byte) bool {
	letter := false
	for _, c := range w {
		switch {
		case c >= 'a' && c <= 'z':
			letter = true
		case c == '\'':
		default:
			return false
		}
	}
	return letter
}

// computeTerm is the pure function surface -> term that the cache memoizes.
// It returns "" when the surface is a stopword. Because it depends only on
// the surface and the options, documents and queries always agree.
func (a *Analyzer) computeTerm(surface []byte) string {
	if a.opts.Stopwords {
		if _, ok := stopwords[string(surface)]; ok {
			return ""
		}
	}
	w := string(surface)
	if a.opts.Stem && stemmable(surface) {
		w = english.Stem(w, true)
	}
	return w
}

// term returns the term for a folded surface form, and false when the
// surface is a stopword.
func (a *Analyzer) term(surface []byte) (string, bool) {
	if a.cache == nil {
		t := a.computeTerm(surface)
		return t, t != ""
	}
	sh := a.cache.shard(surface)
	sh.mu.RLock()
	t, ok := sh.m[string(surface)] // no allocation: map lookup by converted key
	sh.mu.RUnlock()
	if !ok {
		t = a.computeTerm(surface)
		k := t // most terms equal their surface: reuse the string as key
		if t != string(surface) {
			k = string(surface)
		}
		sh.put(k, t, a.cache.perShard)
	}
	return t, t != ""
}

const cacheShards = 32

// termCache memoizes surface -> term. It interns terms (a hit returns the
// same string header, so the caller allocates nothing) and hides the
// stemmer's allocations. A full shard is cleared rather than managed by LRU:
// chat vocabulary is Zipf-shaped, so the head comes straight back, and a
// clear costs nothing per hit.
type termCache struct {
	seed     maphash.Seed
	perShard int
	shards   [cacheShards]cacheShard
}

type cacheShard struct {
	mu sync.RWMutex
	m  map[string]string
	_  [40]byte // keep hot shards on separate cache lines
}

func newTermCache(size int) *termCache {
	per := size / cacheShards
	if per < 16 {
		per = 16
	}
	c := &termCache{seed: maphash.MakeSeed(), perShard: per}
	for i := range c.shards {
		c.shards[i].m = make(map[string]string)
	}
	return c
}

func (c *termCache) shard(b []byte) *cacheShard {
	return &c.shards[maphash.Bytes(c.seed, b)%cacheShards]
}

func (s *cacheShard) put(k, v string, limit int) {
	s.mu.Lock()
	if len(s.m) >= limit {
		clear(s.m)
	}
	s.m[k] = v
	s.mu.Unlock()
}
