package segment

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// QuietLogger is a pebble.Logger that never ends the process. Pebble's
// default logger calls os.Exit from Fatalf, and Pebble calls Fatalf for
// on-disk corruption (through the default EventListener.DataCorruption),
// for a failed WAL write or sync (DB.Commit), for a failed MANIFEST write
// and for broken invariants. Every Pebble store of lazymem uses this logger.
//
// What Pebble does after Fatalf returns (v2.1.7):
//   - DB.Commit: the batch was applied to the memtable but its WAL write or
//     sync failed; Commit then returns nil. The caller must not believe it:
//     a Log checks OnFatal's record after each commit and fails the write.
//     The WAL writer keeps its error, so the next commit through the same DB
//     fails in its prepare step and leaves its batch unpublished: every
//     later commit blocks. A Log therefore makes no further commit on that
//     DB and reopens it (disk full) or refuses writes until reopened.
//   - MANIFEST write/sync in logAndApply (flush, compaction): Pebble
//     returns the error with its version state possibly out of step with
//     the MANIFEST ("preferred to attempting to unwind"). Only reopening
//     is safe; the Log refuses writes until then.
//   - corruption reports: handled by the Log's EventListener, not Fatalf.
//
// Pebble also panics on a few paths (a WAL that fails to close when the
// memtable rotates, a closed DB used again); those stop the process.
type QuietLogger struct {
	// Logf receives Infof and Errorf messages and the fatal ones. Nil
	// discards them.
	Logf func(format string, args ...any)
	// OnFatal receives every Fatalf as an error that wraps ErrFailed and
	// the first error among Pebble's arguments. Nil: only Logf sees it.
	OnFatal func(err error)
}

// Infof implements pebble.Logger.
func (q QuietLogger) Infof(format string, args ...any) {
	if q.Logf != nil {
		q.Logf(format, args...)
	}
}

// Errorf implements pebble.Logger.
func (q QuietLogger) Errorf(format string, args ...any) {
	if q.Logf != nil {
		q.Logf(format, args...)
	}
}

// Fatalf implements pebble.Logger: it records the error and returns.
func (q QuietLogger) Fatalf(format string, args ...any) {
	err := fatalError(format, args)
	if q.Logf != nil {
		q.Logf("%v", err)
	}
	if q.OnFatal != nil {
		q.OnFatal(err)
	}
}

// fatalError turns a Fatalf call into an error wrapping ErrFailed and the
// first error argument, so errors.Is finds syscall.ENOSPC and the like.
func fatalError(format string, args []any) error {
	msg := fmt.Sprintf(format, args...)
	for _, a := range args {
		if e, ok := a.(error); ok {
			return &pebbleFatal{msg: msg, cause: e}
		}
	}
	return &pebbleFatal{msg: msg}
}

type pebbleFatal struct {
	msg   string
	cause error
}

func (e *pebbleFatal) Error() string { return "lazymem: segment: pebble stopped: " + e.msg }

func (e *pebbleFatal) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrFailed}
	}
	return []error{ErrFailed, e.cause}
}

// isDiskFull reports whether err comes from a full disk.
func isDiskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// diskFull wraps err so that it satisfies both errors.Is(err, ErrDiskFull)
// and errors.Is(err, syscall.ENOSPC) (the cause stays in the chain).
func diskFull(op string, err error) error {
	if errors.Is(err, ErrDiskFull) {
		return err
	}
	return fmt.Errorf("%w: %s: %w", ErrDiskFull, op, err)
}

// noArchiveFS is the filesystem Pebble sees: the log keeps Pebble's
// ArchiveCleaner because a cleaner that needs the files' contents turns
// off WAL recycling (a recycled WAL keeps a deleted record's bytes), but
// this FS turns the cleaner's move into archive/ into a delete. Why not
// archive: Pebble retries a failed flush at once (no backoff in v2.1.7),
// and on a full disk every attempt creates and abandons an sstable;
// archived, they filled archive/ with millions of files while a restart
// spun at 100% CPU. Deleted, there is at most one such file at a time.
type noArchiveFS struct {
	vfs.FS
	archive string // dir/archive
}

