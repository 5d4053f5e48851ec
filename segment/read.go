package segment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// locate reports where id lives: in a sealed segment (inSeg, with its
// summary copied out), or in the tail.
func (l *Log) locate(id uint64) (m segMeta, inSeg, dropped bool) {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	if id >= l.sealed {
		return m, false, false
	}
	if p := findSeg(l.segs, id); p != nil {
		return *p, true, false
	}
	return m, false, true
}

func (l *Log) isTombstoned(id uint64) bool {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	return l.deleted.Contains(id)
}

// load returns the decompressed segment described by m, from the cache when
// it can.
func (l *Log) load(m segMeta) (*decoded, error) {
	if d := l.cache.get(m.first); d != nil {
		return d, nil
	}
	epoch := l.cache.epoch.Load()
	d, closer, err := l.read(m, false)
	if err != nil {
		return nil, err
	}
	closer.Close()
	l.cache.put(m.first, d, epoch)
	return d, nil
}

// settleTables waits, at most settleMax, for the end of Pebble's initial
// scan of its tables' statistics, which it starts in the background when
// it opens: the scan opens every sstable of the log (~23 at 1M records)
// and reads its properties, about 1 ms of CPU, and a read right after
// Open shared the cores with it and opened the tables it read itself
// (docs/benchmarks/cold.md). Open returns with the tables open instead.
func (l *Log) settleTables() {
	if l.readOnly.Load() {
		return // Pebble collects no statistics read-only
	}
	deadline := time.Now().Add(settleMax)
	for !l.db.Metrics().Table.InitialStatsCollectionComplete && time.Now().Before(deadline) {
		time.Sleep(100 * time.Microsecond)
	}
}

// warmIndexes loads into Pebble's block cache the index block of every
// sstable holding sealed segments, by a Get inside each table's key range
// (which loads the table's index block and one data block). A new
// process's first read of a segment otherwise loads its table's index
// block first: a cold recall's ~38 segments lie in ~25 of the 1M Zipf
// log's 45 tables. Measured (BenchmarkColdOpenRead on that log, 50
// random records right after Open, three alternated rounds at load 4-7):
// CPU of the reads 4.06-4.64 ms -> 3.64-4.24 ms (-9 to -12% in each
// round), the Open's wall time within its noise (94-122 ms both ways);
// docs/benchmarks/cold.md, tenth pass. Errors are left to the reads,
// which report them.
func (l *Log) warmIndexes() {
	levels, err := l.db.SSTables()
	if err != nil {
		return
	}
	lo, hi := []byte{prefixSegment}, []byte{prefixSegment + 1}
	n := 0
	for _, level := range levels {
		for _, t := range level {
			if bytes.Compare(t.Largest.UserKey, lo) < 0 || bytes.Compare(t.Smallest.UserKey, hi) >= 0 {
				continue // no segment in it
			}
			if n++; n > warmMaxTables {
				return
			}
			k := t.Smallest.UserKey
			if bytes.Compare(k, lo) < 0 {
				k = lo // a table that starts before the segments' prefix
			}
			if _, closer, err := l.db.Get(k); err == nil {
				closer.Close()
			}
		}
	}
}

// warmMaxTables bounds warmIndexes: each table warmed holds an index
// block and a data block (~10-15 KiB on the 1M logs) in Pebble's block
// cache (8 MiB, Pebble's default), which later reads would evict past a
// few hundred tables (~10M records).
const warmMaxTables = 256

// settleMax bounds settleTables: a log of many tables on a slow disk
// opens without waiting for all of them. A variable so that a test on a
// loaded machine can wait for the scan's end, not for a time.
var settleMax = 50 * time.Millisecond

// tombstonedRun appends to dst, for each id of run, whether it is
// tombstoned, under one lock.
func (l *Log) tombstonedRun(dst []bool, run []uint64) []bool {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	none := l.deleted.IsEmpty()
	for _, id := range run {
		dst = append(dst, !none && l.deleted.Contains(id))
	}
	return dst
}

// tombstones appends the tombstoned ids in [lo, hi) to dst, ascending.
func (l *Log) tombstones(dst []uint64, lo, hi uint64) []uint64 {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	it := l.deleted.Iterator()
	it.AdvanceIfNeeded(lo)
	for it.HasNext() {
		id := it.Next()
		if id >= hi {
			break
		}
		dst = append(dst, id)
	}
	return dst
}

