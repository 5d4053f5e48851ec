package engine

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/cockroachdb/errors/oserror"
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/lazymem/lazymem/segment"
)

// The embedding cache's side of forgetting: dropping vectors, proving that
// no byte of a forgotten text's vector is left in the disk tier's files
// (purge), and the archive of obsolete Pebble files. The cache itself is
// in cache.go.

// forgetting makes the cache refuse, from now on, to store a vector of the
// records ids (c.dropped): Forget calls it before it looks up which of
// their keys the cache holds, so that an embedding still running for one
// of them (a recall's, the working memory's) cannot add a key after that
// look-up. A store in progress finishes first (the write lock), and the
// look-up then sees it. Should the Forget then fail, the records keep
// working, only without cached vectors until the next Open.
func (c *vecCache) forgetting(ids []uint64) {
	c.dropMu.Lock()
	defer c.dropMu.Unlock()
	for _, id := range ids {
		if id <= math.MaxUint32 {
			c.dropped.Add(uint32(id))
		}
	}
}

// drop removes the vectors of keys (cacheKey digests) from both tiers and
// the memory tier's entries of the records ids, which it refuses to store
// again (forgetting: a Forget replayed at Open did not call it). The bytes
// leave Pebble's files at the next purge.
func (c *vecCache) drop(keys []string, ids []uint64) error {
	c.forgetting(ids)
	// A vector waiting for its disk write (writeDisk) is no longer found;
	// its write, if it runs after forgetting, skips a dropped record's.
	c.mu.Lock()
	for _, k := range keys {
		delete(c.unwritten, k)
	}
	c.mu.Unlock()
	err := c.dropDisk(keys) // a failed Forget is finished at the next Open
	// Memory last, under the write lock: a find that read a key from disk
	// before dropDisk and puts it in memory (under the read lock) has
	// done so by then.
	if c.mem != nil {
		c.dropMu.Lock()
		defer c.dropMu.Unlock()
		for _, id := range ids {
			c.mem.Del(idKey(id))
		}
		for _, k := range keys {
			c.mem.Del(k)
		}
		c.mem.Wait()
	}
	return err
}

// dropDisk deletes keys from the disk tier.
func (c *vecCache) dropDisk(keys []string) error {
	if c.dir == "" || len(keys) == 0 {
		return nil
	}
	c.diskMu.RLock()
	defer c.diskMu.RUnlock()
	// A forgotten text's vectors must leave the disk: not while the tier
	// takes no writes (the Forget fails, and is finished at the next open).
	if err := c.diskUnavailable(); err != nil {
		return err
	}
	// The vectors go to an sstable first, so that the deletions below
	// overlap them and the purge's compaction rewrites both (see purge).
	if err := c.park.Call(c.disk.Flush); err != nil {
		return err
	}
	b := c.disk.NewBatch()
	defer c.closeBatch(b)
	for _, k := range keys {
		// Every embedder's vector of the text; only keys that exist: a
		// deletion of nothing would overlap no file and outlive every
		// compaction (see purge).
		lo := append([]byte(cacheKeyPrefix), k...)
		hi := append(append([]byte(nil), lo...), 0xff)
		it, err := c.disk.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
		if err != nil {
			return err
		}
		for ok := it.First(); ok; ok = it.Next() {
			if err := b.Delete(it.Key(), nil); err != nil {
				_ = it.Close()
				return err
			}
		}
		if err := errors.Join(it.Error(), it.Close()); err != nil {
			return err
		}
	}
	if b.Empty() {
		return nil
	}
	if err := c.park.Call(func() error { return b.Commit(pebble.Sync) }); err != nil {
		return err
	}
	if p := c.fatal.Load(); p != nil {
		return fmt.Errorf("lazymem: engine: embedding cache: delete: %w", *p) // Commit returned nil
	}
	return nil
}

// has reports whether either tier holds a vector under key (of any
// embedder, on disk).
func (c *vecCache) has(key string) (bool, error) {
	if c.mem != nil {
		if _, ok := c.mem.Get(key); ok {
			return true, nil
		}
	}
	c.mu.Lock()
	_, unwritten := c.unwritten[key]
	c.mu.Unlock()
	if unwritten {
		return true, nil
	}
	c.diskMu.RLock()
	defer c.diskMu.RUnlock()
	if c.disk == nil {
		return false, c.diskUnavailable()
	}
	lo := append([]byte(cacheKeyPrefix), key...)
	it, err := c.disk.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: append(append([]byte(nil), lo...), 0xff)})
	if err != nil {
		return false, err
	}
	found := it.First()
	return found, errors.Join(it.Error(), it.Close())
}

