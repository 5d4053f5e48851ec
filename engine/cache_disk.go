package engine

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/lazymem/lazymem/segment"
)

// The embedding cache's disk tier on a full disk. The tier is derived data
// and its writes are not synced, so Pebble learns of a failed WAL write
// late (in its background flusher), keeps the error, and reports it only
// when a later commit fills a WAL block ("fatal commit error"), after
// which every commit on that DB blocks, or at Close. So the cache watches
// its files itself (diskFS): the first write that fails for want of space
// stops the disk tier's writes. Vectors are then kept in memory only
// (CacheMetrics.DiskSkipped counts them) and lookups still read the disk
// tier. Once the disk has room again (checked at most every
// cacheRetryEvery, by the next vector to store), the tier is closed,
// dropping its failed WAL writer, and opened again. What the failed WAL
// held was never synced; the vectors are computed again when needed.

// cacheRetryEvery is how often a disk tier stopped by a full disk tries to
// open again. A variable for tests.
var cacheRetryEvery = time.Second

// cacheMinFree is the free space below which the disk tier stores nothing
// (when the filesystem reports its usage): a full disk is then never
// reached by the cache's own writes, and the space stays for the log.
const cacheMinFree = 64 << 20

// diskFS is the filesystem the disk tier's Pebble sees: a write, sync or
// preallocation that fails for want of space calls full.
type diskFS struct {
	vfs.FS
	full func(error)
}

func (fs diskFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	if err != nil {
		fs.check(err)
		return nil, err
	}
	return diskFile{File: f, fs: fs}, nil
}

func (fs diskFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	if err != nil {
		fs.check(err)
		return nil, err
	}
	return diskFile{File: f, fs: fs}, nil
}

func (fs diskFS) MkdirAll(dir string, perm os.FileMode) error {
	err := fs.FS.MkdirAll(dir, perm)
	fs.check(err)
	return err
}

func (fs diskFS) check(err error) {
	if err != nil && (errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)) {
		fs.full(err)
	}
}

type diskFile struct {
	vfs.File
	fs diskFS
}

func (f diskFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.fs.check(err)
	return n, err
}

func (f diskFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	f.fs.check(err)
	return n, err
}

func (f diskFile) Preallocate(off, n int64) error {
	err := f.File.Preallocate(off, n)
	f.fs.check(err)
	return err
}

func (f diskFile) Sync() error {
	err := f.File.Sync()
	f.fs.check(err)
	return err
}

func (f diskFile) SyncData() error {
	err := f.File.SyncData()
	f.fs.check(err)
	return err
}

func (f diskFile) SyncTo(length int64) (bool, error) {
	full, err := f.File.SyncTo(length)
	f.fs.check(err)
	return full, err
}

// diskFull stops the disk tier's writes (see above); the first report is
// a background error.
func (c *vecCache) diskFull(err error) {
	if c.diskErr.CompareAndSwap(nil, &err) {
		c.lastTry.Store(time.Now().UnixNano())
		c.onErr(fmt.Errorf("lazymem: engine: embedding cache: disk full, vectors kept in memory only until space returns: %w", err))
	}
}

// openDisk opens the disk tier with c.popts, telling the logger that an
// Open is running (a fatal report then always returns: Open fails).
func (c *vecCache) openDisk(dir string) (*pebble.DB, error) {
	c.opening.Store(true)
	defer c.opening.Store(false)
	// Watched: a WAL replayed on a disk failing MANIFEST writes would
	// hang pebble.Open (segment.OpenWatch).
	c.watch.Dir, c.watch.Park = dir, &c.park
	c.watch.Fatal = func() error {
		if p := c.fatal.Load(); p != nil {
			return *p
		}
		return nil
	}
	return c.watch.Open(func() (*pebble.DB, error) { return pebble.Open(dir, c.popts) })
}

// onFatal records the first fatal report of the disk tier's Pebble and
// counts every one as a background error. A fatal report for want of
// space stops the tier's writes, as diskFS does.
func (c *vecCache) onFatal(err error) {
	c.fatal.CompareAndSwap(nil, &err)
	c.park.Note(err)
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		c.diskFull(err)
	}
	if c.onErr != nil {
		c.onErr(fmt.Errorf("lazymem: engine: embedding cache: %w", err))
	}
}

// parked reports whether a Pebble goroutine of the disk tier is parked in
// the logger (segment.Parked): closing the DB would wait for it forever.
func (c *vecCache) parked() bool { return c.park.Err() != nil }

