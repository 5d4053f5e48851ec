package segment

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
)

// wordIDs maps the vocabulary's words to their ids for the sealer, which
// looks up every word of every text it seals. A word of up to 16 bytes
// lives inline in its slot, zero-padded (a word has no zero byte, so the
// padding tells its length): a lookup reads one slot, where a Go map of
// strings reads its control group and then the key's bytes elsewhere, two
// cache misses on a vocabulary of tens of thousands of words (profile of
// the Zipf 200k ingest: the map's lookups were 0.83 s of the log seal's
// 1.84 s). Longer words (rare) are in a Go map.
//
// Not safe for concurrent use: the sealer's, under Log.sealMu.
type wordIDs struct {
	slots []wordSlot // open addressing, linear probing; a == 0: empty
	n     int        // words inline
	long  map[string]uint32
	seed  maphash.Seed
}

// wordSlot holds a word of up to 16 bytes as two little-endian words,
// zero-padded, and its id.
type wordSlot struct {
	a, b uint64
	id   uint32
}

// inlineWord is the longest word a slot holds.
const inlineWord = 16

func newWordIDs() *wordIDs {
	return &wordIDs{slots: make([]wordSlot, 1024), long: map[string]uint32{}, seed: maphash.MakeSeed()}
}

// pack returns w (at most 16 bytes) as a slot's two words.
func pack(w []byte) (a, b uint64) {
	var buf [inlineWord]byte
	copy(buf[:], w)
	return binary.LittleEndian.Uint64(buf[:8]), binary.LittleEndian.Uint64(buf[8:])
}

// home is the slot a packed word's probe starts at.
func (t *wordIDs) home(w []byte) uint64 {
	return maphash.Bytes(t.seed, w) & uint64(len(t.slots)-1)
}

// get returns w's id. w is a token (wordToken): no zero byte.
func (t *wordIDs) get(w []byte) (uint32, bool) {
	if len(w) > inlineWord {
		id, ok := t.long[string(w)]
		return id, ok
	}
	if len(w) == 0 {
		return 0, false
	}
	a, b := pack(w)
	mask := uint64(len(t.slots) - 1)
	for i := t.home(w); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.a == 0 {
			return 0, false
		}
		if s.a == a && s.b == b {
			return s.id, true
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
	if 2*(t.n+1) > len(t.slots) { // at most half full
		t.grow()
	}
	a, b := pack(w)
	mask := uint64(len(t.slots) - 1)
	for i := t.home(w); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.a == a && s.b == b {
			s.id = id
			return
		}
		if s.a == 0 {
			*s = wordSlot{a: a, b: b, id: id}
			t.n++
			return
		}
	}
}

// grow doubles the slots.
func (t *wordIDs) grow() {
	old := t.slots
	t.slots = make([]wordSlot, 2*len(old))
	mask := uint64(len(t.slots) - 1)
	var buf [inlineWord]byte
	for _, s := range old {
		if s.a == 0 {
			continue
		}
		binary.LittleEndian.PutUint64(buf[:8], s.a)
		binary.LittleEndian.PutUint64(buf[8:], s.b)
		w := buf[:wordLen(s.a, s.b)]
		for i := t.home(w); ; i = (i + 1) & mask {
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
	for x := b; x != 0 && n < inlineWord; x >>= 8 {
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
	var buf [inlineWord]byte
	for _, s := range t.slots {
		if s.a == 0 || drop(s.id) {
			continue
		}
		binary.LittleEndian.PutUint64(buf[:8], s.a)
		binary.LittleEndian.PutUint64(buf[8:], s.b)
		out.set(buf[:wordLen(s.a, s.b)], s.id)
	}
	for w, id := range t.long {
		if !drop(id) {
			out.long[w] = id
		}
	}
	return out
}
