package segment

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/cockroachdb/pebble/v2"
)

// Writer is the narrow append path. The local Log implements it; a later
// cluster mode feeds the same log from a replicated stream through it.
type Writer interface {
	// AppendBatch durably appends payloads and returns the id of the first;
	// the others follow densely in order. It keeps no reference to
	// payloads once it returns: the caller may reuse their memory.
	AppendBatch(ctx context.Context, payloads [][]byte) (first uint64, err error)
}

// Tail values carry one leading state byte. Stored on disk: never change.
const (
	tailLive    = 0
	tailDeleted = 1
)

// Log is a durable append-only log of opaque records addressed by dense,
// monotonic uint64 ids starting at 1. It is safe for concurrent use.
type Log struct {
	dir  string
	opts Options
	db   *pebble.DB
	comp *compressor
	// names is the log's name table (names.go), shared with comp.
	names *nameTable
	// words is the log's vocabulary (words.go), shared with comp.
	words *wordTable
	// cache holds decompressed segments and records GetMany read.
	cache *segCache

	// Group commit. mu guards pending, committing, closed and failed.
	mu         sync.Mutex
	pending    []*appendReq
	committing bool
	closed     bool
	failed     error
	next       uint64        // next id to assign; touched only by the commit leader
	committed  atomic.Uint64 // ids < committed are durable and readable

	// Sealed state. segMu guards segs, sealed, deleted and the tail counters;
	// sealMu serialises the writers of segments (seal, compact, drop).
	sealMu    sync.Mutex
	segMu     sync.RWMutex
	segs      []segMeta
	sealed    uint64 // ids < sealed live in segments (or were dropped)
	tailCount int64
	tailBytes int64
	deleted   *roaring64.Bitmap // sealed ids deleted but not yet compacted away
	// Sealing scratch, guarded by sealMu and reused by every seal (profile:
	// fresh buffers and a copy of every payload per seal were half of the
	// bytes the ingest path allocated): the tail's payloads copied out of
	// the iterator, the uncompressed body and the stored value.
	sealRaw      []byte
	sealEnds     []int
	sealPayloads [][]byte
	sealBody     []byte
	sealPacked   []byte // a version-6 body (packed.go)
	// noPacking makes the sealer write version 5 where it would write
	// version 6 (tests of the older layout).
	noPacking bool
	sealVal   []byte
	sealCols  colEncoder
	sealWords wordCoder
	// columnsVersion is the version a columnar segment is written as:
	// segmentVersionNames; tests set segmentVersionColumns or
	// segmentVersionFrames to write an earlier layout.
	columnsVersion byte
	namesStale     bool      // segments were dropped or repaired since the last gcNames (under sealMu)
	use            usage     // the segments using each word and name (usage.go), under sealMu
	dict           dictState // the dictionaries' sample and state (dict.go), under sealMu
	// tail mirrors the newest tail records in memory for sealing (guarded
	// by segMu); tailScratch is the commit leader's scratch for it.
	tail        tailMirror
	tailScratch []tailRec
	mirrorSeals int // seals made from the mirror (guarded by sealMu; for tests)
	// sealAssists counts the seals appenders made (assistSeal) and
	// assistTimeouts the appends that stopped waiting for sealMu; pauseSealer
	// (tests) keeps the background sealer from sealing; beforeAssist
	// (tests) runs before each round of assistSeal.
	sealAssists    atomic.Uint64
	assistTimeouts atomic.Uint64
	pauseSealer    atomic.Bool
	beforeAssist   func()

	sealCh chan struct{}
	stopCh chan struct{}
	wg     sync.WaitGroup

	appends, groups, deletes atomic.Uint64
	droppedRecords           atomic.Uint64

	// Failure handling (pebble.go, reserve.go). dbMu guards the db field:
	// readers hold it shared while they use db, and only reopen (after a
	// full disk) takes it exclusively, with TryLock, so a reader that
	// reads again from inside a callback cannot deadlock. commitMu
	// serialises commits so that none starts after one has failed. fatal
	// is the current DB's first Fatalf report.
	dbMu              sync.RWMutex
	commitMu          sync.Mutex
	fatal             atomic.Pointer[error]
	corruptions       atomic.Uint64 // reads that returned a *CorruptionError
	pebbleCorruptions atomic.Uint64 // Pebble's DataCorruption reports
	bgFull            atomic.Int64  // consecutive flushes that failed for want of space
	compFull          atomic.Int64  // consecutive compactions that failed for want of space
	bgErr             atomic.Pointer[error]
	reserveHeld       atomic.Bool
	reserveMu         sync.Mutex    // serialises making and releasing the reserve
	reserveGate       sync.RWMutex  // held shared by sstable writes made while the reserve is held (sstRoom)
	sstMu             sync.Mutex    // sstable writes while the reserve is released (sstRoom)
	unsynced          int64         // WAL bytes committed without sync since the last sync (guarded by commitMu)
	reserveReleases   atomic.Uint64 // times the reserve was released
	readOnly          atomic.Bool   // Pebble is open read-only (the disk was full)
	reopens           atomic.Uint64
	opening           atomic.Bool           // pebble.Open is running (QuietLogger.Opening)
	opener            OpenWatch             // watches pebble.Open for a flush that cannot succeed (openstuck.go)
	walErr            atomic.Pointer[error] // the first failed write or sync of a WAL file (reserveFile)
	wal               walSizes              // bytes committed into each live WAL (closeflush.go)
	// park learns when QuietLogger parks one of the log's Pebble
	// goroutines, and bounds the calls that goroutine can hold up.
	park ParkGuard
	// Test hooks (nil outside tests): beforeCommit runs just before a
	// Pebble commit, beforeClose just before Pebble's Close, each on the
	// goroutine that makes the call.
	beforeCommit, beforeClose func()
}

