package analysis

import (
	"hash/maphash"
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/kljensen/snowball/english"
)

// stopwords is the classic English stop list of NLTK and Snowball (127
// words, the same as github.com/kljensen/snowball's english.IsStopWord).
// Measured on LoCoMo (TestLoCoMoRecall, exhaustive BM25, evidence R@10 over
// categories 1-4): this list 0.575, Lucene's 33-word list 0.523, none 0.522.
// In short chat turns, "what", "did", "you" otherwise pull short irrelevant
// turns to the top through length normalization.
var stopwords = map[string]struct{}{
	"a": {}, "about": {}, "above": {}, "after": {}, "again": {}, "against": {}, "all": {},
	"am": {}, "an": {}, "and": {}, "any": {}, "are": {}, "as": {}, "at": {}, "be": {},
	"because": {}, "been": {}, "before": {}, "being": {}, "below": {}, "between": {},
	"both": {}, "but": {}, "by": {}, "can": {}, "did": {}, "do": {}, "does": {},
	"doing": {}, "don": {}, "down": {}, "during": {}, "each": {}, "few": {}, "for": {},
	"from": {}, "further": {}, "had": {}, "has": {}, "have": {}, "having": {}, "he": {},
	"her": {}, "here": {}, "hers": {}, "herself": {}, "him": {}, "himself": {}, "his": {},
	"how": {}, "i": {}, "if": {}, "in": {}, "into": {}, "is": {}, "it": {}, "its": {},
	"itself": {}, "just": {}, "me": {}, "more": {}, "most": {}, "my": {}, "myself": {},
	"no": {}, "nor": {}, "not": {}, "now": {}, "of": {}, "off": {}, "on": {}, "once": {},
	"only": {}, "or": {}, "other": {}, "our": {}, "ours": {}, "ourselves": {}, "out": {},
	"over": {}, "own": {}, "s": {}, "same": {}, "she": {}, "should": {}, "so": {},
	"some": {}, "such": {}, "t": {}, "than": {}, "that": {}, "the": {}, "their": {},
	"theirs": {}, "them": {}, "themselves": {}, "then": {}, "there": {}, "these": {},
	"they": {}, "this": {}, "those": {}, "through": {}, "to": {}, "too": {}, "under": {},
	"until": {}, "up": {}, "very": {}, "was": {}, "we": {}, "were": {}, "what": {},
	"when": {}, "where": {}, "which": {}, "while": {}, "who": {}, "whom": {}, "why": {},
	"will": {}, "with": {}, "you": {}, "your": {}, "yours": {}, "yourself": {},
	"yourselves": {},
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
	h := maphash.Bytes(a.cache.seed, surface)
	if t, ok := a.cache.get(h, surface); ok {
		return t, t != ""
	}
	e := newCacheEntry(h, surface, a.computeTerm(surface))
	a.cache.put(e)
	return e.term, e.term != ""
}

// termCache memoizes surface -> term. A hit returns the cached string, so
// the caller allocates nothing, and hides the stemmer (which allocates
// several times per word).
//
// It is a lock-free, insert-only open-addressing table: readers do one hash
// and a few atomic pointer loads, writers publish an immutable entry with a
// CAS into an empty slot. When the table is half full it is replaced by an
// empty one (readers holding the old table finish on it), which keeps the
// one it replaced as its predecessor: a word missing from the table but in
// its predecessor is moved over (a pointer copy), so the words in use
// survive a reset without being analysed again, and what neither table
// holds is dropped. An LRU would cost every hit a write.
//
// Profile lesson (issue 16's Zipf corpus, 200k records, 111k distinct
// terms: a long tail of rare words and CJK bigrams): with a plain reset the
// cache missed 385k times, re-stemming the frequent words after each of
// its resets; keeping the predecessor, 155k (dropping it once the new
// table is half full: 251k). The cost is the predecessor's memory: at
// most one more table (16 bytes an entry of CacheSize) and its entries,
// per analyzer.
type termCache struct {
	seed  maphash.Seed
	slots int // power of two
	table atomic.Pointer[cacheTable]
}