// purge makes the deleted entries leave the files: it deletes every
// unnamespaced "v1/" entry (they may hold a forgotten text's vector and
// are never read), flushes the memtable (a new WAL; the old one is
// deleted, not recycled: see newVecCache) and compacts everything, so the
// sstables that held deleted entries are rewritten and removed.
func (c *vecCache) purge(ctx context.Context) error {
	if c.dir == "" {
		return nil
	}
	c.diskMu.RLock()
	defer c.diskMu.RUnlock()
	if err := c.diskUnavailable(); err != nil {
		return err
	}
	it, err := c.disk.NewIter(&pebble.IterOptions{LowerBound: []byte(cacheKeyV1), UpperBound: []byte("v10")})
	if err != nil {
		return err
	}
	v1 := it.First()
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return err
	}
	if v1 { // a range deletion over nothing would outlive the compaction
		if err := c.park.Call(func() error { return c.disk.DeleteRange([]byte(cacheKeyV1), []byte("v10"), pebble.Sync) }); err != nil {
			return err
		}
	}
	if err := c.park.Call(c.disk.Flush); err != nil {
		return err
	}
	if err := c.park.Call(func() error { return c.disk.Compact(ctx, []byte{0}, []byte{0xff}, true) }); err != nil {
		return err
	}
	// Pebble moves a file that overlaps nothing below it down without
	// rewriting it; a file of deletions alone would keep the deleted keys.
	// drop flushes the vectors before deleting them so that the deletions
	// always overlap them; check, and compact again if a concurrent Forget
	// added deletions meanwhile.
	for try := 0; ; try++ {
		n, name, err := c.deletionsLeft()
		if err != nil || n == 0 {
			if err != nil {
				return err
			}
			break
		}
		if try == 3 {
			return fmt.Errorf("%w: embedding cache: sstable %s still holds %d deletions after compaction", ErrPurge, name, n)
		}
		if err := c.park.Call(func() error { return c.disk.Compact(ctx, []byte{0}, []byte{0xff}, true) }); err != nil {
			return err
		}
	}
	return c.park.Call(func() error { return segment.WaitPurged(ctx, c.disk, c.fs, c.dir, purgeTimeout) })
}

// reopen closes and opens the disk tier again and makes Pebble start a
// new MANIFEST (a snapshot of the live files) and delete the old one, which lists the smallest
// and largest key of every sstable it ever held: a forgotten text's key
// may be one. The caller guarantees no lookup runs meanwhile.
func (c *vecCache) reopen(ctx context.Context) error {
	if c.dir == "" {
		return nil
	}
	c.diskMu.Lock()
	defer c.diskMu.Unlock()
	if err := c.diskUnavailable(); err != nil {
		return err
	}
	// Pebble starts a new MANIFEST at the first version edit after Open
	// (here a flush of a marker key) and keeps one previous MANIFEST
	// (NumPrevManifest cannot be 0): two rounds retire the one that named
	// the removed files.
	for range 2 {
		if err := c.park.Call(c.disk.Close); err != nil {
			if segment.Parked(err) {
				c.disk = nil // never closes: no reads of it
			}
			return err
		}
		d, err := c.openDisk(c.dir)
		if err != nil {
			c.disk = nil
			return err
		}
		c.disk = d
		if err := c.park.Call(func() error { return d.Set([]byte(cachePurgeKey), nil, pebble.NoSync) }); err != nil {
			return err
		}
		if err := c.park.Call(d.Flush); err != nil {
			return err
		}
	}
	return c.park.Call(func() error { return segment.WaitPurged(ctx, c.disk, c.fs, c.dir, purgeTimeout) })
}

// deletionsLeft returns the deletions the cache's sstables hold and one
// file holding some.
func (c *vecCache) deletionsLeft() (uint64, string, error) {
	var tabs [][]pebble.SSTableInfo
	err := c.park.Call(func() (err error) { tabs, err = c.disk.SSTables(pebble.WithProperties()); return err })
	if err != nil {
		return 0, "", err
	}
	var n uint64
	name := ""
	for _, level := range tabs {
		for _, t := range level {
			if t.Properties.NumDeletions > 0 {
				n += t.Properties.NumDeletions
				name = t.FileNum.String()
			}
		}
	}
	return n, name, nil
}

// unarchive removes a file Pebble's archive cleaner just moved from path
// into dir/archive. The archive cleaner is used only because it turns off
// Pebble's recycling of obsolete WAL files (a recycled WAL keeps the old
// bytes of deleted, forgotten, entries until they are overwritten); the
// archived copies are deleted as soon as Pebble reports them.
func unarchive(fs vfs.FS, path string, onErr func(error)) {
	a := fs.PathJoin(fs.PathDir(path), "archive", fs.PathBase(path))
	if err := fs.Remove(a); err != nil && !oserror.IsNotExist(err) {
		onErr(fmt.Errorf("lazymem: engine: embedding cache: remove %s: %w", a, err))
	}
}

// purgeArchive empties dir/archive (files archived while no listener ran:
// a crash between the archiving and the event).
func purgeArchive(fs vfs.FS, dir string) error {
	adir := fs.PathJoin(dir, "archive")
	names, err := fs.List(adir)
	if err != nil {
		if oserror.IsNotExist(err) {
			return nil
		}
		return err
	}
	for _, n := range names {
		if err := fs.Remove(fs.PathJoin(adir, n)); err != nil && !oserror.IsNotExist(err) {
			return err
		}
	}
	return nil
}

// clear empties both tiers (benchmarks of a cold cache).
func (c *vecCache) clear() error {
	c.settle()
	if c.mem != nil {
		c.mem.Clear()
	}
	c.diskMu.RLock()
	defer c.diskMu.RUnlock()
	if c.disk != nil {
		return c.park.Call(func() error { return c.disk.DeleteRange([]byte(cacheKeyPrefix), []byte("v20"), pebble.NoSync) })
	}
	return nil
}