type appendReq struct {
	payloads [][]byte
	first    uint64
	err      error
	lead     bool
	done     chan struct{}
}

var reqPool = sync.Pool{New: func() any { return &appendReq{done: make(chan struct{}, 1)} }}

// Open opens or creates the log in dir, recovering after a crash every
// acknowledged record and nothing else.
func Open(dir string, opts Options) (*Log, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	comp, err := newCompressor(opts.Compression, opts.ZstdLevel)
	if err != nil {
		return nil, err
	}
	comp.names = newNameTable()
	comp.words = newWordTable()
	l := &Log{
		dir:   dir,
		opts:  opts,
		comp:  comp,
		names: comp.names,
		words: comp.words,
		cache: newSegCache(opts.CacheBytes),

		columnsVersion: segmentVersionNames,
		deleted:        roaring64.New(),
		dict:           dictState{hist: map[uint32][]uint64{}},
		sealCh:         make(chan struct{}, 1),
		stopCh:         make(chan struct{}),
		tail:           tailMirror{max: mirrorSegments * opts.SegmentBytes},
	}
	l.opener = OpenWatch{Dir: dir, Fatal: l.fatalErr, Park: &l.park, Logf: l.logf}
	if err := opts.FS.MkdirAll(dir, 0o755); err != nil && !isDiskFull(err) {
		comp.close()
		return nil, fmt.Errorf("lazymem: segment: open %q: %w", dir, err)
	}
	l.makeReserve()
	var roErr error
	l.db, roErr, err = l.openPebble()
	if err != nil {
		comp.close()
		return nil, err
	}
	if roErr != nil {
		l.failed = roErr
	}
	if err := l.recover(); err != nil {
		l.db.Close()
		comp.close()
		return nil, err
	}
	if err := purgeArchive(opts.FS, dir); err != nil {
		l.logf("%v", err) // leftovers of the archive cleaner; not a reason to refuse to open
	}
	l.settleTables()
	l.warmIndexes()
	l.wg.Add(1)
	go l.sealLoop()
	if l.tailCount >= int64(opts.SegmentRecords) || l.tailBytes >= int64(opts.SegmentBytes) {
		l.sealCh <- struct{}{} // a tail left full by a crash or Close
	}
	return l, nil
}

