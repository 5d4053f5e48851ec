package segment

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Delete marks records deleted, durably. Reads of them return ErrDeleted at
// once; Compact then removes their bytes physically. Unknown ids are an
// error and nothing is deleted.
func (l *Log) Delete(ctx context.Context, ids []uint64) error {
	if len(ids) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s := sortedCopy(ids)
	committed := l.committed.Load()
	if s[0] == 0 || s[len(s)-1] >= committed {
		bad := s[0]
		if bad != 0 {
			bad = s[len(s)-1]
		}
		return fmt.Errorf("%w: cannot delete id %d (ids run from 1 to %d)", ErrNotFound, bad, committed-1)
	}
	// Hold sealMu so no seal moves a tail record while we choose how to
	// delete it.
	l.sealMu.Lock()
	defer l.sealMu.Unlock()
	l.segMu.RLock()
	sealed := l.sealed
	l.segMu.RUnlock()
	db, err := l.rdb()
	if err != nil {
		return err
	}
	defer l.dbMu.RUnlock()
	b := db.NewBatch()
	defer l.closeBatch(b)
	var sealedIDs []uint64
	for _, id := range s {
		if id >= sealed {
			// Tail record: overwrite with an empty deleted marker.
			if err := b.Set(makeKey(prefixTail, id), []byte{tailDeleted}, nil); err != nil {
				return err
			}
			continue
		}
		if err := b.Set(makeKey(prefixDeleted, id), nil, nil); err != nil {
			return err
		}
		sealedIDs = append(sealedIDs, id)
	}
	if err := l.commit(b, pebble.Sync); err != nil {
		return wrapWrite("delete", err)
	}
	l.segMu.Lock()
	for _, id := range sealedIDs {
		l.deleted.Add(id)
	}
	for _, id := range s {
		if id >= sealed {
			l.tail.markDeleted(id)
		}
	}
	l.segMu.Unlock()
	l.deletes.Add(uint64(len(s)))
	return nil
}

// Compact rewrites every segment that holds deleted records without their
// bytes, then has Pebble flush and compact so the old values are gone from
// the files on disk (privacy deletes).
func (l *Log) Compact(ctx context.Context) error {
	l.sealMu.Lock()
	l.segMu.RLock()
	var todo []segMeta
	it := l.deleted.Iterator()
	for it.HasNext() {
		id := it.Next()
		if p := findSeg(l.segs, id); p != nil && (len(todo) == 0 || todo[len(todo)-1].first != p.first) {
			todo = append(todo, *p)
		}
	}
	l.segMu.RUnlock()
	if err := l.compactDict(ctx, len(todo) > 0 || l.namesStale); err != nil {
		l.sealMu.Unlock()
		return err
	}
	for _, m := range todo {
		if err := ctx.Err(); err != nil {
			l.sealMu.Unlock()
			return err
		}
		if err := l.rewrite(m); err != nil {
			l.sealMu.Unlock()
			return err
		}
	}
	// The segments compressed with a dictionary other than the current
	// one (a rebuild just now, or one a crash interrupted) are rewritten
	// and those dictionaries deleted.
	if err := l.sweepDicts(ctx); err != nil {
		l.sealMu.Unlock()
		return err
	}
	if len(todo) > 0 || l.namesStale {
		// The rewritten (or dropped) segments may have held the last
		// references to names: those leave the table now, before the
		// flush and compaction below rewrite the files.
		if err := l.gcNames(); err != nil {
			l.sealMu.Unlock()
			return err
		}
		if err := l.gcWords(); err != nil {
			l.sealMu.Unlock()
			return err
		}
	}
	l.sealMu.Unlock()
	db, err := l.rdb()
	if err != nil {
		return err
	}
	defer l.dbMu.RUnlock()
	// A Flush after a failed WAL write panics in Pebble (the memtable
	// rotation closes the failed WAL writer): not after a fatal report.
	if err := l.fatalErr(); err != nil {
		return wrapWrite("compact", err)
	}
	// The flush rotates the WAL, which Pebble cannot survive failing: only
	// with the reserve held and room on the disk (as for a commit).
	// Compacting everything rewrites the store: it needs about the
	// store's size free, or it would fail part way (Pebble retries it) and
	// leave the disk fuller.
	var usage uint64
	if err := l.park.Call(func() error { usage = db.Metrics().DiskSpaceUsage(); return nil }); err != nil {
		return wrapWrite("compact", err)
	}
	need := int(min(usage, 1<<40))
	l.commitMu.Lock()
	err = l.admit(need)
	l.commitMu.Unlock()
	if err != nil {
		return fmt.Errorf("compact needs about %d bytes free: %w", need, err)
	}
	if err := l.flush(ctx, db); err != nil {
		return wrapWrite("compact flush", err)
	}
	if err := l.compactAll(ctx, db); err != nil {
		return wrapWrite("compact", err)
	}
	return purgeArchive(l.opts.FS, l.dir)
}

