package index

import (
	"hash/maphash"
	"math/bits"
)

// termDict is a sealed segment's in-memory hash of its term table: term ->
// index in the table. The table stays the format (sorted, for merges); the
// hash is built by openSegment and only speeds lookups up.
//
// Profile lesson (Zipf corpus, 200k records, queries of every class
// interleaved as the report runs them): a binary search over ~10^5 terms
// touches ~17 table entries and their strings, each a cache miss for a
// query that did not just run; with two lookups per term and segment it
// was most of a rare-term query's 25 µs. A lookup here touches one slot,
// then the entry and the string of the one candidate whose hash tag
// matches.
type termDict struct {
	// slots: open addressing, linear probing; 0 = empty, else
	// tag<<32 | (term index + 1), tag being the hash's upper half.
	slots []uint64
	mask  uint64
}

// dictSeed hashes every segment's terms; the hash is never persisted.
var dictSeed = maphash.MakeSeed()

// dictSize returns the slot count for n terms: a power of two keeping the
// load at most 3/4 (and at least 3/8).
func dictSize(n int) int {
	want := uint64(n)*4/3 + 1
	return 1 << bits.Len64(want-1)
}

func newTermDict(n int) termDict {
	size := dictSize(n)
	return termDict{slots: make([]uint64, size), mask: uint64(size - 1)}
}

// insert records term i, whose hash is h. Terms are distinct (the table is
// strictly sorted), so no lookup precedes the insert.
func (d *termDict) insert(h uint64, i int) {
	tag := h >> 32
	for j := h & d.mask; ; j = (j + 1) & d.mask {
		if d.slots[j] == 0 {
			d.slots[j] = tag<<32 | uint64(i+1)
			return
		}
	}
}

// find returns the index of term t in s's table, or -1.
func (d *termDict) find(s *segment, t string) int {
	return d.findHash(s, t, maphash.String(dictSeed, t))
}

// findHash is find with t's hash given (tests force collisions with it).
func (d *termDict) findHash(s *segment, t string, h uint64) int {
	if len(d.slots) == 0 {
		return -1
	}
	tag := h >> 32
	for j := h & d.mask; ; j = (j + 1) & d.mask {
		v := d.slots[j]
		if v == 0 {
			return -1
		}
		if v>>32 == tag {
			i := int(uint32(v)) - 1
			if string(s.termAt(i)) == t {
				return i
			}
		}
	}
}
