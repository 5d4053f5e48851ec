package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/lazymem/lazymem/engine/embed"
)

// TestCacheWritesAfterFlights: an embedding's caller gets its vectors
// while their disk-tier write is still held (beforeWrite); meanwhile a
// lookup finds them as the disk's (c.unwritten), Forget's look-up (has)
// sees them, and a record forgotten then is gone from both tiers once the
// write ends; the rest reach Pebble and a reopened cache reads them.
func TestCacheWritesAfterFlights(t *testing.T) {
	emb, err := embed.NewHash(embed.HashOptions{Dim: 32})
	if err != nil {
		t.Fatal(err)
	}
	cfg := cacheConfig{fs: vfs.NewMem(), dir: "cache", emb: emb, memBytes: 1 << 20, timeout: time.Minute}
	c, err := newVecCache(cfg)
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}, 1), make(chan struct{})
	c.beforeWrite = func() {
		entered <- struct{}{}
		<-release
	}
	const n = 12
	texts, ns, keys, ids := make([]string, n), make([]string, n), make([]string, n), make([]uint64, n)
	for i := range texts {
		texts[i], ns[i], ids[i] = fmt.Sprintf("record %d on the release of service %d", i, i%5), "a", uint64(i+1)
		keys[i] = cacheKey(ns[i], texts[i])
	}
	onDisk := func(key string) bool { t.Helper(); return inPebble(t, c, key) }

	got := make(chan error, 1)
	go func() {
		vs, st, err := c.get(context.Background(), ns, texts, ids)
		if err == nil && (len(vs) != n || st.computed != n) {
			err = fmt.Errorf("%d vectors, %d computed", len(vs), st.computed)
		}
		got <- err
	}()
	<-entered // the write is held
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute): // a deadlock guard, not a timing
		t.Fatal("the embedding's caller waited for the disk-tier write")
	}
	if onDisk(keys[3]) {
		t.Fatal("the held write reached Pebble")
	}
	c.mem.Clear()
	vs, st, err := c.lookup(keys, ids)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if len(v) != 32 {
			t.Fatalf("vector %d not found while its write was held", i)
		}
	}
	if st.diskHits != n {
		t.Fatalf("%d of %d vectors counted as the disk tier's while written", st.diskHits, n)
	}
	if has, err := c.has(keys[0]); err != nil || !has {
		t.Fatalf("has of a vector being written: %v, %v", has, err)
	}

	// Forget record 1 while its write is held: drop waits for the write
	// (dropMu), then deletes what it wrote.
	dropped := make(chan error, 1)
	go func() { dropped <- c.drop(keys[:1], ids[:1]) }()
	close(release)
	if err := <-dropped; err != nil {
		t.Fatal(err)
	}
	c.settle()
	if has, err := c.has(keys[0]); err != nil || has {
		t.Fatalf("a forgotten record's vector is still cached: %v, %v", has, err)
	}
	for _, k := range keys[1:] {
		if !onDisk(k) {
			t.Fatal("a vector whose write was released is not in Pebble")
		}
	}
	if c.mu.Lock(); len(c.unwritten) != 0 {
		t.Errorf("%d vectors left unwritten after settle", len(c.unwritten))
	}
	c.mu.Unlock()
	if err := c.close(); err != nil {
		t.Fatal(err)
	}

	c, err = newVecCache(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	_, st, err = c.lookup(keys, ids)
	if err != nil {
		t.Fatal(err)
	}
	if st.diskHits != n-1 {
		t.Fatalf("reopened: %d of %d live vectors read from disk", st.diskHits, n-1)
	}
}

// inPebble reports whether the disk tier of c holds key (a cacheKey
// digest) in its Pebble, not counting c.unwritten.
func inPebble(t *testing.T, c *vecCache, key string) bool {
	t.Helper()
	c.diskMu.RLock()
	defer c.diskMu.RUnlock()
	_, closer, err := c.disk.Get(c.diskKey(nil, key))
	if errors.Is(err, pebble.ErrNotFound) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	closer.Close()
	return true
}
