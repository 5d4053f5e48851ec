package segment

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
)

// wordIDs maps the vocabulary's words to their ids for the sealer, which
// looks up every word of every text it seals. A word of up to 12 bytes
// lives inline in its 16-byte slot, zero-padded (a word has no zero byte,
// so the padding tells its length), beside its id: a lookup reads one
// slot, where a Go map of strings reads its control group and then the
// key's bytes elsewhere, two cache misses on a vocabulary of tens of
// thousands of words (profile of the Zipf 200k ingest: the map's lookups
// were 0.83 s of the log seal's 1.84 s). Longer words are in a Go map.
//
// Slots are 16 bytes, four to a cache line, none across two, and the
// table is up to two-thirds full: on the Zipf 200k log's 49,576 words it
// is 1 MiB. Profile lesson (the whole engine, Zipf 200k): with 24-byte
// slots at most half full (3 MiB, a quarter of the slots across two
// lines) the load of the home slot was 0.71 s of the lookups' 1.08 s,
// cache misses: the analysis and the insert on the same cores evict
// the table between two seals.
//
// Not safe for concurrent use: the sealer's, under Log.sealMu.
type wordIDs struct {
	slots []wordSlot // open addressing, linear probing; a == 0: empty
	n     int        // words inline
	long  map[string]uint32
	seed  maphash.Seed
	sink  uint64 // what scanWords read ahead, kept so the loads stay
}

// wordSlot holds a word of up to 12 bytes, zero-padded: its first 8
// bytes little-endian in a, the next 4 in b's low half; b's high half
// is its id.
type wordSlot struct {
	a, b uint64
}

// inlineWord is the longest word a slot holds.
const inlineWord = 12

func newWordIDs() *wordIDs {
	return &wordIDs{slots: make([]wordSlot, 1024), long: map[string]uint32{}, seed: maphash.MakeSeed()}
}

// pack returns w (at most 12 bytes) as a slot's first word and the low
// half of its second.
func pack(w []byte) (a, b uint64) {
	var buf [16]byte
	copy(buf[:], w)
	return binary.LittleEndian.Uint64(buf[:8]), uint64(binary.LittleEndian.Uint32(buf[8:]))
}

// home is the slot a word's probe starts at.
func (t *wordIDs) home(w []byte) uint64 {
	return maphash.Bytes(t.seed, w) & uint64(len(t.slots)-1)
}

// get returns w's id. w is a token (wordToken): no zero byte.
func (t *wordIDs) get(w []byte) (uint32, bool) {
	if len(w) > inlineWord || len(w) == 0 {
		return t.getAt(w, 0)
	}
	return t.getAt(w, t.home(w))
}

// getAt is get with w's home slot (home(w); unused for a word longer than
// inlineWord).
func (t *wordIDs) getAt(w []byte, home uint64) (uint32, bool) {
	if len(w) > inlineWord {
		id, ok := t.long[string(w)]
		return id, ok
	}
	if len(w) == 0 {
		return 0, false
	}
	a, b := pack(w)
	mask := uint64(len(t.slots) - 1)
	for i := home; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.a == 0 {
			return 0, false
		}
		if s.a == a && uint32(s.b) == uint32(b) {
			return uint32(s.b >> 32), true
		}
	}
}

// has reports whether w has an id.
func (t *wordIDs) has(w []byte) bool {
	_, ok := t.get(w)
	return ok
}

// set gives w (not empty) the id id. A word with a zero byte (never a
// token: isWordChar) goes to the map, whose lookups get does not make
// for short words: it has an id no text can use.
func (t *wordIDs) set(w []byte, id uint32) {
	if len(w) > inlineWord || bytes.IndexByte(w, 0) >= 0 {
		t.long[string(w)] = id
		return
	}
	if 3*(t.n+1) > 2*len(t.slots) { // at most two-thirds full
		t.grow()
	}
	a, b := pack(w)
	mask := uint64(len(t.slots) - 1)
	for i := t.home(w); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.a == a && uint32(s.b) == uint32(b) {
			s.b = b | uint64(id)<<32
			return
		}
		if s.a == 0 {
			*s = wordSlot{a: a, b: b | uint64(id)<<32}
			t.n++
			return
		}
	}
}

// unpack writes the word of slot s to buf and returns it.
func (s *wordSlot) unpack(buf *[16]byte) []byte {
	binary.LittleEndian.PutUint64(buf[:8], s.a)
	binary.LittleEndian.PutUint32(buf[8:12], uint32(s.b))
	return buf[:wordLen(s.a, uint64(uint32(s.b)))]
}

// grow doubles the slots.
func (t *wordIDs) grow() {
	old := t.slots
	t.slots = make([]wordSlot, 2*len(old))
	mask := uint64(len(t.slots) - 1)
	var buf [16]byte
	for _, s := range old {
		if s.a == 0 {
			continue
		}
		for i := t.home(s.unpack(&buf)); ; i = (i + 1) & mask {
			if t.slots[i].a == 0 {
				t.slots[i] = s
				break
			}
		}
	}
}

// wordLen is the length of the packed word a, b: its bytes up to the
// first zero.
func wordLen(a, b uint64) int {
	n := 0
	for x := a; x != 0 && n < 8; x >>= 8 {
		n++
	}
	if n < 8 {
		return n
	}
	for x := b; x != 0 && n < 16; x >>= 8 {
		n++
	}
	return n
}

// len is the number of words with an id.
func (t *wordIDs) len() int { return t.n + len(t.long) }

// without returns a table of the same words but those drop says to drop.
func (t *wordIDs) without(drop func(id uint32) bool) *wordIDs {
	out := newWordIDs()
	out.seed = t.seed
	var buf [16]byte
	for i := range t.slots {
		s := &t.slots[i]
		if s.a == 0 || drop(uint32(s.b>>32)) {
			continue
		}
		out.set(s.unpack(&buf), uint32(s.b>>32))
	}
	for w, id := range t.long {
		if !drop(id) {
			out.long[w] = id
		}
	}
	return out
}
