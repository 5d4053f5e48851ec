package index

import (
	"unsafe"

	"github.com/lazymem/lazymem/index/analysis"
)

// termTable is the mutable segment's term dictionary: term -> slot of its
// memTerm in the slab. Slots are given in insertion order (0, 1, 2...), so
// the table is also the slot -> term list that sealing sorts.
//
// Profile lesson (Zipf corpus, one writer, session context): the serial
// insert's largest part was the first lookup of each distinct term of a
// chunk in a Go map of ~10^5 strings: a miss on the group's control word,
// one on the key's header, one on the key's bytes elsewhere on the heap.
// Here a lookup reads one 16-byte entry holding a hash tag, the term's
// length, its slot and its first 8 bytes (all of most terms), and the hash
// comes from the parallel analysis (batchTerms.uhash) for a chunk's own
// terms. Per term it holds about what the map held (entries at a load of
// 3/8 to 3/4, 4 bytes of offset, the bytes).
type termTable struct {
	ents []termEnt // open addressing, linear probing; len a power of two
	mask uint64
	// The term of slot i is bytes[off[i]:off[i+1]].
	bytes []byte
	off   []uint32
	// rehash is the hash grow places terms by: termHash, or a test's.
	rehash func(string) uint64
}

// termEnt is one term of a termTable: tag is the hash's upper 24 bits and
// the term's length (255 for 255 and more) in the low 8; slot is the slab
// index + 1, 0 for an empty entry; pre the term's first bytes, zero padded
// (termPre).
type termEnt struct {
	tag  uint32
	slot uint32
	pre  uint64
}

// termPre is the first 8 bytes of t, little endian, zero padded
// (analysis.TermPrefix). The analysis hands it out with each term, read
// from the surface it scanned, and keeps it for each distinct term of a
// chunk (batchTerms.upre), so that insert matches a term of at most 8
// bytes without reading its bytes. Profile lesson (Zipf corpus, session
// context): once the analyzer's cache kept terms apart from its slots, the
// prefix's compare in the serial insert was a cold miss on every distinct
// term of a chunk (memeqbody 0.19 s of termTable.findOrAdd's 0.49 s); read
// from the term on the analysis worker, the same miss (memmove 0.30 s).
func termPre(t string) uint64 { return analysis.TermPrefix(t) }

// termHash hashes the terms of mutable segments (never persisted). It is
// the analyzer's TermHash, which the project analyzer hands out with each
// term (hashedAnalyzer), so that analysis hashes a token once.
func termHash(t string) uint64 { return analysis.TermHash(t) }

func entTag(h uint64, n int) uint32 { return uint32(h>>32)&^0xff | uint32(min(n, 0xff)) }

// newTermTable returns a table sized for n terms.
func newTermTable(n int) termTable {
	size := 64
	for size*3/4 < n {
		size <<= 1
	}
	return termTable{ents: make([]termEnt, size), mask: uint64(size - 1), off: append(make([]uint32, 0, n+1), 0), rehash: termHash}
}

// len returns the number of terms.
func (tt *termTable) len() int { return len(tt.off) - 1 }

