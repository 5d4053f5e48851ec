package segment

import (
	"github.com/cockroachdb/errors/oserror"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// reserveName is the space reserve under the log's directory. Pebble
// ignores files it does not know.
const reserveName = "LAZYMEM-RESERVE"

// makeReserve preallocates the space reserve unless it exists. On a disk
// already too full for it the log runs without one: the reserve is an aid,
// not a condition of opening.
func (l *Log) makeReserve() {
	if l.opts.ReserveBytes <= 0 {
		return
	}
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

// releaseReserve deletes the reserve so that a flush, a compaction or
// Close can complete on a full disk. It is called when Pebble reports a
// full disk; the reserve is made again once writes work again.
// It reports whether it freed the reserve now.
func (l *Log) releaseReserve() bool {
	if !l.reserveHeld.Swap(false) {
		return false
	}
	fs := l.opts.FS
	if err := fs.Remove(fs.PathJoin(l.dir, reserveName)); err != nil && !oserror.IsNotExist(err) {
		l.logf("lazymem: segment: release space reserve: %v", err)
		return false
	}
	return true
}

// spaceFor reports whether the disk has room to reopen Pebble and make the
// reserve again; unknown (a filesystem without usage figures) counts as
// yes, and the reopen then tells.
func (l *Log) spaceFor() bool {
	u, err := l.opts.FS.GetDiskUsage(l.dir)
	if err != nil {
		return true
	}
	need := uint64(max(l.opts.ReserveBytes, 256<<10))
	return u.AvailBytes >= need
}

func (l *Log) logf(format string, args ...any) {
	if l.opts.Logf != nil {
		l.opts.Logf(format, args...)
	}
}
