package segment

import (
	"fmt"
	"syscall"

	"github.com/cockroachdb/errors/oserror"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// reserveName is the space reserve under the log's directory. Pebble
// ignores files it does not know.
const reserveName = "LAZYMEM-RESERVE"

// The space reserve and the checks of free space keep a full disk away from
// the points where Pebble stops the process: a WAL it cannot close or
// create while it rotates the memtable (a panic), a MANIFEST edit it
// cannot write after a flush or compaction (QuietLogger parks it). Those
// writes are small; what fills a disk is the log's own commits (WAL bytes)
// and Pebble's sstables. So:
//   - a commit is admitted only while the reserve is held and the disk has
//     room for the commit plus commitSlack (admit); otherwise it fails with
//     ErrDiskFull before Pebble sees it, and nothing is spent;
//   - a write of Pebble's that fails for want of space releases the
//     reserve and is tried again (reserveFile), except an sstable's: a
//     flush or compaction that does not fit fails, cleanly, and is retried
//     by Pebble;
//   - once the reserve is released, sstable writes stop short of the last
//     half of it (sstHeadroom), so what it freed stays for the WAL and the
//     MANIFEST; the reserve is made again when the disk has room for it
//     (by the next commit, or the sealer's tick).
//
// What is left to a full disk is a disk filled by someone else between a
// check and a write, larger than the reserve: TestDiskFullModel fills a
// modelled disk at every operation and never reaches a stop point.

// commitSlack is the free space, beyond a commit's own bytes, that a
// commit needs: the WAL's block headers and the trailer of a WAL closed by
// a memtable rotation.
const commitSlack = 64 << 10

// makeReserve preallocates the space reserve unless it exists. On a disk
// already too full for it the log runs without one: the reserve is an aid,
// not a condition of opening (but commits wait for it: see admit).
func (l *Log) makeReserve() {
	if l.opts.ReserveBytes <= 0 {
		return
	}
	l.reserveMu.Lock()
	defer l.reserveMu.Unlock()
	fs := l.opts.FS
	name := fs.PathJoin(l.dir, reserveName)
	if _, err := fs.Stat(name); err == nil {
		l.reserveHeld.Store(true)
		return
	}
	f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		l.logf("lazymem: segment: no space reserve: %v", err)
		return
	}
	// Preallocate takes the blocks (fallocate on Linux, the file's size
	// unchanged); where the filesystem cannot, the reserve holds nothing
	// but costs nothing either.
	err = f.Preallocate(0, l.opts.ReserveBytes)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = fs.Remove(name)
		l.logf("lazymem: segment: no space reserve: %v", err)
		return
	}
	l.reserveHeld.Store(true)
}

// releaseReserve deletes the reserve so that a write of Pebble's that
// must not fail (the WAL, the MANIFEST) can complete on a full disk. It
// reports whether it freed the reserve now.
func (l *Log) releaseReserve() bool {
	if !l.reserveHeld.Load() {
		return false
	}
	// Wait for the sstable writes that passed sstRoom while the reserve
	// was held: finished after the release, they would spend what it frees.
	l.reserveGate.Lock()
	defer l.reserveGate.Unlock()
	l.reserveMu.Lock()
	defer l.reserveMu.Unlock()
	if !l.reserveHeld.Swap(false) {
		return false
	}
	l.reserveReleases.Add(1)
	fs := l.opts.FS
	if err := fs.Remove(fs.PathJoin(l.dir, reserveName)); err != nil && !oserror.IsNotExist(err) {
		l.logf("lazymem: segment: release space reserve: %v", err)
		return false
	}
	l.logf("lazymem: segment: the disk is full: space reserve released (%d bytes); writes are refused until it can be made again", l.opts.ReserveBytes)
	return true
}

// avail returns the free bytes of the log's disk; ok is false on a
// filesystem without usage figures.
func (l *Log) avail() (uint64, bool) {
	u, err := l.opts.FS.GetDiskUsage(l.dir)
	if err != nil {
		return 0, false
	}
	return u.AvailBytes, true
}

