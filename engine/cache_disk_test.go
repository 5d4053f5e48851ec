package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/lazymem/lazymem/engine/embed"
	"github.com/lazymem/lazymem/internal/faultfs"
)

// TestCacheDiskFull fills the disk under the embedding cache's disk tier
// while recalls keep embedding new texts (enough to fill several WAL
// blocks: before, Pebble kept the failed WAL write's error, reported it as
// a fatal commit error once a block filled, and then blocked every later
// commit; Close failed with it). Every lookup still returns its vectors,
// kept in memory only (DiskSkipped), the full disk is a background error
// and DiskError says it; vectors stored before stay readable from disk.
// When space returns the tier is opened again (DiskReopens) without
// reopening the cache, new vectors reach the disk again, Close succeeds,
// and a cache opened on the same files reads the vectors flushed before
// the disk filled and those written after it emptied.
func TestCacheDiskFull(t *testing.T) {
	defer func(d time.Duration) { cacheRetryEvery = d }(cacheRetryEvery)
	cacheRetryEvery = 0
	disk := &faultfs.FullDisk{}
	mem := vfs.NewMem()
	fs := errorfs.Wrap(mem, disk)
	emb, err := embed.NewHash(embed.HashOptions{Dim: 32})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var bgErrs []error
	onErr := func(err error) { mu.Lock(); bgErrs = append(bgErrs, err); mu.Unlock() }
	cfg := cacheConfig{fs: fs, dir: "cache", emb: emb, memBytes: 1 << 20, timeout: time.Minute, onErr: onErr}
	c, err := newVecCache(cfg)
	if err != nil {
		t.Fatal(err)
	}
	texts := func(prefix string, n int) []string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprintf("%s text %d about the deploy of service %d", prefix, i, i%13)
		}
		return s
	}
	get := func(ts []string) lookupStats {
		t.Helper()
		ns := make([]string, len(ts))
		for i := range ns {
			ns[i] = "a"
		}
		vs, st, err := c.get(context.Background(), ns, ts, nil)
		if err != nil {
			t.Fatalf("lookup: %v", err)
		}
		c.settle() // the disk writes done: onDisk reads the tier's Pebble itself
		for i, v := range vs {
			if len(v) != 32 {
				t.Fatalf("text %d: vector of %d dims", i, len(v))
			}
		}
		return st
	}
	onDisk := func(text string) bool { t.Helper(); return inPebble(t, c, cacheKey("a", text)) }

	before := texts("before", 50)
	get(before)
	if !onDisk(before[7]) {
		t.Fatal("a vector computed before the disk filled is not on disk")
	}
	// In an sstable: the WAL's unsynced tail is lost with the full disk
	// (the cache is derived data; lost vectors are computed again).
	if err := c.disk.Flush(); err != nil {
		t.Fatal(err)
	}

	disk.On.Store(true)
	for r := range 40 { // 4000 vectors of 128 bytes: several 32 KiB WAL blocks
		get(texts(fmt.Sprintf("full-%d", r), 100))
	}
	m := c.metrics()
	if m.DiskError == "" || m.DiskSkipped == 0 {
		t.Fatalf("after a full disk: DiskError %q, DiskSkipped %d", m.DiskError, m.DiskSkipped)
	}
	mu.Lock()
	reported := len(bgErrs) > 0 && errors.Is(bgErrs[0], syscall.ENOSPC)
	mu.Unlock()
	if !reported {
		t.Fatalf("the full disk was not a background error: %v", bgErrs)
	}
	c.mem.Clear()
	if st := get(before); st.diskHits != len(before) {
		t.Fatalf("on a full disk %d of %d earlier vectors came from disk", st.diskHits, len(before))
	}

	disk.On.Store(false)
	after := texts("after", 20)
	for try := 0; c.metrics().DiskReopens == 0; try++ {
		if try == 1000 {
			t.Fatalf("the disk tier did not reopen after space returned: %+v", c.metrics())
		}
		get(texts(fmt.Sprintf("retry-%d", try), 1))
	}
	get(after)
	if m := c.metrics(); m.DiskError != "" {
		t.Fatalf("after space returned: DiskError %q", m.DiskError)
	}
	if !onDisk(after[3]) {
		t.Fatal("a vector computed after space returned is not on disk")
	}
	if err := c.close(); err != nil {
		t.Fatalf("close after the full disk: %v", err)
	}

	c, err = newVecCache(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	if c.diskReset != "" {
		t.Fatalf("the disk tier was emptied at open: %s", c.diskReset)
	}
	if st := get(append(append([]string(nil), before...), after...)); st.diskHits != len(before)+len(after) {
		t.Fatalf("reopened: %d of %d vectors from disk", st.diskHits, len(before)+len(after))
	}
}