// closeBatch closes b unless a goroutine of the disk tier is parked: a
// commit of b that c.park.Call left behind may still use it.
func (c *vecCache) closeBatch(b *pebble.Batch) {
	if !c.parked() {
		_ = b.Close()
	}
}

// writableDisk returns the disk tier for a write of n vectors with
// c.diskMu held shared (the caller releases it), or nil when the tier
// takes no writes now: none, stopped by a full disk (it is opened again
// first if the disk has room), or too little free space. A nil return
// counts n skipped vectors.
func (c *vecCache) writableDisk(n int) *pebble.DB {
	if c.dir == "" {
		return nil
	}
	if c.diskErr.Load() != nil {
		c.recoverDisk()
	}
	c.diskMu.RLock()
	if c.disk == nil || c.diskErr.Load() != nil || c.fatal.Load() != nil || c.parked() || !c.roomOnDisk() {
		c.diskMu.RUnlock()
		c.diskSkipped.Add(uint64(n))
		return nil
	}
	return c.disk
}

// roomOnDisk reports whether the disk has cacheMinFree free (yes when the
// filesystem does not say).
func (c *vecCache) roomOnDisk() bool {
	u, err := c.fs.GetDiskUsage(c.dir)
	return err != nil || u.AvailBytes >= cacheMinFree
}

// probe writes and syncs a file of 64 KiB in the tier's directory and
// removes it: whether the disk takes writes again, before the tier is
// closed (a reopen that failed would leave it unreadable too).
func (c *vecCache) probe() bool {
	name := c.fs.PathJoin(c.dir, "SPACE-PROBE")
	f, err := c.fs.Create(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		return false
	}
	_, err = f.Write(make([]byte, 64<<10))
	if err == nil {
		err = f.Sync()
	}
	err = errors.Join(err, f.Close(), c.fs.Remove(name))
	return err == nil
}

// recoverDisk closes and opens the disk tier again after a full disk, at
// most every cacheRetryEvery and once the disk has room. A parked tier
// cannot be closed: it stays memory-only until the process restarts.
func (c *vecCache) recoverDisk() {
	now := time.Now().UnixNano()
	last := c.lastTry.Load()
	if now-last < int64(cacheRetryEvery) || !c.lastTry.CompareAndSwap(last, now) || c.parked() || !c.roomOnDisk() || !c.probe() {
		return
	}
	c.diskMu.Lock()
	defer c.diskMu.Unlock()
	if c.diskErr.Load() == nil {
		return
	}
	if c.disk != nil {
		// Fails with the WAL writer's error: what it held was never synced.
		// Parked meanwhile, it never closes: the tier stays off.
		err := c.park.Call(c.disk.Close)
		c.disk = nil
		if segment.Parked(err) {
			return
		}
	}
	c.fatal.Store(nil)
	c.diskErr.Store(nil)
	d, err := c.openDisk(c.dir)
	if err != nil {
		c.fatal.Store(nil)
		c.diskFull(fmt.Errorf("reopen: %w", err))
		return
	}
	if ferr := c.fatal.Load(); ferr != nil || c.diskErr.Load() != nil {
		_ = d.Close()
		if ferr != nil {
			c.diskFull(*ferr)
		}
		c.fatal.Store(nil)
		return
	}
	c.disk = d
	c.diskReopens.Add(1)
}

// diskUnavailable is the error of an operation that must reach the disk
// tier (forgetting, purging) while it is stopped by a full disk.
func (c *vecCache) diskUnavailable() error {
	if err := c.park.Err(); err != nil {
		return fmt.Errorf("lazymem: engine: embedding cache: the disk tier takes no writes until the process restarts: %w", err)
	}
	if p := c.diskErr.Load(); p != nil {
		return fmt.Errorf("lazymem: engine: embedding cache: the disk tier takes no writes until space returns: %w", *p)
	}
	if c.dir != "" && c.disk == nil {
		return errors.New("lazymem: engine: embedding cache: the disk tier is closed")
	}
	return nil
}

// checkpoint copies the disk tier into dir (a backup). A tier stopped by a
// full disk, or closed, is not copied: the copy opens with an empty cache.
func (c *vecCache) checkpoint(dir string) error {
	c.diskMu.RLock()
	defer c.diskMu.RUnlock()
	if c.disk == nil || c.diskErr.Load() != nil || c.parked() {
		return nil
	}
	return c.park.Call(func() error { return c.disk.Checkpoint(dir) })
}

// backoff slows Pebble's retries of a flush or compaction that failed for
// want of space (Pebble retries at once, and the listener runs in its
// loop) and stops the tier's writes.
func (c *vecCache) backoff(err error) {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		c.diskFull(err)
		time.Sleep(100 * time.Millisecond)
	}
}

