package segment

import (
	"encoding/binary"
	"fmt"
	"math"
	"syscall"
	"time"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
	"github.com/cockroachdb/pebble/v2"
)

// rdb returns the Pebble DB for reading, with dbMu held shared: the caller
// must call l.dbMu.RUnlock once done with it and with anything read from
// it. A reopen that failed left no DB: reads then fail with ErrFailed.
func (l *Log) rdb() (*pebble.DB, error) {
	l.dbMu.RLock()
	if l.db == nil {
		l.dbMu.RUnlock()
		return nil, fmt.Errorf("%w: the store could not be reopened after a full disk", ErrFailed)
	}
	return l.db, nil
}

// reopen closes and reopens Pebble after a write failed for want of space:
// a WAL writer that failed keeps its error, so the same DB takes no more
// commits (see QuietLogger). The caller is the commit leader: no append
// runs. Acknowledged records are synced in the WAL or in sstables and come
// back with the reopen; the records of the failed group, which were never
// acknowledged, are deleted again if the WAL kept them. The in-memory
// state is rebuilt from the store, as by Open.
func (l *Log) reopen() error {
	l.sealMu.Lock()
	defer l.sealMu.Unlock()
	// TryLock, not Lock: a reader may read again from inside a callback
	// (Scan's fn calling Get), and a waiting Lock would block that second
	// RLock while the first waits for it.
	for deadline := time.Now().Add(2 * time.Second); !l.dbMu.TryLock(); {
		if time.Now().After(deadline) {
			// Still a full-disk error for the caller (ErrDiskFull and
			// ENOSPC); the next append tries again.
			return fmt.Errorf("%w: reopen postponed, reads in progress: %w", ErrDiskFull, syscall.ENOSPC)
		}
		waitBrief()
	}
	defer l.dbMu.Unlock()
	l.reopens.Add(1)
	committed := l.committed.Load()
	if l.db != nil {
		// Fails with the WAL writer's error; nothing acknowledged is lost.
		// Parked meanwhile, the DB never closes (park.go): no reopen, and
		// no reads of a DB being closed.
		err := l.park.Call(l.db.Close)
		l.db = nil
		if Parked(err) {
			return fmt.Errorf("%w: reopen after a full disk: %w", ErrFailed, err)
		}
	}
	db, roErr, err := l.openPebble()
	if err != nil {
		return fmt.Errorf("%w: reopen after a full disk: %w", ErrFailed, err)
	}
	l.db = db
	l.commitMu.Lock()
	l.unsynced = 0 // a new WAL
	l.commitMu.Unlock()
	if roErr == nil {
		// Drop what the failed group may have left: ids from committed on
		// were never acknowledged, and must not appear after the next
		// restart.
		b := db.NewBatch()
		defer l.closeBatch(b)
		var nb [8]byte
		binary.BigEndian.PutUint64(nb[:], committed)
		if err := b.DeleteRange(makeKey(prefixTail, committed), makeKey(prefixTail, math.MaxUint64), nil); err != nil {
			return err
		}
		if err := b.Set([]byte(keyNext), nb[:], nil); err != nil {
			return err
		}
		if err := l.commit(b, pebble.Sync); err != nil {
			return wrapWrite("reopen", err)
		}
	}
	// Rebuild the state from the store: a seal committed without sync just
	// before the disk filled may not have reached it.
	l.segMu.Lock()
	defer l.segMu.Unlock()
	l.segs, l.sealed, l.tailCount, l.tailBytes = nil, 0, 0, 0
	l.deleted = roaring64.New()
	l.tail = tailMirror{max: l.tail.max}
	l.cache.reset()
	if err := l.recover(); err != nil {
		return fmt.Errorf("%w: reopen after a full disk: %w", ErrFailed, err)
	}
	if l.next > committed {
		// Read-only: the failed group's records may be in the WAL; they
		// were never acknowledged.
		l.next = committed
		l.committed.Store(committed)
	}
	if roErr != nil {
		return roErr
	}
	l.makeReserve()
	return nil
}