// errSegmentGone: the segment was dropped (retention) between the caller's
// locate and its read; callers skip its records. Before, a
// read racing DropBefore reported the missing value as corruption.
var errSegmentGone = errors.New("lazymem: segment: segment dropped during the read")

// read reads, verifies and decompresses the segment described by m from
// Pebble, bypassing the cache. With alias, an uncompressed segment is not
// copied out of Pebble's block: it is valid until closer is closed, which
// the caller must do (also without alias) once done with it.
func (l *Log) read(m segMeta, alias bool) (*decoded, io.Closer, error) {
	l.cache.misses.Add(1)
	db, err := l.rdb()
	if err != nil {
		return nil, nil, err
	}
	d, closer, err := l.readLocked(db, m, alias)
	if err != nil {
		l.dbMu.RUnlock()
		return nil, nil, l.counted(err)
	}
	return d, unlockCloser{closer, &l.dbMu}, nil
}

// unlockCloser closes a Pebble value, then releases the shared dbMu held
// while it was in use.
type unlockCloser struct {
	c  io.Closer
	mu interface{ RUnlock() }
}

func (u unlockCloser) Close() error {
	err := u.c.Close()
	u.mu.RUnlock()
	return err
}

// counted counts a *CorruptionError on its way to the caller.
func (l *Log) counted(err error) error {
	if IsCorruption(err) {
		l.corruptions.Add(1)
	}
	return err
}

// pebbleErr turns an error Pebble returned for a read of the record or
// segment id into a *CorruptionError when Pebble found the bytes damaged.
func pebbleErr(id uint64, op string, err error) error {
	if pebble.IsCorruptionError(err) {
		return &CorruptionError{Segment: id, Offset: -1, Err: err}
	}
	return fmt.Errorf("lazymem: segment: %s %d: %w", op, id, err)
}

// value reads the stored value of segment m; the caller closes closer.
func value(db *pebble.DB, m segMeta) ([]byte, io.Closer, error) {
	v, closer, err := db.Get(makeKey(prefixSegment, m.first))
	if err != nil {
		if errors.Is(err, pebble.ErrNotFound) {
			// DropBefore deletes the value and its summary in one batch
			// (and updates l.segs only after): both gone is a drop that
			// raced the caller's locate, not corruption.
			if _, c, err := db.Get(makeKey(prefixSegMeta, m.first)); errors.Is(err, pebble.ErrNotFound) {
				return nil, nil, errSegmentGone
			} else if err == nil {
				c.Close()
			}
			return nil, nil, &CorruptionError{Segment: m.first, Err: fmt.Errorf("%w: segment value missing for its summary", ErrFormat)}
		}
		return nil, nil, pebbleErr(m.first, "read segment", err)
	}
	return v, closer, nil
}

func (l *Log) readLocked(db *pebble.DB, m segMeta, alias bool) (*decoded, io.Closer, error) {
	// The value and its decoding under one hold of the names' readers
	// lock: a compaction's gcNames does not remove a name meanwhile.
	l.names.readers.RLock()
	defer l.names.readers.RUnlock()
	v, closer, err := value(db, m)
	if err != nil {
		return nil, nil, err
	}
	d, err := l.comp.openSegment(m.first, v, alias)
	if err != nil {
		closer.Close()
		return nil, nil, err
	}
	if len(d.dead) != int(m.count) {
		closer.Close()
		return nil, nil, &CorruptionError{Segment: m.first, Err: fmt.Errorf("%w: segment holds %d records, summary says %d", ErrFormat, len(d.dead), m.count)}
	}
	return d, closer, nil
}

// Get appends the payload of record id to dst and returns it.
func (l *Log) Get(id uint64, dst []byte) ([]byte, error) {
	if id == 0 || id >= l.committed.Load() {
		return dst, fmt.Errorf("%w: id %d", ErrNotFound, id)
	}
	if l.isTombstoned(id) {
		return dst, fmt.Errorf("%w: id %d", ErrDeleted, id)
	}
	for attempt := 0; attempt < 3; attempt++ {
		m, inSeg, dropped := l.locate(id)
		if dropped {
			return dst, fmt.Errorf("%w: id %d (its segment was dropped)", ErrDeleted, id)
		}
		if inSeg {
			d, err := l.load(m)
			if errors.Is(err, errSegmentGone) {
				return dst, fmt.Errorf("%w: id %d (its segment was dropped)", ErrDeleted, id)
			}
			if IsCorruption(err) {
				// A framed segment may have lost a text frame, not this
				// record: read the record alone.
				return l.getOne(m, id, dst)
			}
			if err != nil {
				return dst, err
			}
			p, ok := d.get(id)
			if !ok {
				return dst, fmt.Errorf("%w: id %d", ErrDeleted, id)
			}
			return append(dst, p...), nil
		}
		dst, err := l.getTail(id, dst)
		if errors.Is(err, pebble.ErrNotFound) {
			continue // sealed between locate and Get: look again
		}
		return dst, l.counted(err)
	}
	return dst, fmt.Errorf("lazymem: segment: get %d: record moved repeatedly during read", id)
}

