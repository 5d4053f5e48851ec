package index

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

// TestTermTable checks the mutable segment's term table against a map:
// slots in insertion order, short and long terms (past the inline prefix),
// terms sharing a prefix, terms told from a shorter one only by the
// length (trailing zero bytes), the empty term, growth from the smallest size,
// and forced hash collisions (every term given one of four hashes).
func TestTermTable(t *testing.T) {
	for _, hash := range []struct {
		name string
		fn   func(string) uint64
	}{
		{"maphash", termHash},
		{"collide", func(s string) uint64 { return uint64(len(s) % 4) }},
		{"same-tag", func(s string) uint64 { return termHash(s) & 0xffffffff }}, // equal tags, by length
	} {
		t.Run(hash.name, func(t *testing.T) {
			tt := newTermTable(0)
			tt.rehash = hash.fn
			want := map[string]int32{}
			var terms []string
			for i := range 3000 {
				var s string
				switch i % 6 {
				case 0:
					s = fmt.Sprintf("w%d", i)
				case 1:
					s = strings.Repeat("x", 15) + fmt.Sprint(i) // crosses the 16-byte prefix
				case 2:
					s = strings.Repeat("prefix", 4) + fmt.Sprint(i%7) // long, shared prefix, repeats
				case 3:
					s = fmt.Sprint(i % 11) // repeats
				case 4:
					s = fmt.Sprintf("w%d\x00", i%20) // the zero padding of a shorter term's prefix
				default:
					s = ""
				}
				terms = append(terms, s)
			}
			for _, s := range terms {
				buf := []byte(s) // the table must copy the caller's term
				k, added := tt.findOrAdd(string(buf), hash.fn(s), termPre(s), int32(tt.len()))
				clear(buf)
				w, ok := want[s]
				if ok == added || (ok && k != w) {
					t.Fatalf("%q: slot %d added %v, want slot %d known %v", s, k, added, w, ok)
				}
				if !ok {
					if int(k) != len(want) {
						t.Fatalf("%q: new slot %d, want %d", s, k, len(want))
					}
					want[s] = k
				}
			}
			if tt.len() != len(want) {
				t.Fatalf("len %d, want %d", tt.len(), len(want))
			}
			for s, w := range want {
				if k, ok := tt.find(s, hash.fn(s)); !ok || k != w {
					t.Fatalf("find %q: %d %v, want %d", s, k, ok, w)
				}
				if got := tt.key(int(w)); got != s {
					t.Fatalf("key(%d) = %q, want %q", w, got, s)
				}
			}
			for _, s := range []string{"w1", strings.Repeat("x", 15) + "0", strings.Repeat("prefix", 4) + "9", "absent"} {
				if k, ok := tt.find(s, hash.fn(s)); ok {
					t.Fatalf("find %q: slot %d of a term never added", s, k)
				}
			}
		})
	}
}

// TestChunkTable checks the chunk's term ids against a map over several
// chunks (reset, growth within a chunk, forced hash
// collisions), as analyze uses the table.
func TestChunkTable(t *testing.T) {
	var ct chunkTable
	for chunk := range 5 {
		ct.reset()
		collide := chunk%2 == 1
		hash := func(s string) uint64 {
			if collide {
				return uint64(len(s))
			}
			return termHash(s)
		}
		var uterms []string
		var uhash []uint64
		want := map[string]int32{}
		n := 100 + 1500*chunk // past the first table's size from chunk 1 on
		for i := range n {
			s := fmt.Sprintf("c%d-t%d", chunk, i%(n/2+1))
			id, added := ct.findOrAdd(s, hash(s), uterms, uhash)
			w, ok := want[s]
			if ok == added || (ok && id != w) {
				t.Fatalf("chunk %d %q: id %d added %v, want %d known %v", chunk, s, id, added, w, ok)
			}
			if added {
				want[s] = id
				uterms = append(uterms, s)
				uhash = append(uhash, hash(s))
			}
		}
		for s, w := range want {
			if id := ct.find(s, hash(s), uterms); id != w {
				t.Fatalf("chunk %d find %q: %d, want %d", chunk, s, id, w)
			}
		}
		if chunk > 0 {
			s := fmt.Sprintf("c%d-t0", chunk-1) // the previous chunk's
			if id := ct.find(s, hash(s), uterms); id >= 0 {
				t.Fatalf("chunk %d: %q of the previous chunk found as %d", chunk, s, id)
			}
		}
	}
}

// TestMemTermLine: a memTerm fills one cache line (see its comment).
func TestMemTermLine(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the layout is for 64-bit platforms")
	}
	if n := unsafe.Sizeof(memTerm{}); n != 64 {
		t.Fatalf("memTerm is %d bytes, want 64", n)
	}
	// No pointer: the collector does not scan the slab.
	rt := reflect.TypeFor[memTerm]()
	for i := range rt.NumField() {
		switch k := rt.Field(i).Type.Kind(); k {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.String, reflect.Interface, reflect.Func, reflect.Chan, reflect.UnsafePointer:
			t.Fatalf("memTerm.%s is a %v: the slab would be scanned", rt.Field(i).Name, k)
		}
	}
	var s memSlab
	s.alloc()
	if a := uintptr(unsafe.Pointer(s.at(0))); a%64 != 0 {
		t.Fatalf("slab chunk at %#x: not 64-byte aligned", a)
	}
}