// DropBefore removes every sealed segment whose records all have ids below
// id (retention). It returns how many record slots were dropped. Records in
// a segment that straddles id, and unsealed records, are kept.
func (l *Log) DropBefore(ctx context.Context, id uint64) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	l.sealMu.Lock()
	defer l.sealMu.Unlock()
	l.segMu.RLock()
	n := 0
	for n < len(l.segs) && l.segs[n].end() <= id {
		n++
	}
	drop := append([]segMeta(nil), l.segs[:n]...)
	l.segMu.RUnlock()
	if n == 0 {
		return 0, nil
	}
	end := drop[n-1].end()
	// The dropped segments' words and names leave the counts; should the
	// drop fail, the next Compact counts every segment again.
	l.uncount(drop)
	db, err := l.rdb()
	if err != nil {
		l.use.ok = false
		return 0, err
	}
	defer l.dbMu.RUnlock()
	b := db.NewBatch()
	defer l.closeBatch(b)
	for _, k := range []byte{prefixSegment, prefixSegMeta, prefixDeleted} {
		if err := b.DeleteRange(makeKey(k, 0), makeKey(k, end), nil); err != nil {
			l.use.ok = false
			return 0, err
		}
	}
	if err := l.commit(b, pebble.Sync); err != nil {
		l.use.ok = false
		return 0, wrapWrite("drop", err)
	}
	records := 0
	l.segMu.Lock()
	l.segs = append(l.segs[:0:0], l.segs[n:]...)
	for _, m := range drop {
		records += int(m.count)
		l.cache.invalidate(m.first)
	}
	l.deleted.RemoveRange(0, end)
	l.segMu.Unlock()
	l.namesStale = true // the next Compact drops the names only they used
	l.droppedRecords.Add(uint64(records))
	return records, nil
}

// Metrics is a point-in-time snapshot of the log.
type Metrics struct {
	Next           uint64 // next id to assign; ids [1, Next) were assigned
	Appended       uint64 // records appended since Open
	Groups         uint64 // group commits (fsyncs) since Open
	TailRecords    int64  // records not yet sealed
	Segments       int    // sealed segments
	SealedRecords  uint64 // record slots in sealed segments
	RawBytes       int64  // payload bytes stored (sealed raw + tail)
	SegmentBytes   int64  // bytes of stored segment values (compressed)
	TailBytes      int64  // payload bytes in the unsealed tail
	DiskBytes      uint64 // Pebble's files on disk (sstables, WAL, manifest)
	Tombstones     uint64 // sealed records deleted and awaiting Compact
	Deleted        uint64 // records deleted since Open
	DroppedRecords uint64 // record slots dropped since Open
	CacheHits      uint64 // segments and records served from the cache
	CacheMisses    uint64 // segments read from Pebble
	CacheBytes     int64
	// Corruptions counts reads since Open that returned a
	// *CorruptionError (the same damaged record read twice counts twice).
	Corruptions uint64
	// PebbleCorruptions counts Pebble's reports of damaged blocks or files.
	PebbleCorruptions uint64
	// ReadOnly: Pebble is open read-only because the disk was full.
	ReadOnly bool
	// Reopens counts reopens of Pebble after a full disk.
	Reopens uint64
	// SealAssists counts segments sealed by appenders since Open because
	// the background sealer fell behind (the tail outgrew
	// sealAssistSegments segments).
	SealAssists uint64
	// AssistTimeouts counts appends since Open that stopped waiting for
	// the sealers' lock after assistMaxWait (held by the sealer, Compact,
	// DropBefore or Repair) and returned with the tail over its bound.
	AssistTimeouts uint64
	// WriteError is why writes fail now ("" when they work).
	WriteError string
}

// Metrics returns a snapshot.
func (l *Log) Metrics() Metrics {
	m := Metrics{
		Next:           l.committed.Load(),
		Appended:       l.appends.Load(),
		Groups:         l.groups.Load(),
		Deleted:        l.deletes.Load(),
		DroppedRecords: l.droppedRecords.Load(),
		CacheHits:      l.cache.hits.Load(),
		CacheMisses:    l.cache.misses.Load(),
		CacheBytes:     l.cache.bytes(),
	}
	l.segMu.RLock()
	m.TailRecords = l.tailCount
	m.TailBytes = l.tailBytes
	m.Segments = len(l.segs)
	m.Tombstones = l.deleted.GetCardinality()
	for i := range l.segs {
		s := &l.segs[i]
		m.SealedRecords += uint64(s.count)
		m.RawBytes += int64(s.raw)
		m.SegmentBytes += int64(s.stored)
	}
	l.segMu.RUnlock()
	m.RawBytes += m.TailBytes
	m.Corruptions = l.corruptions.Load()
	m.PebbleCorruptions = l.pebbleCorruptions.Load()
	m.ReadOnly = l.readOnly.Load()
	m.Reopens = l.reopens.Load()
	m.SealAssists = l.sealAssists.Load()
	m.AssistTimeouts = l.assistTimeouts.Load()
	l.mu.Lock()
	if l.failed != nil {
		m.WriteError = l.failed.Error()
	}
	l.mu.Unlock()
	if db, err := l.rdb(); err == nil {
		// Pebble's Metrics takes the mutex a parked goroutine holds.
		var usage uint64
		if l.park.Call(func() error { usage = db.Metrics().DiskSpaceUsage(); return nil }) == nil {
			m.DiskBytes = usage
		}
		l.dbMu.RUnlock()
	}
	return m
}