// spaceFor reports whether the disk has room to reopen Pebble and make the
// reserve again; unknown (a filesystem without usage figures) counts as
// yes, and the reopen then tells.
func (l *Log) spaceFor() bool {
	a, ok := l.avail()
	return !ok || a >= uint64(max(l.opts.ReserveBytes, 0)+256<<10)
}

// roomAgain reports whether the disk is known to have room again (as
// spaceFor, but unknown counts as no): after a flush failed for want of
// space, commits wait for it (errWouldStall).
func (l *Log) roomAgain() bool {
	a, ok := l.avail()
	return ok && a >= uint64(max(l.opts.ReserveBytes, 0)+256<<10)
}

// errNoRoom: a commit refused before Pebble saw it, for want of space (see
// admit). The log has not failed: the next commit is admitted once there
// is room.
var errNoRoom = fmt.Errorf("lazymem: segment: too little free space to commit safely: %w", syscall.ENOSPC)

// admit lets a commit of n bytes through when the reserve is held (made
// again first if it was released and the disk has room for it) and the
// disk has room for n plus commitSlack. It is called with commitMu held.
func (l *Log) admit(n int) error {
	if l.compFull.Load() > 0 && !l.spaceFor() {
		// Compactions fail for want of space: level 0 grows until Pebble
		// stalls every commit (L0StopWritesThreshold), until one succeeds.
		// Once the disk has room again they are left to Pebble, which
		// retries them after the next flush.
		return diskFull("commit refused, compactions fail for want of space", errNoRoom)
	}
	if l.opts.ReserveBytes > 0 && !l.reserveHeld.Load() {
		if !l.spaceFor() {
			return diskFull("commit refused, the space reserve is spent", errNoRoom)
		}
		l.makeReserve()
		if !l.reserveHeld.Load() {
			return diskFull("commit refused, no space reserve", errNoRoom)
		}
	}
	if a, ok := l.avail(); ok && a < uint64(n)+commitSlack {
		return diskFull(fmt.Sprintf("commit of %d bytes refused, %d bytes free", n, a), errNoRoom)
	}
	return nil
}

// sstRoom reports whether an sstable write of n bytes may go ahead: always
// while the reserve is held (or there is none); once it is released, only
// while half of it stays free after the write (sstHeadroom). The caller
// calls unlock after the write. While the reserve is held, the write holds
// reserveGate shared, so that releaseReserve waits for it: otherwise a
// compaction's write that passed while the reserve was held could land
// after a MANIFEST write released it, on the space freed for the
// MANIFEST's retry (TestReleaseWaitsForSSTWrite). While the reserve is
// released, sstable writes (a flush and a compaction at once) go one at a
// time, so that two of them cannot both pass the check on the same free
// space.
func (l *Log) sstRoom(n int) (unlock func(), ok bool) {
	if l.opts.ReserveBytes <= 0 {
		return func() {}, true
	}
	l.reserveGate.RLock()
	if l.reserveHeld.Load() {
		return l.reserveGate.RUnlock, true
	}
	l.reserveGate.RUnlock()
	l.sstMu.Lock()
	a, known := l.avail()
	return l.sstMu.Unlock, !known || a >= uint64(n)+uint64(l.sstHeadroom())
}

// sstHeadroom is the free space sstable writes leave once the reserve is
// released: half of it.
func (l *Log) sstHeadroom() int64 { return l.opts.ReserveBytes / 2 }

// keepReserve makes the reserve again when it was released and the disk
// has room for it: the sealer's tick, so that a log taking no appends
// recovers it too.
func (l *Log) keepReserve() {
	if l.opts.ReserveBytes > 0 && !l.reserveHeld.Load() && !l.readOnly.Load() && l.spaceFor() {
		l.makeReserve()
	}
}

func (l *Log) logf(format string, args ...any) {
	if l.opts.Logf != nil {
		l.opts.Logf(format, args...)
	}
}
