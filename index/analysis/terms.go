package analysis

import (
	"encoding/binary"
	"hash/maphash"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/lazymem/lazymem/index/analysis/porter2"
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
		w = porter2.Stem(w, true)
	}
	return w
}

// term returns the term for a folded surface form, its TermHash and its
// length when it is a prefix of the surface (else notPrefix: see
// termKeyPrefix), and false when the surface is a stopword.
func (a *Analyzer) term(surface []byte) (string, uint64, uint8, bool) {
	if a.cache == nil || len(surface) > slotKey {
		t := a.computeTerm(surface)
		if t == "" {
			return "", 0, notPrefix, false
		}
		return t, TermHash(t), notPrefix, true
	}
	return a.termHashed(surface, hashSurface(a, surface))
}

// termHashed is term for a surface of at most slotKey bytes, with a
// cache, whose hashSurface is h.
func (a *Analyzer) termHashed(surface []byte, h uint64) (string, uint64, uint8, bool) {
	if t, th, tl, ok := a.cache.get(h, surface); ok {
		return t, th, tl, t != ""
	}
	t := a.computeTerm(surface)
	var th uint64
	tl := uint8(notPrefix)
	if t != "" {
		th = TermHash(t)
		if len(t) <= len(surface) && string(surface[:len(t)]) == t { // len(t) <= slotKey: fits nt
			tl = uint8(len(t))
		}
	}
	a.cache.put(h, surface, t, th, tl)
	return t, th, tl, t != ""
}

// termKeyPrefix is TermPrefix(t), read from surface when the cache
// recorded that t is its first tl bytes (most words: the term is the
// surface, or a stem the surface starts with), so that a hit does not read
// the term's bytes, which live apart from the slot.
func termKeyPrefix(t string, surface []byte, tl uint8) uint64 {
	if tl == notPrefix {
		return TermPrefix(t)
	}
	return bytesPrefix(surface[:tl])
}

// TermKey is what analysis hands out beside a term (AppendTermsKeyed):
// its TermHash and its TermPrefix.
type TermKey struct {
	Hash   uint64
	Prefix uint64
}

// TermPrefix is the first 8 bytes of t, little endian, zero padded: with
// the term's length it tells apart the terms of at most 8 bytes without
// reading them again.
func TermPrefix(t string) uint64 {
	if len(t) >= 8 {
		return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(t), 8))
	}
	return bytesPrefix([]byte(t)) // does not escape: no allocation
}