// cacheWriters bounds the disk-tier writes that run in the background at
// once; past it the embedding's own goroutine writes (a disk slower than
// the embedder then slows the recalls that embed, instead of piling up
// goroutines and vectors).
const cacheWriters = 4

// writeDisk stores in the disk tier the vectors of the flights fs, whose
// waiters already have them, under keys; ids[j] is fs[j]'s record (0:
// not a record's). It runs after the flights complete because a recall
// need not wait for it: the cold recall of a new process at 1M records
// spent ~0.5 ms of its ~1.1 ms embedding stage in this batch's commit (a
// WAL write and a memtable's fresh pages), after an Embed of ~0.5 ms
// (docs/benchmarks/cold.md, thirteenth pass). Until the batch is written
// the vectors are in c.unwritten, which lookups read as part of the disk
// tier (find, has): what a lookup finds does not depend on the write's
// timing. A failed write is a background error (c.onErr), its vectors
// counted as skipped: the cache is derived data, and the recall that
// embedded them has its answer.
func (c *vecCache) writeDisk(keys []string, ids []uint64, fs []*flight) {
	select {
	case c.writers <- struct{}{}:
		c.writes.Add(1)
		go func() {
			defer c.writes.Done()
			c.storeDisk(keys, ids, fs)
			<-c.writers
		}()
	default:
		c.storeDisk(keys, ids, fs)
	}
}

// unwrittenVec is a vector waiting for its disk-tier write, and its
// record (0: not a record's).
type unwrittenVec struct {
	vec []float32
	id  uint64
}

// storeDisk writes the vectors of fs under keys in one batch (unless the
// tier takes no writes now, or Forget dropped the record: under dropMu
// held shared, as drop expects of a store), then removes them from
// c.unwritten.
func (c *vecCache) storeDisk(keys []string, ids []uint64, fs []*flight) {
	defer func() {
		c.mu.Lock()
		for j, f := range fs {
			if u, ok := c.unwritten[keys[j]]; ok && &u.vec[0] == &f.vec[0] {
				delete(c.unwritten, keys[j])
			}
		}
		c.mu.Unlock()
	}()
	c.dropMu.RLock()
	defer c.dropMu.RUnlock()
	disk := c.writableDisk(len(keys))
	if disk == nil {
		return
	}
	defer c.diskMu.RUnlock()
	batch := disk.NewBatch()
	defer c.closeBatch(batch)
	var kb, vb []byte
	for j, f := range fs {
		if c.isDropped(ids[j]) {
			continue
		}
		kb = c.diskKey(kb[:0], keys[j])
		vb = encodeVec(vb[:0], f.vec)
		if err := batch.Set(kb, vb, nil); err != nil {
			c.onErr(fmt.Errorf("lazymem: engine: embedding cache: write: %w", err))
			c.diskSkipped.Add(uint64(len(keys)))
			return
		}
	}
	if c.beforeWrite != nil {
		c.beforeWrite()
	}
	// Not synced: losing the last writes in a crash only costs embedding
	// them again.
	err := c.park.Call(func() error { return batch.Commit(pebble.NoSync) })
	if err != nil && !segment.Parked(err) {
		c.onErr(fmt.Errorf("lazymem: engine: embedding cache: write: %w", err))
	}
	if c.fatal.Load() != nil || err != nil {
		// A fatal commit error (Commit returned nil): the vectors are in
		// memory only.
		c.diskSkipped.Add(uint64(len(keys)))
	}
}

// findUnwritten moves to out the vectors of the keys at miss that wait in
// c.unwritten, counted as disk hits (promoted to memory as readDisk's are),
// and returns the others; it reuses miss. c.dropMu is held.
func (c *vecCache) findUnwritten(keys []string, ids []uint64, miss []int, out [][]float32, st *lookupStats) []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.unwritten) == 0 {
		return miss
	}
	rest := miss[:0]
	for _, i := range miss {
		u, ok := c.unwritten[keys[i]]
		if !ok || c.isDropped(u.id) {
			rest = append(rest, i)
			continue
		}
		out[i] = u.vec
		st.diskHits++
		c.promote(keys, ids, i, u.vec)
	}
	return rest
}

// settle waits for the embeddings running detached and then for the
// disk-tier writes they started; with no get running meanwhile (a
// benchmark's clear, a test), the disk tier then holds every vector
// computed so far.
func (c *vecCache) settle() {
	c.wg.Wait()
	c.writes.Wait()
}
