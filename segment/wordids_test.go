package segment

import (
	"math/rand/v2"
	"testing"
)

// TestWordIDs checks the sealer's word table against a Go map: words of
// 1 to 32 bytes (inline up to 12, and longer), ids reassigned, the
// table grown many times, then a copy without the odd ids.
func TestWordIDs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := newWordIDs()
	ref := map[string]uint32{}
	word := func() []byte {
		w := make([]byte, 1+rng.IntN(32))
		for i := range w {
			w[i] = "abcdefghijklmnopqrstuvwxyz0123456789\xe4\xb8\xad"[rng.IntN(39)]
		}
		return w
	}
	var all [][]byte
	for i := range 50000 {
		w := word()
		if i%7 == 0 && len(all) > 0 { // an id given again
			w = all[rng.IntN(len(all))]
		}
		all = append(all, w)
		t0.set(w, uint32(i))
		ref[string(w)] = uint32(i)
	}
	check := func(tab *wordIDs, ref map[string]uint32) {
		t.Helper()
		if tab.len() != len(ref) {
			t.Fatalf("%d words, want %d", tab.len(), len(ref))
		}
		for w, id := range ref {
			if got, ok := tab.get([]byte(w)); !ok || got != id {
				t.Fatalf("%q: %d %v, want %d", w, got, ok, id)
			}
		}
		for range 20000 {
			w := word()
			id, ok := ref[string(w)]
			if got, gok := tab.get(w); gok != ok || got != id {
				t.Fatalf("%q: %d %v, want %d %v", w, got, gok, id, ok)
			}
		}
		for _, w := range [][]byte{nil, []byte("\x00")} {
			if _, ok := tab.get(w); ok {
				t.Fatalf("%q found", w)
			}
		}
	}
	check(t0, ref)
	odd := func(id uint32) bool { return id%2 == 1 }
	t1 := t0.without(odd)
	for w, id := range ref {
		if odd(id) {
			delete(ref, w)
		}
	}
	check(t1, ref)
	// A word with a zero byte (no token has one) has an id no lookup of a
	// shorter word finds.
	t1.set([]byte("ab\x00"), 7)
	if id, ok := t1.get([]byte("ab")); ok && id == 7 {
		t.Fatal(`"ab" took the id of "ab\x00"`)
	}
}
