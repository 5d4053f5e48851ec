package index

import (
	"hash/maphash"
	"unsafe"
)

// termTable is the mutable segment's term dictionary: term -> slot of its
// memTerm in the slab. Slots are given in insertion order (0, 1, 2...), so
// the table is also the slot -> term list that sealing sorts.
//
// Profile lesson (Zipf corpus, one writer, session context): the serial
// insert's largest part was the first lookup of each distinct term of a
// chunk in a Go map of ~10^5 strings: a miss on the group's control word,
// one on the key's header, one on the key's bytes elsewhere on the heap.
// Here a lookup reads one 32-byte entry holding the hash, the slot and the
// term's first 16 bytes (every term of most vocabularies), and the hash
// comes from the parallel analysis (batchTerms.uhash) for a chunk's own
// terms.
type termTable struct {
	ents []termEnt // open addressing, linear probing; len a power of two
	mask uint64
	// keys[slot] is the term of slot, its bytes in pages (never moved).
	keys  []string
	pages [][]byte
}

// termEnt is one term of a termTable. slot is the slab index + 1, 0 for an
// empty entry.
type termEnt struct {
	h    uint64
	slot uint32
	n    uint32   // the term's length
	pre  [16]byte // its first bytes, zero padded
}

const termPage = 64 << 10

// termSeed hashes the terms of mutable segments (never persisted).
var termSeed = maphash.MakeSeed()

func termHash(t string) uint64 { return maphash.String(termSeed, t) }

// newTermTable returns a table sized for n terms.
func newTermTable(n int) termTable {
	size := 64
	for size*3/4 < n {
		size <<= 1
	}
	return termTable{ents: make([]termEnt, size), mask: uint64(size - 1), keys: make([]string, 0, n)}
}

// len returns the number of terms.
func (tt *termTable) len() int { return len(tt.keys) }

// match reports whether e holds t.
func (tt *termTable) match(e *termEnt, h uint64, t string) bool {
	if e.h != h || int(e.n) != len(t) {
		return false
	}
	p := min(len(t), len(e.pre))
	if string(e.pre[:p]) != t[:p] {
		return false
	}
	return p == len(t) || tt.keys[e.slot-1][p:] == t[p:]
}

// find returns the slot of t, whose hash is h (termHash), and false when
// the table does not hold it.
func (tt *termTable) find(t string, h uint64) (int32, bool) {
	for i := h & tt.mask; ; i = (i + 1) & tt.mask {
		e := &tt.ents[i]
		if e.slot == 0 {
			return 0, false
		}
		if tt.match(e, h, t) {
			return int32(e.slot - 1), true
		}
	}
}

// findOrAdd returns the slot of t, whose hash is h; a term the table does
// not hold is added with slot next (which must be tt.len(): the slab's
// next index), and added reports it. t is copied.
func (tt *termTable) findOrAdd(t string, h uint64, next int32) (slot int32, added bool) {
	i := h & tt.mask
	for ; ; i = (i + 1) & tt.mask {
		e := &tt.ents[i]
		if e.slot == 0 {
			break
		}
		if tt.match(e, h, t) {
			return int32(e.slot - 1), false
		}
	}
	if (len(tt.keys)+1)*4 > len(tt.ents)*3 {
		tt.grow()
		for i = h & tt.mask; tt.ents[i].slot != 0; i = (i + 1) & tt.mask {
		}
	}
	e := &tt.ents[i]
	e.h, e.slot, e.n = h, uint32(next)+1, uint32(len(t))
	copy(e.pre[:], t)
	tt.keys = append(tt.keys, tt.clone(t))
	return next, true
}

// clone copies t into the table's pages.
func (tt *termTable) clone(t string) string {
	if len(t) == 0 {
		return ""
	}
	if len(t) > termPage/4 {
		return string([]byte(t)) // a long term gets its own allocation
	}
	last := len(tt.pages) - 1
	if last < 0 || len(tt.pages[last])+len(t) > cap(tt.pages[last]) {
		tt.pages = append(tt.pages, make([]byte, 0, termPage))
		last++
	}
	p := tt.pages[last]
	off := len(p)
	tt.pages[last] = append(p, t...)
	return unsafe.String(&tt.pages[last][off], len(t))
}

// grow doubles the table, placing each entry by its stored hash.
func (tt *termTable) grow() {
	old := tt.ents
	tt.ents = make([]termEnt, 2*len(old))
	tt.mask = uint64(len(tt.ents) - 1)
	for k := range old {
		e := &old[k]
		if e.slot == 0 {
			continue
		}
		i := e.h & tt.mask
		for tt.ents[i].slot != 0 {
			i = (i + 1) & tt.mask
		}
		tt.ents[i] = *e
	}
}

// chunkTable gives each distinct term of a chunk its id (its index in
// batchTerms.uterms), keyed by termHash: analyze hashes each term once, and
// the hash serves the chunk's dedupe, insert's termTable lookup and the
// session context's merge (prevDoc keeps its terms' hashes). Entries of an
// earlier chunk are told apart by gen, so reset clears nothing.
type chunkTable struct {
	ents []chunkEnt
	mask uint64
	gen  uint32
	n    int
}

type chunkEnt struct {
	h   uint64
	id  int32
	gen uint32
}

// reset empties the table.
func (ct *chunkTable) reset() {
	ct.gen++
	ct.n = 0
	if ct.gen == 0 || len(ct.ents) > 1<<15 { // wrapped, or a huge chunk's table
		ct.ents, ct.gen = nil, 1
	}
	if ct.ents == nil {
		ct.ents = make([]chunkEnt, 1024)
		ct.mask = uint64(len(ct.ents) - 1)
	}
}

// find returns the id of t, whose hash is h, among uterms; -1 if absent.
func (ct *chunkTable) find(t string, h uint64, uterms []string) int32 {
	for i := h & ct.mask; ; i = (i + 1) & ct.mask {
		e := &ct.ents[i]
		if e.gen != ct.gen {
			return -1
		}
		if e.h == h && uterms[e.id] == t {
			return e.id
		}
	}
}

// findOrAdd returns the id of t, whose hash is h, giving it id
// len(uterms) when it is new (added reports it; the caller appends t).
func (ct *chunkTable) findOrAdd(t string, h uint64, uterms []string) (id int32, added bool) {
	i := h & ct.mask
	for ; ; i = (i + 1) & ct.mask {
		e := &ct.ents[i]
		if e.gen != ct.gen {
			break
		}
		if e.h == h && uterms[e.id] == t {
			return e.id, false
		}
	}
	if (ct.n+1)*2 > len(ct.ents) {
		ct.grow()
		for i = h & ct.mask; ct.ents[i].gen == ct.gen; i = (i + 1) & ct.mask {
		}
	}
	ct.n++
	ct.ents[i] = chunkEnt{h: h, id: int32(len(uterms)), gen: ct.gen}
	return int32(len(uterms)), true
}

func (ct *chunkTable) grow() {
	old, gen := ct.ents, ct.gen
	ct.ents = make([]chunkEnt, 2*len(old))
	ct.mask = uint64(len(ct.ents) - 1)
	ct.gen = 1
	for _, e := range old {
		if e.gen != gen {
			continue
		}
		i := e.h & ct.mask
		for ct.ents[i].gen == 1 {
			i = (i + 1) & ct.mask
		}
		ct.ents[i] = chunkEnt{h: e.h, id: e.id, gen: 1}
	}
}