func (fs noArchiveFS) MkdirAll(dir string, perm os.FileMode) error {
	if dir == fs.archive {
		return nil
	}
	return fs.FS.MkdirAll(dir, perm)
}

func (fs noArchiveFS) Rename(oldname, newname string) error {
	if fs.FS.PathDir(newname) == fs.archive {
		return fs.FS.Remove(oldname)
	}
	return fs.FS.Rename(oldname, newname)
}

// eventListener counts Pebble's corruption reports instead of ending the
// process (the default listener calls Logger.Fatalf), and slows Pebble's
// retries of a flush or compaction that failed for want of space: Pebble
// retries at once, and the listener runs in its loop. A flush that failed
// for want of space also makes writes refused (errWouldStall) until one
// succeeds; a compaction that failed does not (writes do not wait on it).
func (l *Log) eventListener() *pebble.EventListener {
	backoff := func(n int64) {
		time.Sleep(min(time.Duration(n)*10*time.Millisecond, 500*time.Millisecond))
	}
	return &pebble.EventListener{
		DataCorruption: func(info pebble.DataCorruptionInfo) {
			l.pebbleCorruptions.Add(1)
			l.logf("lazymem: segment: %s", info)
		},
		BackgroundError: func(err error) {
			l.logf("lazymem: segment: background: %v", err)
			if isDiskFull(err) {
				l.releaseReserve()
			}
		},
		FlushEnd: func(info pebble.FlushInfo) {
			if !isDiskFull(info.Err) {
				l.bgFull.Store(0)
				return
			}
			l.releaseReserve()
			err := info.Err
			l.bgErr.Store(&err)
			backoff(l.bgFull.Add(1))
		},
		CompactionEnd: func(info pebble.CompactionInfo) {
			if !isDiskFull(info.Err) {
				l.compFull.Store(0)
				return
			}
			l.releaseReserve()
			backoff(l.compFull.Add(1))
		},
	}
}

// errWouldStall: Pebble's last flush or compaction failed for want of
// space. A commit now could fill the memtables and stall in Pebble until a
// flush succeeds (an append that hangs instead of failing), so writes are
// refused, without failing the log, until a flush succeeds again.
var errWouldStall = errors.New("lazymem: segment: Pebble cannot flush for want of space")

// onFatal records the first fatal report of the current Pebble DB.
func (l *Log) onFatal(err error) {
	if isDiskFull(err) {
		l.releaseReserve()
	}
	l.fatal.CompareAndSwap(nil, &err)
}

// fatalErr returns the fatal report of the current DB, or nil.
func (l *Log) fatalErr() error {
	if p := l.fatal.Load(); p != nil {
		return *p
	}
	return nil
}

// commit commits b and reports a Pebble fatal as the commit's error: after
// a failed WAL write Pebble calls Fatalf and Commit returns nil. Commits
// are serialised so that none starts once one has failed (see QuietLogger:
// a commit after a failed WAL write never returns).
func (l *Log) commit(b *pebble.Batch, opts *pebble.WriteOptions) error {
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	return l.commitLocked(b, opts)
}

// commitLocked is commit for a caller that holds commitMu (taken before
// any other lock it needs held across the commit: see writeSegment).
func (l *Log) commitLocked(b *pebble.Batch, opts *pebble.WriteOptions) error {
	if err := l.fatalErr(); err != nil {
		return err
	}
	if l.bgFull.Load() > 0 {
		if p := l.bgErr.Load(); p != nil {
			return fmt.Errorf("%w: %w", errWouldStall, diskFull("write", *p))
		}
	}
	err := b.Commit(opts)
	if ferr := l.fatalErr(); ferr != nil {
		err = ferr
	}
	return err
}

// wrapWrite names a failed write: a full disk becomes ErrDiskFull (with
// syscall.ENOSPC still in the chain).
func wrapWrite(op string, err error) error {
	if isDiskFull(err) {
		return diskFull(op, err)
	}
	return fmt.Errorf("lazymem: segment: %s: %w", op, err)
}
