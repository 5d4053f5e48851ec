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

// lookupAll looks every term of ts up in every segment of segs, filling
// row[j*len(segs)+i] for ts[j] in segs[i] (df 0 where the segment does not
// hold it); hs (len(ts)) and idx (len(ts)*len(segs)) are scratch. It
// gives what segment.term gives, pair by pair, but in stages over all the
// pairs: every first slot, then every candidate's entry and string, so the
// cache misses of different terms and segments overlap instead of forming
// one chain of three per pair (slot, entry, string). Last it reads the
// first byte of each found term's postings, which the search reads next:
// those misses overlap too, and it returns what it read so the loads stay.
// Anything but an empty first slot or a first slot that holds the term (a
// collision, a probe past the first slot) takes segment.term's path.
//
// Profile lessons: Zipf 1M, 8 sealed segments, 2-4 rare terms, no filter,
// the lookups one after the other were ~40% of the query; staged per term,
// a CPU profile of rare-term queries run between other queries (Zipf 200k,
// 2 segments) still stopped on the slot's load (88% of lookupAll) and on
// the first load of each term's postings (60% of decodeDocs): each term's
// chain waited for the one before.
func lookupAll(segs []*segment, ts []string, row []termInfo, hs []uint64, idx []int) byte {
	nseg := len(segs)
	for j, t := range ts {
		hs[j] = maphash.String(dictSeed, t)
	}
	for j := range ts {
		h := hs[j]
		tag := h >> 32
		for i, s := range segs {
			k := j*nseg + i
			idx[k] = -2 // resolve by segment.term
			if s.empty() {
				idx[k] = -1 // a mutable segment with no document yet
				continue
			}
			if s.mut != nil || len(s.dict.slots) == 0 {
				continue
			}
			switch v := s.dict.slots[h&s.dict.mask]; {
			case v == 0:
				idx[k] = -1
			case v>>32 == tag:
				idx[k] = int(uint32(v)) - 1
			}
		}
	}
	for k, j := range idx {
		if j >= 0 {
			segs[k%nseg].entry(j, &row[k]) // the entry's line, for the compare below
		}
	}
	var sink byte
	for k, j := range idx {
		s, ti, t := segs[k%nseg], &row[k], ts[k/nseg]
		switch {
		case j == -1:
			*ti = termInfo{}
		case j >= 0 && string(s.termAt(j)) == t:
			// row[k] holds the entry
		case s.mut != nil:
			if !s.term(t, ti) {
				*ti = termInfo{}
			}
		default:
			if i := s.dict.findHash(s, t, hs[k/nseg]); i >= 0 {
				s.entry(i, ti)
			} else {
				*ti = termInfo{}
			}
		}
		if len(ti.data) > 0 {
			sink += ti.data[0]
		}
	}
	return sink
}