// openPebble opens the Pebble store. On a disk too full to open it for
// writing it releases the space reserve and tries again, then opens it
// read-only: roErr is then the error writes return. A store Pebble finds
// damaged is a *CorruptionError naming no segment.
func (l *Log) openPebble() (db *pebble.DB, roErr error, err error) {
	l.fatal.Store(nil)
	l.walErr.Store(nil) // a new DB writes a new WAL
	popts := &pebble.Options{
		FS:           noArchiveFS{FS: noPreallocFS{l.opts.FS}, archive: l.opts.FS.PathJoin(l.dir, "archive"), log: l},
		MemTableSize: l.opts.MemTableBytes,
		// Pebble stalls a memtable rotation (a commit, or the flush of
		// Compact) while the memtables queued take this many times
		// MemTableSize, counting the mutable one's whole arena: at 2 (the
		// default), one flush in progress stalls every rotation until it
		// ends, and a flush that fails for want of space never ends
		// (TestDiskFullModel hung there). At 4, a rotation waits only
		// when two full memtables are queued behind the flush, and commits
		// are refused once a flush fails for want of space (errWouldStall)
		// until the disk has room again. The memory bound of the memtables, reached
		// only when flushes fall behind, is 4 x MemTableBytes.
		MemTableStopWritesThreshold: 4,
		Logger:                      QuietLogger{Logf: l.opts.Logf, OnFatal: l.onFatal, Opening: l.opening.Load},
		// Pebble recycles obsolete WAL files by default, keeping their old
		// bytes on disk: a privacy delete would then leave the record in a
		// recycled log. The archive cleaner disables recycling; noArchiveFS
		// deletes what it would archive.
		Cleaner:       pebble.ArchiveCleaner{},
		EventListener: l.eventListener(),
		// WAL sync chunks record how far the WAL was synced, so a damaged
		// record inside the synced part of the newest WAL is reported as
		// corruption; before, replay stopped there as at a torn tail and
		// silently dropped every acknowledged record after it (50 of 100
		// in TestPebbleWALCorruption). Existing stores are upgraded in
		// place when they open.
		FormatMajorVersion: pebble.FormatWALSyncChunks,
		// The log's small keys (names, the vocabulary, the segments'
		// summaries, the m keys) share two spans in which more than one
		// prefix keeps growing, so each flush's table of a span overlaps
		// its table in the base level, and each L0 compaction rewrites
		// that table whole. With Pebble's base level at 64 MB the base is
		// L6 for any log under 64 MB, and the rewrites grow as the square
		// of the log (a 1M Zipf load: 83 such compactions, 96 MB
		// rewritten; Pebble's flushes and compactions 3.3-4.5 s of CPU, 14%
		// of the load). A 64 KiB base level puts the small spans' recent
		// keys in small upper levels, as a leveled tree is meant to, and
		// the segments, which overlap nothing, move down without a
		// rewrite: 2.2-2.4 s, the log's size, Open and cold reads unchanged
		// (log-size.md section 11).
		LBaseMaxBytes: 64 << 10,
	}
	// Every flushed memtable holds keys of most prefixes (the append's
	// mnext, tail records and their deletions, new segments and their
	// summaries), so one sstable per flush spans the whole keyspace and
	// every L0 -> Lbase compaction rewrites every segment: the log's
	// sstables were 27 MB at the peak of a 200k Zipf engine load with a 4
	// MiB memtable against 15 MB at rest. Cut at prefix boundaries, a
	// flush's new segments overlap no older table; peak 0.94x -> 0.60x of
	// the text (log-size.md section 6).
	popts.Experimental.SpanPolicyFunc = spanByPrefix(l.comp.algo == CompressionZstd)
	// Segment values are already compressed, but the rest is not: tail
	// records waiting for their seal, the name table, the vocabulary, the
	// dictionary (Zipf 200k at rest: 263+383+62 KB -> 135+208+43 KB). zstd
	// for every span but the tail's and the segments', which prefer
	// Pebble's fastest compression (see spanByPrefix); a block that does
	// not shrink by 12% is kept as it is.
	popts.ApplyCompressionSettings(logCompression)
	l.opening.Store(true)
	defer l.opening.Store(false)
	db, err = l.openDB(popts)
	if errors.Is(err, ErrStopped) {
		return nil, nil, err // Pebble's Open is stuck and holds the store (openstuck.go)
	}
	if err != nil && (isDiskFull(err) || l.fatalErr() != nil && isDiskFull(l.fatalErr())) {
		l.releaseReserve()
		l.fatal.Store(nil)
		db, err = l.openDB(popts)
		if errors.Is(err, ErrStopped) {
			return nil, nil, err
		}
		if err != nil && (isDiskFull(err) || l.fatalErr() != nil && isDiskFull(l.fatalErr())) {
			cause := err
			l.fatal.Store(nil)
			popts.ReadOnly = true
			if db, err = l.openDB(popts); err == nil {
				l.readOnly.Store(true)
				return db, diskFull("open read-only, the disk is full", cause), nil
			}
			// No store to open read-only (a new one cannot be made on a
			// full disk): the full disk is the error.
			return nil, nil, diskFull(fmt.Sprintf("open %q", l.dir), cause)
		}
	}
	if err == nil {
		if ferr := l.fatalErr(); ferr != nil {
			db.Close()
			err = ferr
		}
	}
	if err != nil {
		if pebble.IsCorruptionError(err) {
			l.corruptions.Add(1)
			return nil, nil, &CorruptionError{Offset: -1, Err: fmt.Errorf("open %q: %w", l.dir, err)}
		}
		return nil, nil, fmt.Errorf("lazymem: segment: open %q: %w", l.dir, err)
	}
	l.readOnly.Store(false)
	return db, nil, nil
}

