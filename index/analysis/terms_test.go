package analysis

import (
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// TestCacheSlot: a slot is 32 bytes; the cache maps a surface to
// its term and TermKey (the prefix read from the surface or from the
// term) whether the term is the surface, a stem or a
// stopword, through the predecessor table after a reset, and not at all
// (but still correctly) for surfaces longer than a slot holds.
func TestCacheSlot(t *testing.T) {
	if n := unsafe.Sizeof(cacheSlot{}); n != 32 {
		t.Fatalf("cacheSlot is %d bytes, want 32", n)
	}
	long := strings.Repeat("x", slotKey+5)
	edge := strings.Repeat("7", slotKey)
	a, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for round := range 2 {
		for _, c := range []struct{ surface, term string }{
			{"pool", "pool"},
			{"connections", "connect"}, // a prefix of the surface
			{"happy", "happi"},         // not a prefix
			{"generalizations", "general"},
			{"数据", "数据"},
			{"the", ""},
			{edge, edge},
			{long, long},
		} {
			got, th, tl, ok := a.term([]byte(c.surface))
			k := TermKey{th, termKeyPrefix(got, []byte(c.surface), tl)}
			if got != c.term || ok != (c.term != "") || (ok && k != (TermKey{TermHash(c.term), TermPrefix(c.term)})) {
				t.Errorf("round %d: %q -> %q %v %x", round, c.surface, got, ok, k)
			}
		}
	}
	if _, _, _, ok := a.cache.get(maphashOf(a, edge), []byte(edge)); !ok {
		t.Errorf("a %d-byte surface is not cached", slotKey)
	}
	if _, _, _, ok := a.cache.get(maphashOf(a, long), []byte(long)); ok {
		t.Errorf("a %d-byte surface is cached", len(long))
	}
	for range 2 {
		if got := a.Terms("Connections happily pooled"); strings.Join(got, " ") != "connect happili pool" {
			t.Fatalf("terms %q", got)
		}
	}
}

// maphashOf analyses s once (caching it when it can be) and returns the
// cache's hash of it.
func maphashOf(a *Analyzer, s string) uint64 {
	a.term([]byte(s))
	return hashSurface(a, []byte(s))
}

// TestCachePredecessor: after a reset a word of the replaced table is
// found there and copied into the new one, with its term and hash.
func TestCachePredecessor(t *testing.T) {
	a := mustNew(t, Options{Stem: true, CacheSize: 16}) // 64 slots, reset at 48
	a.term([]byte("running"))
	old := a.cache.table.Load()
	for i := 0; a.cache.table.Load() == old; i++ {
		a.term([]byte("w" + strings.Repeat("a", i%20) + string(rune('a'+i%26)) + string(rune('a'+i/26%26))))
	}
	cur := a.cache.table.Load()
	h := hashSurface(a, []byte("running"))
	if cur.find(h, []byte("running")) >= 0 {
		t.Fatal("the new table already holds the word")
	}
	if got, th, tl, ok := a.term([]byte("running")); !ok || got != "run" || th != TermHash("run") || tl != 3 {
		t.Fatalf("running -> %q %v", got, ok)
	}
	if i := cur.find(h, []byte("running")); i < 0 || cur.terms[i] != "run" || cur.slots[i].th != TermHash("run") {
		t.Fatal("the word was not copied from the predecessor")
	}
}

// TestCacheConcurrent analyses the same words from several goroutines
// (for -race: a slot is read only once published).
func TestCacheConcurrent(t *testing.T) {
	a := mustNew(t, Options{Stem: true, Stopwords: true, CacheSize: 64})
	plain := mustNew(t, Options{Stem: true, Stopwords: true, CacheSize: -1})
	texts := make([]string, 64)
	for i := range texts {
		texts[i] = corpus(uint64(i+1), 40)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for r := range 20 {
				s := texts[(g*7+r)%len(texts)]
				got, hs := a.AppendTermsKeyed(nil, nil, s)
				want := plain.Terms(s)
				if strings.Join(got, " ") != strings.Join(want, " ") || len(hs) != len(got) {
					t.Errorf("goroutine %d: cached and uncached terms differ", g)
					return
				}
				for k := range got {
					if hs[k] != (TermKey{TermHash(got[k]), TermPrefix(got[k])}) {
						t.Errorf("hash of %q", got[k])
						return
					}
				}
			}
		})
	}
	wg.Wait()
}