// Repair makes a segment reported by a *CorruptionError usable again by
// rewriting it with the records that can still be read alone (a framed
// segment's records outside its damaged text frames) and every other
// record deleted: the damaged records are lost (they were already
// unreadable), the ids stay assigned and the other segments are
// untouched. It returns how many records were lost. Repair refuses an
// error that does not name a sealed segment of this log.
func (l *Log) Repair(ctx context.Context, ce *CorruptionError) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if ce == nil {
		return 0, fmt.Errorf("lazymem: segment: repair: nil corruption error")
	}
	l.sealMu.Lock()
	defer l.sealMu.Unlock()
	l.segMu.RLock()
	i := searchSegs(l.segs, ce.Segment)
	var m segMeta
	found := i < len(l.segs) && l.segs[i].first == ce.Segment
	if found {
		m = l.segs[i]
	}
	l.segMu.RUnlock()
	if !found {
		return 0, fmt.Errorf("lazymem: segment: repair: %d is not the first id of a sealed segment", ce.Segment)
	}
	// Only a segment that really fails verification may be replaced.
	if err := l.verifySegment(m); err == nil {
		return 0, fmt.Errorf("lazymem: segment: repair: segment %d verifies clean; nothing to repair", m.first)
	} else if !IsCorruption(err) {
		return 0, err
	}
	var clear []uint64
	l.segMu.RLock()
	for id := m.first; id < m.end(); id++ {
		if l.deleted.Contains(id) {
			clear = append(clear, id)
		}
	}
	l.segMu.RUnlock()
	// Salvage what reads alone; a segment of an earlier version, read
	// whole, salvages nothing.
	payloads := make([][]byte, m.count)
	lost := 0
	for k := range payloads {
		id := m.first + uint64(k)
		if slices.Contains(clear, id) {
			continue
		}
		p, err := l.getOne(m, id, nil)
		if err != nil {
			lost++
			continue
		}
		payloads[k] = p
	}
	l.namesStale = true // the repaired segment's lost records may have held the last use of a name
	l.use.ok = false    // and its damaged value's words and names cannot be taken off the counts
	if _, err := l.writeSegment(m.first, payloads, clear); err != nil {
		return 0, err
	}
	return lost, nil
}

// flush flushes the memtable and waits for it, unless the flush fails for
// want of space: DB.Flush would then wait until space returns (Pebble
// retries a failed flush until it succeeds), and the flush goes on in the
// background.
func (l *Log) flush(ctx context.Context, db *pebble.DB) error {
	if p := l.bgErr.Load(); l.bgFull.Load() > 0 && p != nil {
		return diskFull("flush", *p)
	}
	var done <-chan struct{}
	err := l.park.Call(func() (err error) { done, err = db.AsyncFlush(); return err })
	if err != nil {
		return err
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-l.park.Done(): // the flush may be the goroutine parked
			return l.park.Err()
		case <-tick.C:
			if p := l.bgErr.Load(); l.bgFull.Load() > 0 && p != nil {
				return diskFull("flush", *p)
			}
		}
	}
}

// compactAll compacts the whole keyspace, unless a compaction, or the
// flush that DB.Compact starts first, fails for want of space: Pebble
// retries a failed manual compaction or flush until it succeeds, so
// DB.Compact would wait until space returns. It is cancelled then
// (compactions and flushes already running finish or fail on their own).
// The flush matters although Compact flushed just before: records sealed
// meanwhile fill the memtable again (TestDiskFullModel hung 4 minutes in
// DB.Compact waiting for such a flush, retried every 500 ms).
func (l *Log) compactAll(ctx context.Context, db *pebble.DB) error {
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	seen := l.pebbleCorruptions.Load()
	flushFails := l.bgFull.Load()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-cctx.Done():
				return
			case <-tick.C:
				// bgFull counts consecutive flushes that failed for want of
				// space (0 after one succeeds): any change to a non-zero
				// count is a flush failing now.
				if n := l.bgFull.Load(); l.compFull.Load() > 0 || (n > 0 && n != flushFails) {
					cancel(diskFull("compact", syscall.ENOSPC))
					return
				}
				if l.pebbleCorruptions.Load() > seen {
					// A damaged block in an sstable: the compaction
					// that reads it fails, and Pebble retries it for
					// good. Repair shadows a damaged segment but leaves
					// its block in the file.
					cancel(&CorruptionError{Offset: -1, Err: fmt.Errorf("%w: compact read a damaged block (run repair; the block stays in Pebble's files)", ErrChecksum)})
					return
				}
			}
		}
	}()
	err := l.park.Call(func() error { return db.Compact(cctx, []byte{0}, []byte{0xff}, true) })
	cancel(nil)
	<-watched
	if cause := context.Cause(cctx); err != nil && (isDiskFull(cause) || IsCorruption(cause)) {
		return cause
	}
	return err
}