// openRecovering is pebble.Open with its panics turned into errors. Pebble
// panics when a directory sync fails while it moves a marker (fsync errors
// are unrecoverable: the next open must start from what is on disk); Open
// has then already released everything it made (its deferred cleanup runs
// before it panics again), so the caller gets an error instead of a dead
// process, and opening again starts from the disk as a restart would.
func openRecovering(dir string, popts *pebble.Options) (db *pebble.DB, err error) {
	// Pebble's default compaction scheduler starts a goroutine when Open
	// registers the DB and stops it only in Close: an Open that fails after
	// that (a full disk, a failed sync) leaks it, and the reopen after a
	// full disk may try Open many times. CompactionScheduler starts none,
	// and keeps no picked compaction waiting (see there).
	popts.Experimental.CompactionScheduler = CompactionScheduler()
	defer func() {
		if r := recover(); r != nil {
			db = nil
			if e, ok := r.(error); ok {
				err = fmt.Errorf("%w: pebble panicked while opening: %w", ErrFailed, e)
			} else {
				err = fmt.Errorf("%w: pebble panicked while opening: %v", ErrFailed, r)
			}
		}
	}()
	return pebble.Open(dir, popts)
}

// recover rebuilds the in-memory state from the keyspace.
func (l *Log) recover() error {
	it, err := l.db.NewIter(nil)
	if err != nil {
		return err
	}
	defer it.Close()
	var next, sealed uint64 = 1, 0
	if v, closer, err := l.db.Get([]byte(keyNext)); err == nil {
		if len(v) == 8 {
			next = binary.BigEndian.Uint64(v)
		}
		closer.Close()
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return err
	}
	if v, closer, err := l.db.Get([]byte(keySealed)); err == nil {
		if len(v) == 8 {
			sealed = binary.BigEndian.Uint64(v)
		}
		closer.Close()
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return err
	}
	// Segment summaries.
	for ok := it.SeekGE([]byte{prefixSegMeta}); ok && it.Key()[0] == prefixSegMeta; ok = it.Next() {
		first, kok := keyID(it.Key())
		if !kok {
			return &CorruptionError{Err: fmt.Errorf("%w: segment summary key %x", ErrFormat, it.Key())}
		}
		m, err := decodeSegMeta(first, it.Value())
		if err != nil {
			return err
		}
		if n := len(l.segs); n > 0 && l.segs[n-1].end() > first {
			return &CorruptionError{Segment: first, Err: fmt.Errorf("%w: segment overlaps its predecessor", ErrFormat)}
		}
		l.segs = append(l.segs, m)
	}
	if n := len(l.segs); n > 0 && l.segs[n-1].end() > sealed {
		sealed = l.segs[n-1].end()
	}
	if sealed == 0 {
		sealed = 1
	}
	// Tail: must be dense from sealed.
	expect := sealed
	for ok := it.SeekGE([]byte{prefixTail}); ok && it.Key()[0] == prefixTail; ok = it.Next() {
		id, kok := keyID(it.Key())
		if !kok {
			return &CorruptionError{Err: fmt.Errorf("%w: tail key %x", ErrFormat, it.Key())}
		}
		if id < sealed {
			// A record both sealed and in the tail cannot survive the atomic
			// seal batch; report rather than guess.
			return &CorruptionError{Segment: id, Err: fmt.Errorf("%w: tail record %d below sealed boundary %d", ErrFormat, id, sealed)}
		}
		if id != expect {
			return &CorruptionError{Segment: id, Err: fmt.Errorf("%w: tail ids jump from %d to %d", ErrFormat, expect-1, id)}
		}
		v := it.Value()
		if len(v) == 0 || v[0] > tailDeleted {
			return &CorruptionError{Segment: id, Err: fmt.Errorf("%w: tail record state byte", ErrFormat)}
		}
		l.tailCount++
		l.tailBytes += int64(len(v) - 1)
		expect++
	}
	if expect > next {
		next = expect
	}
	if sealed > next {
		next = sealed
	}
	// The log's zstd dictionaries.
	if err := l.loadDicts(it); err != nil {
		return err
	}
	if err := l.loadNames(it); err != nil {
		return err
	}
	if err := l.loadWords(it); err != nil {
		return err
	}
	// A log with a dictionary but no vocabulary (its dictionary was built
	// from text, before version 5) or one that will build no dictionary
	// grows its vocabulary from nothing, unseeded.
	if l.dict.done || l.opts.DisableDictionary || l.comp.algo != CompressionZstd {
		l.words.active = true
	}
	// Tombstones of sealed records awaiting compaction.
	for ok := it.SeekGE([]byte{prefixDeleted}); ok && it.Key()[0] == prefixDeleted; ok = it.Next() {
		if id, kok := keyID(it.Key()); kok {
			l.deleted.Add(id)
		}
	}
	if err := it.Error(); err != nil {
		return pebbleErr(0, "recover: read keys from", err)
	}
	l.sealed = sealed
	l.next = next
	l.committed.Store(next)
	return nil
}