// key returns the term of slot k. It stays valid while the table lives:
// bytes is only appended to, and a grown array leaves the old one as is.
func (tt *termTable) key(k int) string {
	b := tt.bytes[tt.off[k]:tt.off[k+1]]
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// match reports whether e holds t, whose tag is tag and prefix pre: a
// term of at most 8 bytes is told by them alone (the tag holds its
// length), without reading its bytes.
func (tt *termTable) match(e *termEnt, tag uint32, pre uint64, t string) bool {
	if e.tag != tag || e.pre != pre {
		return false
	}
	if len(t) <= 8 {
		return true
	}
	k := e.slot - 1
	return string(tt.bytes[tt.off[k]+8:tt.off[k+1]]) == t[8:]
}

// find returns the slot of t, whose hash is h (termHash), and false when
// the table does not hold it.
func (tt *termTable) find(t string, h uint64) (int32, bool) {
	tag, pre := entTag(h, len(t)), termPre(t)
	for i := h & tt.mask; ; i = (i + 1) & tt.mask {
		e := &tt.ents[i]
		if e.slot == 0 {
			return 0, false
		}
		if tt.match(e, tag, pre, t) {
			return int32(e.slot - 1), true
		}
	}
}

// warm reads the home entry of each hash of hs and returns a sum of what
// it read (the caller keeps it, so the loads stay): the loads do not
// depend on each other, so the CPU overlaps their cache misses, and the
// lookups that follow find the entries in the cache.
func (tt *termTable) warm(hs []uint64) uint32 {
	var s uint32
	for _, h := range hs {
		s += tt.ents[h&tt.mask].slot
	}
	return s
}

// findOrAdd returns the slot of t, whose hash is h and prefix pre
// (termPre); a term the table does not hold is added with slot next
// (which must be tt.len(): the slab's next index), and added reports it.
// t is copied.
func (tt *termTable) findOrAdd(t string, h, pre uint64, next int32) (slot int32, added bool) {
	tag := entTag(h, len(t))
	i := h & tt.mask
	for ; ; i = (i + 1) & tt.mask {
		e := &tt.ents[i]
		if e.slot == 0 {
			break
		}
		if tt.match(e, tag, pre, t) {
			return int32(e.slot - 1), false
		}
	}
	if (tt.len()+1)*4 > len(tt.ents)*3 {
		tt.grow()
		for i = h & tt.mask; tt.ents[i].slot != 0; i = (i + 1) & tt.mask {
		}
	}
	e := &tt.ents[i]
	e.tag, e.slot, e.pre = tag, uint32(next)+1, pre
	tt.bytes = append(tt.bytes, t...)
	tt.off = append(tt.off, uint32(len(tt.bytes)))
	return next, true
}

// grow doubles the table. Entries keep only part of their hash, so each
// term is hashed again (rare: tables are sized from the previous segment).
func (tt *termTable) grow() {
	old := tt.ents
	tt.ents = make([]termEnt, 2*len(old))
	tt.mask = uint64(len(tt.ents) - 1)
	for k := range old {
		e := &old[k]
		if e.slot == 0 {
			continue
		}
		i := tt.rehash(tt.key(int(e.slot-1))) & tt.mask
		for tt.ents[i].slot != 0 {
			i = (i + 1) & tt.mask
		}
		tt.ents[i] = *e
	}
}

// chunkTable gives each distinct term of a chunk its id (its index in
// batchTerms.uterms), keyed by termHash: analyze hashes each term once, and
// the hash serves the chunk's dedupe, insert's termTable lookup and the
// session context's merge. An entry is 8 bytes (the hash's upper half and
// the id; the position comes from the lower half, and growing reads the
// hashes of batchTerms.uhash), and reset clears the table. Profile lesson
// (Zipf corpus, session context): with 16-byte entries told apart from an
// earlier chunk's by a generation number, so that reset cleared nothing,
// the first touch of each entry in a chunk was a cold miss (findOrAdd 0.25
// s of a 5.3 s profile, on the generation's load): the tables of the
// pooled batches are used one chunk in eight. Clearing streams the table
// into the cache at once, and half the size holds the same chunk.
type chunkTable struct {
	ents []chunkEnt
	mask uint64
	n    int
}

type chunkEnt struct {
	tag uint32 // chunkTag of the term's hash; 0 for an empty entry
	id  int32
}

func chunkTag(h uint64) uint32 { return uint32(h>>32) | 1 }

// reset empties the table.
func (ct *chunkTable) reset() {
	ct.n = 0
	if len(ct.ents) > 1<<15 { // a huge chunk's table
		ct.ents = nil
	}
	if ct.ents == nil {
		ct.ents = make([]chunkEnt, 1024)
		ct.mask = uint64(len(ct.ents) - 1)
		return
	}
	clear(ct.ents)
}

// find returns the id of t, whose hash is h, among uterms; -1 if absent.
func (ct *chunkTable) find(t string, h uint64, uterms []string) int32 {
	tag := chunkTag(h)
	for i := h & ct.mask; ; i = (i + 1) & ct.mask {
		e := &ct.ents[i]
		if e.tag == 0 {
			return -1
		}
		if e.tag == tag && uterms[e.id] == t {
			return e.id
		}
	}
}

// findOrAdd returns the id of t, whose hash is h, giving it id
// len(uterms) when it is new (added reports it; the caller appends t to
// uterms and h to uhash, the hashes of uterms).
func (ct *chunkTable) findOrAdd(t string, h uint64, uterms []string, uhash []uint64) (id int32, added bool) {
	tag := chunkTag(h)
	i := h & ct.mask
	for ; ; i = (i + 1) & ct.mask {
		e := &ct.ents[i]
		if e.tag == 0 {
			break
		}
		if e.tag == tag && uterms[e.id] == t {
			return e.id, false
		}
	}
	if (ct.n+1)*2 > len(ct.ents) {
		ct.grow(uhash)
		for i = h & ct.mask; ct.ents[i].tag != 0; i = (i + 1) & ct.mask {
		}
	}
	ct.n++
	ct.ents[i] = chunkEnt{tag: tag, id: int32(len(uterms))}
	return int32(len(uterms)), true
}

func (ct *chunkTable) grow(uhash []uint64) {
	old := ct.ents
	ct.ents = make([]chunkEnt, 2*len(old))
	ct.mask = uint64(len(ct.ents) - 1)
	for _, e := range old {
		if e.tag == 0 {
			continue
		}
		i := uhash[e.id] & ct.mask
		for ct.ents[i].tag != 0 {
			i = (i + 1) & ct.mask
		}
		ct.ents[i] = e
	}
}
