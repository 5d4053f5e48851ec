package segment

import (
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

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
// So the log makes those calls through ParkGuard.Call, which returns the
// parked report as soon as a goroutine is parked, and leaves the call
// behind. A batch whose commit was left behind is never closed (closeBatch):
// the call may still use it. The process must be restarted to release the
// store, as the report says; reads that do not need the mutex go on.

// ParkGuard bounds the calls into a Pebble store that a parked goroutine
// can hold up for good (see above). Its zero value is ready; Note goes in
// the store's QuietLogger.OnFatal and Stop in the owner's Close. The log
// uses one; so should any other owner of a Pebble store with a
// QuietLogger.
//
// A call runs on a worker goroutine so that the caller can stop waiting
// for it. Workers stay for the next call until Stop (a commit used to
// start a goroutine of its own: four allocations per append); a call that
// finds no worker idle starts one, so calls never wait for each other.
type ParkGuard struct {
	init   sync.Once
	ch     chan struct{}
	report atomic.Pointer[error]

	// work hands a call to an idle worker (unbuffered: a send succeeds
	// only while one waits); quit, closed by Stop, sends idle workers home.
	work     chan *parkCall
	quit     chan struct{}
	stopOnce sync.Once
}

// parkCall is one call and its result, reused unless Call left it behind.
type parkCall struct {
	fn   func() error
	done chan error // buffered 1
}

var parkCalls = sync.Pool{New: func() any { return &parkCall{done: make(chan error, 1)} }}

// Done returns a channel closed once a goroutine of the store is parked.
func (g *ParkGuard) Done() <-chan struct{} {
	g.setup()
	return g.ch
}

func (g *ParkGuard) setup() {
	g.init.Do(func() {
		g.ch = make(chan struct{})
		g.work = make(chan *parkCall)
		g.quit = make(chan struct{})
	})
}

// Note records err if it is a report after which QuietLogger parks the
// calling goroutine (Parked), and wakes every Call.
func (g *ParkGuard) Note(err error) {
	if Parked(err) && g.report.CompareAndSwap(nil, &err) {
		g.Done() // made before it is closed
		close(g.ch)
	}
}

// Err returns the report after which a goroutine of the store was parked,
// or nil. A parked store is never closed or written again.
func (g *ParkGuard) Err() error {
	if p := g.report.Load(); p != nil {
		return *p
	}
	return nil
}

// Call runs fn, a call into Pebble that may wait for Pebble's DB mutex
// or for a flush or compaction, and returns its error; or, once a
// goroutine of the store is parked, the parked report, without waiting
// for fn any longer (fn runs on, left behind). Call is safe for
// concurrent use, and after Stop (each call then has a goroutine of its
// own, as a store being closed makes few).
func (g *ParkGuard) Call(fn func() error) error {
	if err := g.Err(); err != nil {
		return err
	}
	g.setup()
	c := parkCalls.Get().(*parkCall)
	c.fn = fn
	select {
	case g.work <- c:
	default:
		go g.worker(c)
	}
	select {
	case err := <-c.done:
		c.fn = nil
		parkCalls.Put(c)
		return err
	case <-g.ch:
		select {
		case err := <-c.done: // fn ended too: its own result
			return err
		default:
			return g.Err() // c stays with its worker
		}
	}
}

// worker runs c, then the calls handed to it while it waits idle, until
// Stop or until a goroutine of the store is parked.
func (g *ParkGuard) worker(c *parkCall) {
	for {
		c.done <- c.fn()
		select {
		case c = <-g.work:
		case <-g.quit:
			return
		case <-g.ch:
			return
		}
	}
}

// Stop sends the idle workers home; the owner calls it once its store is
// closed (or left parked). Later calls still work.
func (g *ParkGuard) Stop() {
	g.setup()
	g.stopOnce.Do(func() { close(g.quit) })
}

// CloseBatch closes b unless a goroutine of the store is parked: a
// commit of b that Call left behind may still use it. (Any batch is left
// to the collector then; the store takes no more writes.)
func (g *ParkGuard) CloseBatch(b *pebble.Batch) {
	if g.Err() == nil {
		_ = b.Close()
	}
}

// Stopped returns the report after which a goroutine of the log's
// storage engine was parked (ErrStopped wraps it), or nil: once it is
// non-nil the log takes no more writes until the process restarts.
func (l *Log) Stopped() error { return l.park.Err() }

// closeBatch is the log's CloseBatch.
func (l *Log) closeBatch(b *pebble.Batch) { l.park.CloseBatch(b) }
