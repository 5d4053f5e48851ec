package segment

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/sstable/block"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// QuietLogger is a pebble.Logger that never ends the process. Pebble's
// default logger calls os.Exit from Fatalf, and Pebble calls Fatalf for
// on-disk corruption (through the default EventListener.DataCorruption),
// for a failed WAL write or sync (DB.Commit), for a failed MANIFEST write
// and for broken invariants. Every Pebble store of lazymem uses this logger.
//
// What Pebble does after Fatalf returns (v2.1.7), and what this logger does:
//   - DB.Commit ("pebble: fatal commit error"): the batch was applied to
//     the memtable but its WAL write or sync failed; Commit then returns
//     nil. Fatalf returns: the caller must not believe Commit, and a Log
//     checks OnFatal's record after each commit and fails the write. The
//     WAL writer keeps its error, so the next commit through the same DB
//     fails in its prepare step and leaves its batch unpublished: every
//     later commit blocks. A Log therefore makes no further commit on that
//     DB and reopens it (disk full) or refuses writes until reopened.
//   - MANIFEST creation while a new store opens: Open returns the error.
//     Fatalf returns.
//   - Every other report, above all a failed MANIFEST write or sync while
//     a flush or compaction installs its result: Pebble goes on with its
//     in-memory version out of step with the MANIFEST and retries the
//     flush, writing the same keys and sequence numbers into a second
//     sstable; the store then fails Pebble's own invariants on every later
//     open (TestFaultInjectionFlushes reopened such a store and Pebble
//     panicked, "out of order"). Continuing is never safe, and exiting is
//     not a library's call: Fatalf parks the calling goroutine for good.
//     That goroutine holds Pebble's DB mutex, so the DB takes no more
//     flushes, compactions or commits; reads go on. OnFatal learns of it
//     first (Parked reports it), and a Log then refuses writes and does
//     not close the DB (that would wait for the mutex): the process must be
//     restarted to release the store. TestFaultInjectionFlushes lists it as
//     a point where the process must stop.
//
// Pebble also panics on a few paths (a WAL it cannot create or close while
// it rotates the memtable, a directory sync that fails as it moves a
// marker); those stop the process.
//
// Another owner of a Pebble store (a cache) should set OnFatal, feed its
// reports to a ParkGuard and make through it the calls a parked goroutine
// can hold up for good (commits, Close, Flush, Compact, Metrics; checking
// Parked first is not enough), and set Opening around pebble.Open, as Log
// does.
type QuietLogger struct {
	// Logf receives Infof and Errorf messages and the fatal ones. Nil
	// discards them.
	Logf func(format string, args ...any)
	// OnFatal receives every Fatalf as an error that wraps ErrFailed and
	// the first error among Pebble's arguments, before Fatalf parks (see
	// Parked). Nil: only Logf sees it.
	OnFatal func(err error)
	// Opening, if not nil, reports that pebble.Open is running for this
	// store: Fatalf then always returns, because Open fails with the error
	// and releases what it made (a MANIFEST edit that fails while an
	// existing store opens would otherwise park the caller of Open).
	Opening func() bool
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

// Fatalf implements pebble.Logger: it records the error, then returns
// where Pebble stops safely after it, and parks the calling goroutine
// everywhere else (see QuietLogger).
func (q QuietLogger) Fatalf(format string, args ...any) {
	err := fatalError(format, args)
	if q.Opening != nil && q.Opening() {
		err.(*pebbleFatal).parked = false
	}
	if q.Logf != nil {
		q.Logf("%v", err)
	}
	if q.OnFatal != nil {
		q.OnFatal(err)
	}
	if err.(*pebbleFatal).parked {
		select {} // see QuietLogger: continuing would damage the store
	}
}

// Parked reports whether err is a fatal report after which QuietLogger
// parked Pebble's goroutine: the DB must not be closed or written again.
func Parked(err error) bool {
	var pf *pebbleFatal
	return errors.As(err, &pf) && pf.parked
}

// safeFatal lists the Fatalf formats after which Pebble stops safely by
// itself (v2.1.7): DB.Commit, which returns (the caller checks), and the
// MANIFEST creation of a new store, after which Open returns the error.
var safeFatal = map[string]bool{
	"pebble: fatal commit error: %v":  true,
	"MANIFEST flush failed: %v":       true,
	"MANIFEST sync failed: %v":        true,
	"MANIFEST set current failed: %v": true,
}

// fatalError turns a Fatalf call into an error wrapping ErrFailed and the
// first error argument, so errors.Is finds syscall.ENOSPC and the like.
func fatalError(format string, args []any) error {
	pf := &pebbleFatal{msg: fmt.Sprintf(format, args...), parked: !safeFatal[format]}
	for _, a := range args {
		if e, ok := a.(error); ok {
			pf.cause = e
			break
		}
	}
	return pf
}

type pebbleFatal struct {
	msg    string
	cause  error
	parked bool
}

func (e *pebbleFatal) Error() string {
	if e.parked {
		return "lazymem: segment: pebble stopped (restart the process to reopen the store): " + e.msg
	}
	return "lazymem: segment: pebble stopped: " + e.msg
}

func (e *pebbleFatal) Unwrap() []error {
	errs := []error{ErrFailed}
	if e.parked {
		errs = append(errs, ErrStopped)
	}
	if e.cause != nil {
		errs = append(errs, e.cause)
	}
	return errs
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

// spanByPrefix returns Pebble's SpanPolicyFunc: it ends every sstable a
// flush or compaction writes at the end of the tail's keys, and at the end
// of the segments' (see openPebble). The small prefixes before the tail
// ('d' tombstones, 'm' keys, 'n' names) share one span, and those after
// the segments ('w' words, 'x' summaries, 'y' and 'z' dictionaries)
// another: one table a prefix left 69 sstables in the log of a 200k-record
// Zipf load, most of them a few KB, each with its index, footer and last
// partly used block (21 grouped; du 12.81 -> 12.43 MB, log-size.md
// section 9).
//
// The tail's span, and the segments' when they are zstd frames already
// (zstdSegments), prefer Pebble's fastest compression (Snappy for the
// log's table format, MinLZ on newer ones) to its zstd. A pure-Go Pebble
// builds a new zstd encoder (1.26 MB, cleared) for each compressor of
// each table it writes, and ran it over every segment of every flush and
// compaction, where it saved nothing (Pebble keeps a block that does not
// shrink by 12% as it is), and over tail records that live until their
// seal. The small spans keep zstd: the name table with its metadata
// strings, the vocabulary and the dictionary shrink by half with it (the
// workload's log 0.352x of its text with zstd, 0.416x with the fast
// compression everywhere). Segments stored raw (CompressionNone) keep
// zstd too. The scans for forgotten data read sstables through Pebble's
// reader (internal/storetest), so a block coded by back-references hides
// nothing from them. Measured (log-size.md section 10, the whole engine's
// ingest, alternated four times): CPU a record lower in four pairs of
// four (4-12%), allocated 1.2 -> 0.84 GB a 200k load, the log on disk
// after reopen unchanged (Zipf 0.406x, workload 0.352x).
func spanByPrefix(zstdSegments bool) pebble.SpanPolicyFunc {
	return func(start []byte) (pebble.SpanPolicy, []byte, error) {
		switch {
		case len(start) == 0 || start[0] < prefixTail:
			return pebble.SpanPolicy{}, []byte{prefixTail}, nil
		case start[0] == prefixTail:
			return pebble.SpanPolicy{PreferFastCompression: true}, []byte{prefixTail + 1}, nil
		case start[0] == prefixSegment:
			return pebble.SpanPolicy{PreferFastCompression: zstdSegments}, []byte{prefixSegment + 1}, nil
		}
		return pebble.SpanPolicy{}, nil, nil
	}
}

// zstdFromLevel is the first LSM level whose tables Pebble compresses
// with zstd; the levels above it take Pebble's fastest compression.
const zstdFromLevel = 5

// logCompression is the log's Pebble compression by level: zstd (level
// 3) in the bottom levels, where the small spans' keys settle, and the
// fastest compression above them. Pebble's pure-Go zstd makes a new
// encoder for each table it writes (about 0.7 ms and 3.3 MB of fresh
// memory each, against ~20 µs to compress a 4 KiB block with an encoder
// already made), and every flush and every upper-level compaction writes
// tables of the small spans: with zstd at every level, Pebble's zstd was
// 2.5 s of the 35 s of CPU of a 1M Zipf engine load (2,918 blocks, 10.4
// MB, 876 encoders). The tail's and the segments' spans prefer the
// fastest compression at every level (spanByPrefix).
func logCompression() pebble.DBCompressionSettings {
	cs := pebble.DBCompressionSettings{Name: "lazymem-log"}
	for i := range cs.Levels {
		cs.Levels[i] = block.FastestCompression
		if i >= zstdFromLevel {
			cs.Levels[i] = block.ZstdCompression
		}
	}
	return cs
}

// noArchiveFS is the filesystem Pebble sees: the log keeps Pebble's
// ArchiveCleaner because a cleaner that needs the files' contents turns
// off WAL recycling (a recycled WAL keeps a deleted record's bytes), but
// this FS turns the cleaner's move into archive/ into a delete. Why not
// archive: Pebble retries a failed flush at once (no backoff in v2.1.7),
// and on a full disk every attempt creates and abandons an sstable;
// archived, they filled archive/ with millions of files while a restart
// spun at 100% CPU. Deleted, there is at most one such file at a time.
//
// It also spends the space reserve where Pebble cannot survive a full
// disk (see reserve.go): a file create or write that fails for want of
// space releases the reserve and is tried once more. Pebble panics when it
// cannot create the new WAL, or close the old one, while it rotates the
// memtable inside a commit, and parks (QuietLogger) when a MANIFEST write
// fails; with the reserve freed the retry succeeds. An sstable's write is
// not retried: a flush or compaction that does not fit fails cleanly and
// Pebble tries it again later; once the reserve is released, sstable
// writes also stop short of the half of it that they must leave free.
// While pebble.Open runs, sstables are treated like the WAL: Open flushes
// what it replayed and waits for the flush, which would otherwise retry
// for as long as the disk is full (the tmpfs test hung there).
type noArchiveFS struct {
	vfs.FS
	archive string // dir/archive
	log     *Log   // the reserve's owner; nil: no reserve
}

func (fs noArchiveFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	sst := strings.HasSuffix(name, ".sst")
	f, err := fs.FS.Create(name, category)
	if err != nil && !sst && isDiskFull(err) && fs.log != nil && fs.log.releaseReserve() {
		f, err = fs.FS.Create(name, category)
	}
	if err != nil {
		return nil, err
	}
	return fs.wrap(f, name), nil
}

// wrap makes f, a file Pebble writes, a reserveFile (unless the log runs
// without a reserve).
func (fs noArchiveFS) wrap(f vfs.File, name string) vfs.File {
	if fs.log == nil {
		return f
	}
	return reserveFile{File: f, log: fs.log, sst: strings.HasSuffix(name, ".sst"), wal: strings.HasSuffix(name, ".log"), name: name}
}

// reserveFile retries a write that failed for want of space once, after
// releasing the space reserve, and keeps sstable writes out of the
// reserve's last half (see noArchiveFS). Syncs are not retried: a failed
// sync may have dropped the data it was to make durable. A WAL file's
// failed write or sync is noted (Log.walErr): Pebble's WAL writer keeps
// that error, and a memtable rotation or a commit that meets it panics
// (closeflush.go), so the log makes neither after one.
type reserveFile struct {
	vfs.File
	log  *Log
	sst  bool
	wal  bool
	name string
}

// noteWAL records a failed write or sync of a WAL file.
func (f reserveFile) noteWAL(err error) error {
	if err != nil && f.wal {
		f.log.walErr.CompareAndSwap(nil, &err)
	}
	return err
}

func (f reserveFile) Sync() error { return f.noteWAL(f.File.Sync()) }

func (f reserveFile) SyncData() error { return f.noteWAL(f.File.SyncData()) }

func (f reserveFile) SyncTo(length int64) (fullSync bool, err error) {
	fullSync, err = f.File.SyncTo(length)
	return fullSync, f.noteWAL(err)
}

func (f reserveFile) Write(p []byte) (int, error) {
	if f.sst && !f.log.opening.Load() {
		unlock, ok := f.log.sstRoom(len(p))
		defer unlock()
		if !ok {
			return 0, &os.PathError{Op: "write", Path: f.name, Err: fmt.Errorf("%w (the space reserve is spent)", syscall.ENOSPC)}
		}
	}
	n, err := f.File.Write(p)
	if err != nil && (!f.sst || f.log.opening.Load()) && isDiskFull(err) && f.log.releaseReserve() {
		var m int
		m, err = f.File.Write(p[n:])
		n += m
	}
	return n, f.noteWAL(err)
}

func (f reserveFile) WriteAt(p []byte, off int64) (int, error) {
	if f.sst && !f.log.opening.Load() {
		unlock, ok := f.log.sstRoom(len(p))
		defer unlock()
		if !ok {
			return 0, &os.PathError{Op: "write", Path: f.name, Err: fmt.Errorf("%w (the space reserve is spent)", syscall.ENOSPC)}
		}
	}
	n, err := f.File.WriteAt(p, off)
	if err != nil && (!f.sst || f.log.opening.Load()) && isDiskFull(err) && f.log.releaseReserve() {
		var m int
		m, err = f.File.WriteAt(p[n:], off+int64(n))
		n += m
	}
	return n, f.noteWAL(err)
}

// ReuseForWrite wraps a recycled WAL file as Create wraps a new one:
// Pebble recycles obsolete WAL files, and a recycled file's write that
// failed for want of space released nothing and was not retried, so a
// memtable rotation closing it panicked and the MANIFEST edit after it
// found no space (TestDiskFullModel, ~1 sweep of every fill point in 10).
func (fs noArchiveFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	if err != nil {
		return nil, err
	}
	return fs.wrap(f, newname), nil
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
		WALCreated: func(info pebble.WALCreateInfo) {
			if info.Err == nil {
				l.wal.created(uint64(info.FileNum))
			}
		},
		WALDeleted: func(info pebble.WALDeleteInfo) {
			if info.Err == nil {
				l.wal.deleted(uint64(info.FileNum))
			}
		},
		BackgroundError: func(err error) {
			l.logf("lazymem: segment: background: %v", err)
		},
		FlushEnd: func(info pebble.FlushInfo) {
			l.opener.FlushEnd(info) // an Open that cannot end (openstuck.go)
			if !isDiskFull(info.Err) {
				l.bgFull.Store(0)
				return
			}
			err := info.Err
			l.bgErr.Store(&err)
			backoff(l.bgFull.Add(1))
		},
		CompactionEnd: func(info pebble.CompactionInfo) {
			if !isDiskFull(info.Err) {
				l.compFull.Store(0)
				return
			}
			backoff(l.compFull.Add(1))
		},
	}
}

// errWouldStall: Pebble's last flush or compaction failed for want of
// space. A commit now could fill the memtables and stall in Pebble until a
// flush succeeds (an append that hangs instead of failing), so writes are
// refused, without failing the log, until a flush succeeds again.
var errWouldStall = errors.New("lazymem: segment: Pebble cannot flush for want of space")

// onFatal records the first fatal report of the current Pebble DB, and
// any report after which QuietLogger parks (park.go), even after another.
func (l *Log) onFatal(err error) {
	if isDiskFull(err) {
		l.releaseReserve()
	}
	l.fatal.CompareAndSwap(nil, &err)
	l.park.Note(err)
}

// fatalErr returns the fatal report of the current DB, or nil; a parked
// report first.
func (l *Log) fatalErr() error {
	if err := l.park.Err(); err != nil {
		return err
	}
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
	if l.bgFull.Load() > 0 && !l.roomAgain() {
		// Once the disk has room again, a commit goes on: it makes Pebble
		// schedule the flush again (refusing it could leave the failed
		// flush unretried and writes refused for good: TestDiskFullModel).
		if p := l.bgErr.Load(); p != nil {
			return fmt.Errorf("%w: %w", errWouldStall, diskFull("write", *p))
		}
	}
	// An unsynced commit leaves its WAL bytes for Pebble to write later,
	// at the latest when a memtable rotation closes the WAL, which Pebble
	// cannot survive failing: they are bounded by a quarter of the
	// reserve (a commit past it is synced), so that the reserve always
	// covers them.
	n := b.Len()
	if !opts.Sync && l.opts.ReserveBytes > 0 && l.unsynced+int64(n) > l.opts.ReserveBytes/4 {
		opts = pebble.Sync
	}
	if err := l.admit(int(l.unsynced) + n); err != nil {
		return err
	}
	// Through ParkGuard.Call: a commit that rotates the memtable waits for
	// Pebble's mutex, which a parked goroutine holds for good.
	err := l.park.Call(func() error {
		if l.beforeCommit != nil {
			l.beforeCommit()
		}
		// Last before the commit: a WAL write that failed in Pebble's
		// flusher (the bytes of an unsynced commit, written later) leaves
		// the WAL writer holding its error, and the next commit whose
		// record Pebble writes then panics in commitWrite, a panic no one
		// can recover (Pebble's commit mutex stays held).
		if err := l.walFailure(); err != nil {
			return err
		}
		return b.Commit(opts)
	})
	if ferr := l.fatalErr(); ferr != nil {
		err = ferr
	}
	if err == nil && opts.Sync {
		l.unsynced = 0
	} else if err == nil {
		l.unsynced += int64(n)
	}
	if err == nil {
		l.wal.add(n)
	}
	return err
}

// walFailure is the error a commit returns once a write or sync of the
// current WAL failed: ErrDiskFull (and ENOSPC) when the disk was full, so
// that the next append reopens Pebble once space returns (submit), and
// ErrFailed otherwise.
func (l *Log) walFailure() error {
	p := l.walErr.Load()
	if p == nil {
		return nil
	}
	if isDiskFull(*p) {
		return diskFull("write the WAL", *p)
	}
	return fmt.Errorf("%w: a write of the WAL failed: %w", ErrFailed, *p)
}

// wrapWrite names a failed write: a full disk becomes ErrDiskFull (with
// syscall.ENOSPC still in the chain).
func wrapWrite(op string, err error) error {
	if isDiskFull(err) {
		return diskFull(op, err)
	}
	return fmt.Errorf("lazymem: segment: %s: %w", op, err)
}