type cacheTable struct {
	mask  uint64
	limit int64 // reset when used reaches limit
	used  atomic.Int64
	slots []atomic.Pointer[cacheEntry]
	// prev is the table this one replaced, until this one is replaced in
	// turn (then nil: a table keeps at most one generation alive).
	prev atomic.Pointer[cacheTable]
}

// cacheEntry is one surface -> term mapping, 64 bytes: one cache line (the
// allocator aligns 64-byte objects to 64 bytes). The surface and the term
// are kept inside the entry when they fit, so a hit reads the slot and this
// one line (profile: termCache.get was ~10% of ingest CPU, cache misses on
// the entry, then on the key's bytes elsewhere on the heap, then on the
// term's when the index hashed it).
type cacheEntry struct {
	hash uint64
	key  string // the surface: in buf when it fits
	term string // "" for a stopword; key, a prefix of key, or in buf when it fits
	buf  [entryInline]byte
}

const entryInline = 64 - 8 - 2*16

// newCacheEntry makes the entry of surface, whose term is term.
func newCacheEntry(h uint64, surface []byte, term string) *cacheEntry {
	e := &cacheEntry{hash: h}
	n := 0
	if len(surface) <= len(e.buf) {
		n = copy(e.buf[:], surface)
		e.key = unsafe.String(&e.buf[0], n)
	} else {
		e.key = string(surface)
	}
	switch {
	case strings.HasPrefix(e.key, term): // equal (most words), or a stem such as connect(ions)
		e.term = e.key[:len(term)]
	case len(term) <= len(e.buf)-n:
		copy(e.buf[n:], term)
		e.term = unsafe.String(&e.buf[n], len(term))
	default:
		e.term = term
	}
	return e
}

// maxProbe bounds a lookup. An insert that finds no free slot within it is
// dropped: correct, only slower next time.
const maxProbe = 16

func newTermCache(size int) *termCache {
	slots := 64
	for slots < 2*size {
		slots <<= 1
	}
	c := &termCache{seed: maphash.MakeSeed(), slots: slots}
	c.table.Store(c.newTable())
	return c
}

func (c *termCache) newTable() *cacheTable {
	return &cacheTable{mask: uint64(c.slots - 1), limit: int64(c.slots / 2), slots: make([]atomic.Pointer[cacheEntry], c.slots)}
}

func (c *termCache) get(h uint64, key []byte) (string, bool) {
	t := c.table.Load()
	if e := t.find(h, key); e != nil {
		return e.term, true
	}
	if p := t.prev.Load(); p != nil {
		if e := p.find(h, key); e != nil {
			c.put(e)
			return e.term, true
		}
	}
	return "", false
}

// find returns the entry of key, whose hash is h, or nil.
func (t *cacheTable) find(h uint64, key []byte) *cacheEntry {
	for i, p := h&t.mask, 0; p < maxProbe; i, p = (i+1)&t.mask, p+1 {
		e := t.slots[i].Load()
		if e == nil {
			return nil
		}
		if e.hash == h && e.key == string(key) {
			return e
		}
	}
	return nil
}

func (c *termCache) put(e *cacheEntry) {
	t := c.table.Load()
	if t.used.Load() >= t.limit {
		nt := c.newTable()
		nt.prev.Store(t)
		if c.table.CompareAndSwap(t, nt) {
			t.prev.Store(nil)
		}
		t = c.table.Load()
	}
	h := e.hash
	for i, p := h&t.mask, 0; p < maxProbe; i, p = (i+1)&t.mask, p+1 {
		cur := t.slots[i].Load()
		if cur == nil {
			if t.slots[i].CompareAndSwap(nil, e) {
				t.used.Add(1)
				return
			}
			cur = t.slots[i].Load()
		}
		if cur.hash == h && cur.key == e.key {
			return // another goroutine cached it
		}
	}
}
