package segment

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// An Open that Pebble can never finish. pebble.Open (v2.1.7) replays the
// WAL into memtables, schedules their flush and waits until no flush is
// running. A flush that fails is retried at once, by the goroutine that
// ran it, before it tells Open the flush ended (DB.flush sets flushing
// false and schedules the next flush under one hold of the DB's mutex), so
// Open waits as long as flushes fail. Some failures are for good: once a
// MANIFEST write or sync failed, Pebble's MANIFEST writer keeps the error
// and every retry fails the same way, so Open on a disk failing MANIFEST
// writes hung, retrying without end (an earlier flush-at-Close hung
// TestFaultInjection/write there; TestOpenStuckFlush reproduces it).
//
// Pebble offers no way to end such an Open from outside. So the log runs
// pebble.Open on a goroutine of its own and watches the flushes Open
// makes (EventListener.FlushEnd, which Pebble calls from the flushing
// goroutine with the DB's mutex held, before it retries): a flush that
// failed after a fatal report of this Open (a MANIFEST write), or
// openFlushTries flushes in a row failed for another reason than space,
// mean the Open cannot end. The listener then hands the error to the
// caller of Open, which returns it, and parks the flushing goroutine for
// good, as QuietLogger parks a flush whose MANIFEST write failed after
// Open: retrying would spin on the CPU, and that goroutine holds the DB's
// mutex, so the abandoned Open waits for good too. Both goroutines, and
// the store's directory lock, stay until the process exits: the error
// wraps ErrStopped. Nothing stored is lost: a flush that did not record
// its result in the MANIFEST deletes no WAL, and the next Open, on a
// healthy disk, replays the same WAL.
//
// A flush failing for want of space is not counted: Pebble retries it
// (slowed by the listener's backoff) until the space reserve or the
// operator frees room, as before.

// openFlushTries is how many flushes in a row may fail, for a reason other
// than space and with no fatal report, before an Open is abandoned: a
// single failed sstable write is retried by Pebble and may succeed.
const openFlushTries = 3

// openWatch is one pebble.Open that an OpenWatch watches.
type openWatch struct {
	once  sync.Once
	stuck chan error // buffered 1: the reason the Open cannot end
	fails int        // flushes in a row that failed (under Pebble's DB mutex)
}

// OpenWatch runs the pebble.Open of one store so that it cannot hang on a
// flush that cannot succeed (see above). The log uses one for its store;
// the engine's other Pebble stores (its core store, the embedding cache's
// disk tier) use their own: each replays its WAL at Open as the log does.
// The store's options must send every FlushEnd to FlushEnd.
type OpenWatch struct {
	// Dir names the store in errors.
	Dir string
	// Fatal returns the first fatal report of the store's logger during
	// this Open (nil for none): a flush that failed after one cannot
	// succeed.
	Fatal func() error
	// Park, when not nil, is noted when an Open is abandoned: the parked
	// flush may hold up calls into the store.
	Park *ParkGuard
	// Logf, when not nil, logs the abandoned Open.
	Logf func(format string, args ...any)

	cur atomic.Pointer[openWatch] // the Open running
}

// Open calls open (a pebble.Open of the store) on a goroutine of its own
// and returns what it returns, or an error wrapping ErrFailed and
// ErrStopped when the Open's flush cannot succeed (see above). The
// abandoned Open and its flush stay parked, holding the store's directory
// lock, until the process exits.
func (o *OpenWatch) Open(open func() (*pebble.DB, error)) (*pebble.DB, error) {
	w := &openWatch{stuck: make(chan error, 1)}
	o.cur.Store(w)
	type result struct {
		db  *pebble.DB
		err error
	}
	done := make(chan result, 1)
	go func() {
		db, err := open()
		o.cur.CompareAndSwap(w, nil) // Open returned: later flushes are no longer its own
		done <- result{db, err}
	}()
	select {
	case r := <-done:
		return r.db, r.err
	case err := <-w.stuck:
		return nil, err
	}
}

// openDB is openRecovering watched by the log's OpenWatch.
func (l *Log) openDB(popts *pebble.Options) (*pebble.DB, error) {
	return l.opener.Open(func() (*pebble.DB, error) { return openRecovering(l.dir, popts) })
}

// FlushEnd is to be called by the store's event listener for every flush
// that ends. While an Open is watched, a flush that failed for good parks
// the calling goroutine (Pebble's flush) and hands the error to Open.
func (o *OpenWatch) FlushEnd(info pebble.FlushInfo) {
	w := o.cur.Load()
	if w == nil {
		return
	}
	if info.Err == nil || info.Err.Error() == "pebble: empty table" {
		w.fails = 0
		return
	}
	var fatal error
	if o.Fatal != nil {
		fatal = o.Fatal()
	}
	if fatal == nil && isDiskFull(info.Err) {
		return // retried until space returns (see above)
	}
	w.fails++
	if fatal == nil && w.fails < openFlushTries {
		return
	}
	cause := info.Err
	if fatal != nil {
		cause = fatal
	}
	err := &openStuckError{dir: o.Dir, tries: w.fails, cause: cause}
	w.once.Do(func() {
		if o.Logf != nil {
			o.Logf("%v", err)
		}
		// Should pebble.Open have returned meanwhile (the failed flush was
		// scheduled at its end), the caller holds a store with a parked
		// flush: the ParkGuard then bounds the calls it would hold up.
		if o.Park != nil {
			o.Park.Note(&pebbleFatal{msg: err.Error(), cause: cause, parked: true})
		}
		w.stuck <- err
	})
	o.cur.CompareAndSwap(w, nil)
	select {} // see above: a retry would fail again, and Open waits for it
}

// openStuckError is the error of an Open abandoned because its flush
// cannot succeed: it wraps ErrFailed, ErrStopped and the flush's cause.
type openStuckError struct {
	dir   string
	tries int
	cause error
}

func (e *openStuckError) Error() string {
	cause := e.cause.Error()
	var pf *pebbleFatal
	if errors.As(e.cause, &pf) {
		cause = pf.msg
	}
	tries := "1 flush failed"
	if e.tries > 1 {
		tries = fmt.Sprintf("%d flushes failed", e.tries)
	}
	return fmt.Sprintf("lazymem: segment: open %q: the storage engine cannot flush the WAL it replayed (%s: %s); "+
		"every record is still in the WAL: restart the process on a healthy disk", e.dir, tries, cause)
}

func (e *openStuckError) Unwrap() []error { return []error{ErrFailed, ErrStopped, e.cause} }