func bytesPrefix(b []byte) uint64 {
	if len(b) >= 8 {
		return binary.LittleEndian.Uint64(b)
	}
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// hashSurface is the cache's hash of a surface: odd, so never 0 (empty)
// nor slotBusy.
func hashSurface(a *Analyzer, surface []byte) uint64 {
	return maphash.Bytes(a.cache.seed, surface) | 1
}

// hashSeed is TermHash's seed: per process, never persisted.
var hashSeed = maphash.MakeSeed()

// TermHash is the hash of a term that analysis hands out beside it
// (AppendTermsHashed), so that a caller keying tables by term need not
// hash the term again. It is per process: never persist it.
func TermHash(t string) uint64 { return maphash.String(hashSeed, t) }

// termCache memoizes surface -> term. A hit returns the cached string, so
// the caller allocates nothing, and hides the stemmer (which allocates
// several times per word).
//
// It is a lock-free, insert-only open-addressing table of 32-byte slots,
// each holding its surface inline and its term's hash, with the terms'
// strings in a parallel array (terms[i] is slot i's): the slots hold no
// pointer, so the collector does not scan them, and the terms are dense. A
// writer claims an empty slot with a CAS to slotBusy, fills it and its
// term, and publishes both by storing the surface's hash; readers load the
// hash first, so what they read after it was written before it. When the
// table is three quarters full it is replaced by an empty one, twice its
// size until the largest (readers holding the old table finish on it),
// which keeps the one it replaced as its predecessor: a word missing from
// the table but in its predecessor is copied over (no allocation), so the
// words in use survive a reset without being analysed again, and what
// neither table holds is dropped. An LRU would cost every hit a write.
//
// Profile lessons (issue 16's Zipf corpus, 200k records, 111k distinct
// terms: a long tail of rare words and CJK bigrams): with a plain reset the
// cache missed 385k times, re-stemming the frequent words after each of
// its resets; keeping the predecessor, 155k (dropping it once the new
// table is half full: 251k). With a slot of pointers to 64-byte entries
// (surface and term inline), a lookup was two cache misses on scattered
// lines (the slot, then the entry: find was 16% of an ingest profile, its
// two loads half each); here the slots and the terms are two dense arrays,
// the term's hash spares the index a second hash of every token, and the
// term's prefix comes from the surface (nt), not from the term's bytes
// (profile: the index reading them for its prefix was 0.30 s of 4.8 s). A
// 64-byte slot holding the term's string (one line a lookup) made the
// collector walk every line of the table at each cycle (cachegrind of a
// 50k-record ingest, simulated 8 MiB last level: the marker's misses
// 1.47M -> 1.72M; 1.50M with these slots).
// Surfaces longer than slotKey bytes are not cached (rare: identifiers,
// digests; not the chat's words nor CJK bigrams). The cost is the tables'
// memory: 48 bytes a slot, up to twice CacheSize slots (6 MiB at the
// default size, against 5 MiB for the slots and entries before), at most
// two tables, per analyzer; the three quarters it fills before a reset
// (the pointer slots filled half) hold more words, which mattered as much
// as the layout: BenchmarkAnalyzeZipf, 200k records, allocations 453k
// (pointer slots) -> 298k (one-line slots, filled half) -> 214k (three
// quarters).
type termCache struct {
	seed  maphash.Seed
	slots int // the largest table's slots: a power of two
	table atomic.Pointer[cacheTable]
}

type cacheTable struct {
	mask  uint64
	limit int64 // reset when used reaches limit
	used  atomic.Int64
	slots []cacheSlot
	terms []string // terms[i]: the term of slots[i] ("" for a stopword)
	// prev is the table this one replaced, until this one is replaced in
	// turn (then nil: a table keeps at most one generation alive).
	prev atomic.Pointer[cacheTable]
}

// cacheSlot is one cached surface, 32 bytes (two a cache line).
type cacheSlot struct {
	// state is 0 for an empty slot, slotBusy while a writer fills it,
	// then the surface's hash (odd: the cache sets its low bit).
	state atomic.Uint64
	th    uint64 // TermHash of the slot's term
	// nt is len(surface) in the low 4 bits and, in the high 4, the term's
	// length when the term is a prefix of the surface (its TermPrefix is
	// then the surface's), or notPrefix.
	nt  uint8
	key [slotKey]byte
}

// slotKey is the longest surface a slot holds (at most 15: nt's 4 bits).
const slotKey = 32 - 8 - 8 - 1

// notPrefix is a term length (nt's high half) for a term that is not a
// prefix of its surface, or a stopword.
const notPrefix = 0

// slotBusy marks a slot being written: even, so never a published hash.
const slotBusy = 2

// maxProbe bounds a lookup. An insert that finds no free slot within it is
// dropped: correct, only slower next time.
const maxProbe = 16

// firstSlots is the size of a cache's first table (768 KiB): the tables
// double up to the configured size as they fill, so an analyzer that sees
// few words (queries, a small store) does not hold megabytes of empty
// slots.
const firstSlots = 1 << 14

func newTermCache(size int) *termCache {
	slots := 64
	for slots < 2*size {
		slots <<= 1
	}
	c := &termCache{seed: maphash.MakeSeed(), slots: slots}
	c.table.Store(newCacheTable(min(slots, firstSlots)))
	return c
}

func newCacheTable(slots int) *cacheTable {
	return &cacheTable{mask: uint64(slots - 1), limit: int64(slots / 4 * 3),
		slots: make([]cacheSlot, slots), terms: make([]string, slots)}
}

// get returns the term of key, whose hash is h (odd), its TermHash and
// its length when it is a prefix of key (else notPrefix); ok is false when the cache does not hold key. A term
// found only in the predecessor table is copied into the current one.
func (c *termCache) get(h uint64, key []byte) (term string, th uint64, tl uint8, ok bool) {
	t := c.table.Load()
	if i := t.find(h, key); i >= 0 {
		return t.terms[i], t.slots[i].th, t.slots[i].nt >> 4, true
	}
	if p := t.prev.Load(); p != nil {
		if i := p.find(h, key); i >= 0 {
			term, th, tl = p.terms[i], p.slots[i].th, p.slots[i].nt>>4
			c.put(h, key, term, th, tl)
			return term, th, tl, true
		}
	}
	return "", 0, 0, false
}

// find returns the index of key's published slot, whose hash is h, or -1.
func (t *cacheTable) find(h uint64, key []byte) int {
	for i, p := h&t.mask, 0; p < maxProbe; i, p = (i+1)&t.mask, p+1 {
		s := &t.slots[i]
		st := s.state.Load()
		if st == 0 {
			return -1
		}
		if st == h && int(s.nt&0xf) == len(key) && string(s.key[:len(key)]) == string(key) {
			return int(i)
		}
	}
	return -1
}

// put caches key (at most slotKey bytes, hash h) -> term, whose
// TermHash is th and whose length is tl if term is a prefix of key (else
// notPrefix).
func (c *termCache) put(h uint64, key []byte, term string, th uint64, tl uint8) {
	t := c.table.Load()
	if t.used.Load() >= t.limit {
		nt := newCacheTable(min(2*len(t.slots), c.slots))
		nt.prev.Store(t)
		if c.table.CompareAndSwap(t, nt) {
			t.prev.Store(nil)
		}
		t = c.table.Load()
	}
	for i, p := h&t.mask, 0; p < maxProbe; i, p = (i+1)&t.mask, p+1 {
		s := &t.slots[i]
		st := s.state.Load()
		if st == 0 && s.state.CompareAndSwap(0, slotBusy) {
			s.th, s.nt = th, uint8(len(key))|tl<<4
			copy(s.key[:], key)
			t.terms[i] = term
			s.state.Store(h)
			t.used.Add(1)
			return
		}
		if st == h && int(s.nt&0xf) == len(key) && string(s.key[:len(key)]) == string(key) {
			return // another goroutine cached it
		}
	}
}