// getTail appends the payload of tail record id to dst; pebble.ErrNotFound
// means it is not in the tail (any more).
func (l *Log) getTail(id uint64, dst []byte) ([]byte, error) {
	db, err := l.rdb()
	if err != nil {
		return dst, err
	}
	defer l.dbMu.RUnlock()
	v, closer, err := db.Get(makeKey(prefixTail, id))
	if errors.Is(err, pebble.ErrNotFound) {
		return dst, err
	}
	if err != nil {
		return dst, pebbleErr(id, "get", err)
	}
	defer closer.Close()
	if len(v) == 0 || v[0] > tailDeleted {
		return dst, &CorruptionError{Segment: id, Err: fmt.Errorf("%w: tail record state byte", ErrFormat)}
	}
	if v[0] == tailDeleted {
		return dst, fmt.Errorf("%w: id %d", ErrDeleted, id)
	}
	return append(dst, v[1:]...), nil
}

// GetMany calls fn for every live record among ids, in ascending id order,
// reading each segment at most once. Ids that are unknown or deleted are
// skipped. payload is valid only during the call.
//
// Records found in a cached segment or in the record cache are served from
// memory. A segment that must be read is not cached whole: the records
// read from it are (see segCache), so a recall's scattered reads keep
// their records, not 64 KiB around each.
func (l *Log) GetMany(ids []uint64, fn func(id uint64, payload []byte) error) error {
	if len(ids) == 0 {
		return nil
	}
	s := ids
	if !sort.SliceIsSorted(s, func(i, j int) bool { return s[i] < s[j] }) {
		s = sortedCopy(ids)
	}
	committed := l.committed.Load()
	var buf []byte
	for i := 0; i < len(s); i++ {
		id := s[i]
		if id == 0 || id >= committed || (i > 0 && id == s[i-1]) {
			continue
		}
		m, inSeg, dropped := l.locate(id)
		if dropped {
			continue
		}
		if !inSeg {
			var err error
			buf, err = l.Get(id, buf[:0]) // checks the tombstones
			if errors.Is(err, ErrDeleted) {
				continue
			}
			if err != nil {
				return err
			}
			if err := fn(id, buf); err != nil {
				return err
			}
			continue
		}
		// The run of ids in this segment: s[i:j] (getRun checks their
		// tombstones).
		j := i + 1
		for j < len(s) && s[j] < m.end() {
			j++
		}
		if err := l.getRun(m, s[i:j], fn); err != nil {
			return err
		}
		i = j - 1
	}
	return nil
}

// getRun serves the ids of run, all inside segment m, ascending, possibly
// with duplicates: from a cached segment, else from the record cache, else
// by reading the segment once and caching the records read, or the whole
// segment once its cached records are a quarter of its size.
func (l *Log) getRun(m segMeta, run []uint64, fn func(id uint64, payload []byte) error) error {
	// Tombstones as of now, before any read: a compaction that rewrites
	// the segment meanwhile clears them, and a copy read before it would
	// then show the deleted records live.
	var deadBuf [8]bool
	dead := l.tombstonedRun(deadBuf[:0], run)
	if d := l.cache.get(m.first); d != nil {
		return serveRun(d, run, dead, fn)
	}
	miss := -1
	for k, id := range run {
		if k > 0 && id == run[k-1] {
			continue
		}
		p, ok := l.cache.getRecord(id)
		if !ok {
			miss = k
			break
		}
		if !dead[k] {
			if err := fn(id, p); err != nil {
				return err
			}
		}
	}
	if miss < 0 {
		return nil
	}
	run, dead = run[miss:], dead[miss:] // read the segment for the rest of the run
	epoch := l.cache.epoch.Load()
	if l.cache.denseRecords(m.first, m.decodedSize()) {
		// Its records are read often enough (a small log, a busy stretch
		// of time) that the whole segment is worth its bytes.
		d, closer, err := l.read(m, false)
		if errors.Is(err, errSegmentGone) {
			return nil // dropped meanwhile: its records are gone
		}
		if err != nil {
			return err
		}
		closer.Close()
		l.cache.put(m.first, d, epoch)
		return serveRun(d, run, dead, fn)
	}
	return l.readPart(m, run, dead, epoch, fn)
}

