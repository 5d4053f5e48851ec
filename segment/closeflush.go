package segment

import (
	"context"
	"sync"

	"github.com/cockroachdb/pebble/v2"
)

// Flushing the memtable at Close. Every record is in Pebble's WAL raw until
// its memtable is flushed, and again inside its sealed segment: left at
// Close, the WAL holds up to a memtable of bytes until the next Open
// replays and flushes it (issue 16: the log was 0.59x of the text after
// Close on Zipf 200k, 0.50x after a reopen).
//
// A flush rotates the WAL, and Pebble panics when closing the old WAL fails
// (rotateWAL), with its mutex already unlocked, so the panic cannot be
// recovered. A failed write Pebble has not yet reported is what closing
// would hit: a commit without sync (a seal) leaves its bytes buffered in
// the WAL writer, and the writer's error reaches no one until the next
// sync. So the log notes every failed write or sync of a WAL file
// (reserveFile) and does not flush after one; and the flush first commits
// an empty record with sync, so that the buffered bytes are written now:
// if that fails, the commit fails (Pebble's fatal report) and the log does
// not flush. (A commit after the WAL writer kept an error can panic too,
// db.go's commitWrite, when its record reaches a new block: the noted
// failure keeps the log from making that commit: commitLocked refuses
// every commit once a WAL write failed.) After a synced commit with commitMu
// held, closing the WAL writes only its end-of-file trailer and syncs:
// what every memtable rotation inside a commit also does, with the same
// failure modes (TestFaultInjectionFlushes covers them in child
// processes: the process stops).

// closeFlushMin is the share of MemTableBytes the WAL must hold for Close
// to flush it: a smaller WAL costs a reopen less than the rotation, the
// sstables and the MANIFEST edit of a flush cost Close.
const closeFlushMin = 4 // wal.total() >= MemTableBytes / closeFlushMin

// flushOnClose flushes the memtable when the log is healthy and its WAL
// holds at least a quarter of a memtable (see above). A failure is logged,
// not returned: every acknowledged record is in the WAL, which the next
// Open replays. Called by Close with sealMu held, the sealer stopped.
func (l *Log) flushOnClose() {
	if !l.healthyForFlush() {
		return
	}
	wal := l.wal.total()
	if wal < l.opts.MemTableBytes/closeFlushMin {
		return
	}
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	if err := l.admit(int(min(wal, 1<<40))); err != nil {
		return // no room for the flush's sstables: the next Open flushes
	}
	b := l.db.NewBatch()
	err := b.LogData(nil, nil)
	if err == nil {
		err = l.commitLocked(b, pebble.Sync)
	}
	l.closeBatch(b)
	if err == nil {
		err = l.fatalErr()
	}
	if err != nil {
		l.logf("lazymem: segment: close: no flush, the WAL failed: %v", err)
		return
	}
	// commitMu stays held: no commit can put unsynced bytes in the WAL
	// before the flush rotates it.
	if err := l.flush(context.Background(), l.db); err != nil {
		l.logf("lazymem: segment: close: flush: %v", err)
	}
}

// healthyForFlush reports whether the log may rotate its WAL: no write
// has failed, no write or sync of a WAL file failed, Pebble made no fatal report, the store is writable, the
// space reserve (if the log has one) is held, and no flush or compaction
// is failing for want of space.
func (l *Log) healthyForFlush() bool {
	l.mu.Lock()
	failed := l.failed
	l.mu.Unlock()
	return failed == nil && l.fatalErr() == nil && l.walErr.Load() == nil && !l.readOnly.Load() &&
		(l.opts.ReserveBytes <= 0 || l.reserveHeld.Load()) &&
		l.bgFull.Load() == 0 && l.compFull.Load() == 0
}

// walSizes counts the bytes the log committed into each live WAL file:
// Close's measure of the WAL, kept by the log because DB.Metrics takes
// Pebble's mutex, which a flush installing its result holds while it
// writes the MANIFEST (TestParkedDuringClose hung in Close on it). Pebble
// reports each WAL it creates and deletes (EventListener); commits go to
// the newest. A WAL whose deletion failed stays counted: at worst Close
// flushes once more than it needed to.
type walSizes struct {
	mu    sync.Mutex
	cur   uint64            // the newest WAL's file number
	bytes map[uint64]uint64 // file number -> bytes committed into it
}

func (w *walSizes) created(num uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.bytes == nil {
		w.bytes = map[uint64]uint64{}
	}
	w.cur = num
	if _, ok := w.bytes[num]; !ok {
		w.bytes[num] = 0
	}
}

func (w *walSizes) deleted(num uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.bytes, num)
}

func (w *walSizes) add(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.bytes != nil {
		w.bytes[w.cur] += uint64(n)
	}
}

func (w *walSizes) total() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	var t uint64
	for _, n := range w.bytes {
		t += n
	}
	return t
}