// Append durably appends one record and returns its id.
func (l *Log) Append(ctx context.Context, payload []byte) (uint64, error) {
	return l.AppendBatch(ctx, [][]byte{payload})
}

// AppendBatch durably appends payloads in order and returns the id of the
// first; record i gets id first+i. Concurrent callers are group-committed:
// one fsync covers every batch waiting at that moment. On error nothing of
// the batch is acknowledged. Under a load the sealer cannot keep up with,
// the call seals segments of the tail before it returns (assistSeal): the
// batch is durable by then, and the tail stays bounded.
func (l *Log) AppendBatch(ctx context.Context, payloads [][]byte) (uint64, error) {
	if len(payloads) == 0 {
		return 0, ErrEmpty
	}
	for i, p := range payloads {
		if len(p) > l.opts.MaxRecordBytes {
			return 0, fmt.Errorf("%w: record %d of the batch is %d bytes, limit %d (Options.MaxRecordBytes)", ErrTooLarge, i, len(p), l.opts.MaxRecordBytes)
		}
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	req := reqPool.Get().(*appendReq)
	req.payloads, req.first, req.err, req.lead = payloads, 0, nil, false
	first, err := l.submit(req)
	req.payloads = nil
	reqPool.Put(req)
	if err == nil {
		l.assistSeal(ctx)
	}
	return first, err
}

// submit runs the group commit. The first waiter becomes the leader, writes
// every pending request in one synced Pebble batch, then hands leadership to
// the oldest request that arrived meanwhile. Ids are assigned by the leader
// in WAL order, so a crash can only lose a suffix: ids stay dense.
func (l *Log) submit(req *appendReq) (uint64, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return 0, ErrClosed
	}
	if l.failed != nil {
		if !errors.Is(l.failed, ErrDiskFull) || Parked(l.fatalErr()) || l.committing || !l.spaceFor() {
			err := l.failed
			l.mu.Unlock()
			return 0, err
		}
		// The disk was full and may not be any more: reopen Pebble, as
		// leader so that no group commits meanwhile.
		l.committing = true
		l.mu.Unlock()
		err := l.reopen()
		l.mu.Lock()
		l.committing = false
		if err != nil {
			l.failed = err
			l.mu.Unlock()
			return 0, err
		}
		l.failed = nil
		if l.closed {
			l.mu.Unlock()
			return 0, ErrClosed
		}
	}
	l.pending = append(l.pending, req)
	if l.committing {
		l.mu.Unlock()
		<-req.done
		if !req.lead {
			return req.first, req.err
		}
		l.mu.Lock()
	} else {
		l.committing = true
	}
	group := l.pending
	l.pending = nil
	l.mu.Unlock()

	err := l.write(group)

	l.mu.Lock()
	if err != nil && l.failed == nil && !errors.Is(err, errWouldStall) && !errors.Is(err, errNoRoom) {
		// Pebble cannot take another commit on this DB (see QuietLogger);
		// a full disk is retried by the next append (submit).
		l.failed = err
	}
	for _, r := range group {
		r.err = err
		if r != req {
			r.done <- struct{}{}
		}
	}
	if len(l.pending) > 0 {
		nl := l.pending[0]
		nl.lead = true
		nl.done <- struct{}{}
	} else {
		l.committing = false
	}
	l.mu.Unlock()
	return req.first, req.err
}