// getOne appends the payload of id, in segment m, to dst, reading it
// alone (readPart): a framed segment that cannot be read whole may still
// hold it intact.
func (l *Log) getOne(m segMeta, id uint64, dst []byte) ([]byte, error) {
	found := false
	err := l.readPart(m, []uint64{id}, []bool{false}, l.cache.epoch.Load(), func(_ uint64, p []byte) error {
		dst, found = append(dst, p...), true
		return nil
	})
	switch {
	case errors.Is(err, errSegmentGone):
		return dst, fmt.Errorf("%w: id %d (its segment was dropped)", ErrDeleted, id)
	case err != nil:
		return dst, err
	case !found:
		return dst, fmt.Errorf("%w: id %d", ErrDeleted, id)
	}
	return dst, nil
}

// readPart serves the ids of run (ascending, possibly repeated; dead[k]
// marks run[k] tombstoned) from segment m, read now, and caches the
// records it read. A framed segment (version 3) decompresses only its
// head and the text frames the records need; a record of a damaged text
// frame is a *CorruptionError, returned once the run's other records
// are served. Earlier versions decompress the whole segment.
func (l *Log) readPart(m segMeta, run []uint64, dead []bool, epoch uint64, fn func(id uint64, payload []byte) error) error {
	l.cache.misses.Add(1)
	db, err := l.rdb()
	if err != nil {
		return err
	}
	defer l.dbMu.RUnlock()
	l.names.readers.RLock() // see readLocked
	defer l.names.readers.RUnlock()
	v, closer, err := value(db, m)
	if errors.Is(err, errSegmentGone) {
		return nil // dropped meanwhile: its records are gone
	}
	if err != nil {
		return l.counted(err)
	}
	defer closer.Close()
	if len(v) > 0 && isFramed(v[0]) {
		ids := make([]uint64, 0, len(run))
		for k, id := range run {
			if !dead[k] && (len(ids) == 0 || ids[len(ids)-1] != id) && id >= m.first && id < m.end() {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			return nil
		}
		var first error
		err := l.comp.readFramed(m.first, v, m.count, ids, func(id uint64, p []byte, gone bool, err error) error {
			switch {
			case err != nil:
				if first == nil {
					first = err
				}
				return nil
			case gone:
				return nil
			}
			l.cache.putRecord(m.first, id, p, epoch)
			return fn(id, p)
		})
		if err == nil {
			err = first
		}
		return l.counted(err)
	}
	d, err := l.comp.openSegment(m.first, v, true)
	if err == nil && len(d.dead) != int(m.count) {
		err = &CorruptionError{Segment: m.first, Err: fmt.Errorf("%w: segment holds %d records, summary says %d", ErrFormat, len(d.dead), m.count)}
	}
	if err != nil {
		return l.counted(err)
	}
	for k, id := range run {
		if k > 0 && id == run[k-1] {
			continue
		}
		if p, ok := d.get(id); ok {
			l.cache.putRecord(m.first, id, p, epoch)
		}
	}
	return serveRun(d, run, dead, fn)
}

// serveRun calls fn for the live records of run in d; dead[k] marks run[k]
// as tombstoned when the run began (a deletion during the call may or may
// not be seen, as with any read concurrent with a delete).
func serveRun(d *decoded, run []uint64, dead []bool, fn func(id uint64, payload []byte) error) error {
	for k, id := range run {
		if k > 0 && id == run[k-1] || dead[k] {
			continue
		}
		if p, ok := d.get(id); ok {
			if err := fn(id, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// Scan calls fn for every live record with from <= id < to, ascending.
// payload is valid only during the call. It stops at the first error fn
// returns and returns it.
func (l *Log) Scan(from, to uint64, fn func(id uint64, payload []byte) error) error {
	if from == 0 {
		from = 1
	}
	if c := l.committed.Load(); to > c {
		to = c
	}
	id := from
	var ts []uint64
	for id < to {
		m, inSeg, dropped := l.locate(id)
		if dropped {
			// Skip to the next existing segment or the tail.
			l.segMu.RLock()
			i := searchSegs(l.segs, id)
			nextID := l.sealed
			if i < len(l.segs) {
				nextID = l.segs[i].first
			}
			l.segMu.RUnlock()
			id = nextID
			continue
		}
		if inSeg {
			// Tombstones before the read, as in getRun: a compaction that
			// rewrites the segment meanwhile clears them.
			ts = l.tombstones(ts[:0], id, min(m.end(), to))
			d, err := l.load(m)
			if errors.Is(err, errSegmentGone) {
				id = m.end() // dropped meanwhile: its records are gone
				continue
			}
			if err != nil {
				return err
			}
			for ; id < m.end() && id < to; id++ {
				for len(ts) > 0 && ts[0] < id {
					ts = ts[1:]
				}
				if len(ts) > 0 && ts[0] == id || l.isTombstoned(id) {
					continue
				}
				if p, ok := d.get(id); ok {
					if err := fn(id, p); err != nil {
						return err
					}
				}
			}
			continue
		}
		// Tail: iterate Pebble directly.
		n, err := l.scanTail(id, to, fn)
		if err != nil {
			return l.counted(err)
		}
		if n == id {
			l.segMu.RLock()
			moved := l.sealed > id
			l.segMu.RUnlock()
			if !moved {
				return nil
			}
		}
		id = n
	}
	return nil
}

// scanTail scans tail records in [from, to) and returns the id after the
// last one it saw. A concurrent seal may move records out from under the
// iterator; the caller then finds them in a segment.
func (l *Log) scanTail(from, to uint64, fn func(id uint64, payload []byte) error) (uint64, error) {
	db, err := l.rdb()
	if err != nil {
		return from, err
	}
	defer l.dbMu.RUnlock()
	it, err := db.NewIter(&pebble.IterOptions{
		LowerBound: makeKey(prefixTail, from),
		UpperBound: makeKey(prefixTail, to),
	})
	if err != nil {
		return from, err
	}
	defer it.Close()
	next := from
	for ok := it.First(); ok; ok = it.Next() {
		id, _ := keyID(it.Key())
		if id != next {
			return next, nil // records sealed under us: resume from segments
		}
		v := it.Value()
		if len(v) == 0 || v[0] > tailDeleted {
			return next, &CorruptionError{Segment: id, Err: fmt.Errorf("%w: tail record state byte", ErrFormat)}
		}
		if v[0] == tailLive {
			if err := fn(id, v[1:]); err != nil {
				return next, err
			}
		}
		next = id + 1
	}
	if err := it.Error(); err != nil {
		return next, pebbleErr(next, "scan tail from", err)
	}
	return next, nil
}

// Verify reads and checks every sealed segment (checksum, decompression,
// layout) without using or filling the cache, and returns every problem
// found, joined; each is a *CorruptionError naming its segment.
func (l *Log) Verify(ctx context.Context) error {
	l.segMu.RLock()
	segs := append([]segMeta(nil), l.segs...)
	l.segMu.RUnlock()
	var errs []error
	for _, m := range segs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := l.verifySegment(m); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// verifySegment reads and checks one sealed segment; nil if it is sound
// or was dropped meanwhile.
func (l *Log) verifySegment(m segMeta) error {
	db, err := l.rdb()
	if err != nil {
		return err
	}
	defer l.dbMu.RUnlock()
	l.names.readers.RLock() // see readLocked
	defer l.names.readers.RUnlock()
	v, closer, err := db.Get(makeKey(prefixSegment, m.first))
	if err != nil {
		if errors.Is(err, pebble.ErrNotFound) {
			return nil // dropped concurrently
		}
		return &CorruptionError{Segment: m.first, Offset: -1, Err: err}
	}
	d, err := l.comp.openSegment(m.first, v, true)
	closer.Close()
	if err != nil {
		return err
	}
	if len(d.dead) != int(m.count) {
		return &CorruptionError{Segment: m.first, Err: fmt.Errorf("%w: segment holds %d records, summary says %d", ErrFormat, len(d.dead), m.count)}
	}
	return nil
}

// SegmentStarts appends to dst, for each of ids (ascending), the first
// id of the sealed segment holding it, or the id itself when no sealed
// segment holds it (an unsealed record, or one dropped): records with the
// same start are read together, one segment read for all of them, by
// GetMany. A caller splitting ids between concurrent GetMany calls cuts
// between starts, so that no segment is read twice.
func (l *Log) SegmentStarts(ids []uint64, dst []uint64) []uint64 {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	for _, id := range ids {
		if p := findSeg(l.segs, id); p != nil && id < l.sealed {
			dst = append(dst, p.first)
		} else {
			dst = append(dst, id)
		}
	}
	return dst
}
