package segment

import (
	"slices"
	"testing"
)

// FuzzDictIDs fuzzes the reader of a dictionary's record list ('z'
// values): it never panics, and what it accepts is strictly ascending and
// reads back the same after appendDictIDs writes it again.
func FuzzDictIDs(f *testing.F) {
	for _, ids := range [][]uint64{nil, {1}, {0, 5, 6, 1 << 40}, {7, 8, 9, 300, 70000}} {
		f.Add(appendDictIDs(nil, ids))
	}
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4, 5})
	f.Fuzz(func(t *testing.T, v []byte) {
		ids, err := parseDictIDs(v)
		if err != nil {
			return
		}
		for i := 1; i < len(ids); i++ {
			if ids[i] <= ids[i-1] {
				t.Fatalf("accepted ids out of order: %v", ids)
			}
		}
		again, err := parseDictIDs(appendDictIDs(nil, ids))
		if err != nil || !slices.Equal(again, ids) {
			t.Fatalf("%v written again reads %v (%v)", ids, again, err)
		}
	})
}

// TestDictIDsDamaged: a list with a changed byte, cut short or with bytes
// after it is refused, never read as other ids.
func TestDictIDsDamaged(t *testing.T) {
	v := appendDictIDs(nil, []uint64{3, 9, 1000})
	for i := range v {
		b := slices.Clone(v)
		b[i] ^= 0x40
		if ids, err := parseDictIDs(b); err == nil {
			t.Errorf("byte %d changed: read %v, want an error", i, ids)
		}
	}
	if ids, err := parseDictIDs(v[:len(v)-1]); err == nil {
		t.Errorf("cut short: read %v, want an error", ids)
	}
	if ids, err := parseDictIDs(append(slices.Clone(v), 0)); err == nil {
		t.Errorf("a byte after it: read %v, want an error", ids)
	}
}