// write commits one group with a single sync.
func (l *Log) write(group []*appendReq) error {
	b := l.db.NewBatch()
	defer l.closeBatch(b)
	id := l.next
	var key [9]byte
	var nbytes int64
	var n int
	for _, r := range group {
		r.first = id
		for _, p := range r.payloads {
			key[0] = prefixTail
			binary.BigEndian.PutUint64(key[1:], id)
			op := b.SetDeferred(len(key), 1+len(p))
			copy(op.Key, key[:])
			op.Value[0] = tailLive
			copy(op.Value[1:], p)
			if err := op.Finish(); err != nil {
				return fmt.Errorf("lazymem: segment: append: %w", err)
			}
			id++
			n++
			nbytes += int64(len(p))
		}
	}
	var nb [8]byte
	binary.BigEndian.PutUint64(nb[:], id)
	if err := b.Set([]byte(keyNext), nb[:], nil); err != nil {
		return fmt.Errorf("lazymem: segment: append: %w", err)
	}
	if err := l.commit(b, pebble.Sync); err != nil {
		return wrapWrite("append commit", err)
	}
	recs := copyGroup(group, nbytes, l.tailScratch)
	l.segMu.Lock()
	l.tail.add(l.next, recs, int(nbytes))
	l.next = id
	l.tailCount += int64(n)
	l.tailBytes += nbytes
	full := l.tailCount >= int64(l.opts.SegmentRecords) || l.tailBytes >= int64(l.opts.SegmentBytes)
	l.segMu.Unlock()
	clear(recs) // the mirror has its own copy of the headers
	l.tailScratch = recs[:0]
	l.committed.Store(id)
	l.appends.Add(uint64(n))
	l.groups.Add(1)
	if full && !l.opts.DisableBackgroundSeal {
		select {
		case l.sealCh <- struct{}{}:
		default:
		}
	}
	return nil
}

// isClosed reports whether Close has begun. Callers that hold sealMu use
// it: Close sets closed before it takes sealMu and closes Pebble only
// while it holds it.
func (l *Log) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// Next returns the id the next appended record will get; every id in
// [1, Next()) has been assigned.
func (l *Log) Next() uint64 { return l.committed.Load() }

// Close stops background work and closes the store. Records in the unsealed
// tail stay durable and are sealed after the next Open.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	l.closed = true
	defer l.park.Stop()
	for l.committing {
		// Let an in-flight group finish before closing Pebble under it.
		l.mu.Unlock()
		l.sealMu.Lock()
		//lint:ignore SA2001 a barrier: wait for the sealer to leave its critical section
		l.sealMu.Unlock()
		l.mu.Lock()
		if l.committing {
			l.mu.Unlock()
			waitBrief()
			l.mu.Lock()
		}
	}
	l.mu.Unlock()
	close(l.stopCh)
	// The sealer ends, unless it is in a call into Pebble that a parked
	// goroutine holds up (park.go): then it is left behind, with sealMu.
	sealer := make(chan struct{})
	go func() { l.wg.Wait(); close(sealer) }()
	select {
	case <-sealer:
	case <-l.park.Done():
		select {
		case <-sealer:
		default:
			return fmt.Errorf("lazymem: segment: close: %w", l.park.Err())
		}
	}
	l.sealMu.Lock()
	defer l.sealMu.Unlock()
	if l.db != nil {
		l.flushOnClose() // closeflush.go
	}
	var err error
	switch ferr := l.fatalErr(); {
	case l.db == nil: // a reopen that failed
	case Parked(ferr):
		// Pebble's goroutine is parked holding the DB's mutex: Close would
		// wait for it forever. The store stays locked until the process
		// exits.
		err = ferr
	default:
		// Through ParkGuard.Call: Close waits for the flushes and compactions
		// running, and one of them can still be parked now (park.go).
		err = l.park.Call(func() error {
			if l.beforeClose != nil {
				l.beforeClose()
			}
			return l.db.Close()
		})
		if err != nil && ferr != nil && !Parked(err) {
			// The WAL writer's error again: what was acknowledged is synced.
			err = nil
		}
	}
	l.comp.close()
	if perr := purgeArchive(l.opts.FS, l.dir); err == nil {
		err = perr
	}
	if err != nil {
		return fmt.Errorf("lazymem: segment: close: %w", err)
	}
	return nil
}

// sortedCopy returns ids sorted ascending without duplicates.
func sortedCopy(ids []uint64) []uint64 {
	s := append([]uint64(nil), ids...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// Dir returns the directory the log lives in.
func (l *Log) Dir() string { return l.dir }
