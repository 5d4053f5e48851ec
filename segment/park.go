package segment

import "github.com/cockroachdb/pebble/v2"

// A Pebble goroutine that QuietLogger parks (a MANIFEST write or sync
// failed in a flush or compaction) holds Pebble's DB mutex and its
// flush or compaction for good. Every later call into Pebble that takes
// that mutex, or waits for that flush or compaction, never returns:
// DB.Close waits for the compaction, a commit that rotates the memtable
// (or commits a large batch) takes the mutex, a commit past the memtable
// limit waits for the flush, and Flush, Compact and Metrics take the
// mutex. Checking Parked before such a call is not enough: the park can
// come while the call runs (TestFaultInjectionFlushes hung in CI for its
// 2-minute limit, ENOSPC injected into a compaction's MANIFEST sync while
// Close waited in DB.Close for that compaction).
//
// So the log makes those calls through pebbleCall, which returns the
// parked report as soon as a goroutine is parked, and leaves the call
// behind. A batch whose commit was left behind is never closed (closeBatch):
// the call may still use it. The process must be restarted to release the
// store, as the report says; reads that do not need the mutex go on.

// pebbleCall runs fn, a call into Pebble that may wait for Pebble's DB
// mutex or for a flush or compaction, and returns its error; or, once one
// of this log's Pebble goroutines is parked, the parked report, without
// waiting for fn any longer.
func (l *Log) pebbleCall(fn func() error) error {
	if err := l.parkedErr(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-l.parked:
		select {
		case err := <-done: // fn ended too: its own result
			return err
		default:
			return l.parkedErr()
		}
	}
}

// noteParked records err, a report after which QuietLogger parks the
// calling goroutine (see onFatal), and wakes every pebbleCall.
func (l *Log) noteParked(err error) {
	if l.parkedReport.CompareAndSwap(nil, &err) {
		close(l.parked)
	}
}

// parkedErr returns the report after which a Pebble goroutine of this log
// was parked, or nil. It outlives reopens: a parked DB is never closed.
func (l *Log) parkedErr() error {
	if p := l.parkedReport.Load(); p != nil {
		return *p
	}
	return nil
}

// closeBatch closes b unless a Pebble goroutine is parked: a commit of b
// that pebbleCall left behind may still use it. (Any batch is left to the
// collector then; the store takes no more writes.)
func (l *Log) closeBatch(b *pebble.Batch) {
	if l.parkedErr() == nil {
		_ = b.Close()
	}
}
