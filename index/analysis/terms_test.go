package analysis

import (
	"strings"
	"testing"
	"unsafe"
)

// TestCacheEntry: an entry is one 64-byte line and maps its surface to its
// term whether they fit inline, share bytes, or live on the heap.
func TestCacheEntry(t *testing.T) {
	if n := unsafe.Sizeof(cacheEntry{}); n != 64 {
		t.Fatalf("cacheEntry is %d bytes, want 64", n)
	}
	long := strings.Repeat("x", entryInline+5)
	for _, c := range []struct{ surface, term string }{
		{"pool", "pool"},                  // term == surface
		{"connections", "connect"},        // a prefix
		{"happy", "happi"},                // inline after the surface
		{"the", ""},                       // stopword
		{"abcdefghijklmnopqrstuvw", "zz"}, // does not fit after the surface
		{long, long},                      // surface too long to inline
		{long, "short"},
	} {
		e := newCacheEntry(42, []byte(c.surface), c.term)
		if e.key != c.surface || e.term != c.term || e.hash != 42 {
			t.Errorf("%q -> %q: entry has %q -> %q", c.surface, c.term, e.key, e.term)
		}
	}
	// A hit returns the cached term, a miss nothing.
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if got := a.Terms("Connections happily pooled"); strings.Join(got, " ") != "connect happili pool" {
			t.Fatalf("terms %q", got)
		}
	}
}
