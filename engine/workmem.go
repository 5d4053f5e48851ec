package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Working memory: the turns of a live conversation are embedded in the
// background soon after they arrive, so that a question asked during a
// meeting finds their vectors in the cache instead of embedding them on
// its critical path. It is the one eager piece of the lazy design, and it
// is bounded four ways: only live turns (their time within
// WorkingMemoryOptions.Live of the DB's clock when appended: an import of
// history embeds nothing), only the last PerAppend turns of each append
// call (a bulk batch of 1000 queues 4), at most MaxPending queued (the
// oldest are dropped first: the newest turns are the ones a live question
// asks about), and at most PerMinute embedded a minute of the DB's clock
// (a token bucket holding a minute's worth: a stream of live messages
// faster than a meeting is not embedded eagerly, whatever the embedder's
// speed; a replay on a clock of its own is budgeted in its own minutes).
// Turns made only of pleasantries are not embedded.
//
// The records recalled most often need no such pass: every vector a
// recall computes is stored in the embedding cache's disk tier and read
// back by later recalls, across restarts.
//
// The worker reads each queued record back from the log, as a recall
// reads its candidates: a record forgotten before its turn is not read,
// and one forgotten while it is embedded does not enter the cache after
// Forget dropped its vectors (the cache refuses to store the vector of a
// record it was told to drop, vecCache.dropped). It holds no lock Forget,
// Compact or Backup waits for, so a slow embedder delays none of them.

// Defaults of WorkingMemoryOptions.
const (
	DefaultWorkingMemoryLive       = 15 * time.Minute
	DefaultWorkingMemoryPerAppend  = 4
	DefaultWorkingMemoryMaxPending = 64
	DefaultWorkingMemoryPerMinute  = 120
)

// workBatch is the most records the worker embeds in one call.
const workBatch = 16

// WorkingMemoryOptions configures the background embedding of live turns.
type WorkingMemoryOptions struct {
	// Disable turns working memory off: every vector is computed by the
	// recall that first needs it. It is off anyway without an embedder.
	Disable bool
	// Live is how close to the DB's clock a record's time must be for the
	// record to be live (a record without a time is stamped with the clock,
	// so it is). Default 15 minutes.
	Live time.Duration
	// PerAppend is the most live records one Append or AppendBatch call
	// queues: its last ones. Default 4.
	PerAppend int
	// MaxPending bounds the queue; when it is full the oldest queued
	// record is dropped. Default 64.
	MaxPending int
	// PerMinute is the most records embedded a minute, with bursts of up
	// to a minute's worth. Default 120.
	PerMinute int
}

func (o *WorkingMemoryOptions) ensureDefaults() {
	if o.Live == 0 {
		o.Live = DefaultWorkingMemoryLive
	}
	if o.PerAppend == 0 {
		o.PerAppend = DefaultWorkingMemoryPerAppend
	}
	if o.MaxPending == 0 {
		o.MaxPending = DefaultWorkingMemoryMaxPending
	}
	if o.PerMinute == 0 {
		o.PerMinute = DefaultWorkingMemoryPerMinute
	}
}

func (o *WorkingMemoryOptions) validate() error {
	switch {
	case o.Live < 0:
		return fmt.Errorf("%w: WorkingMemory.Live = %v, want > 0", ErrOptions, o.Live)
	case o.PerAppend < 0:
		return fmt.Errorf("%w: WorkingMemory.PerAppend = %d, want >= 1", ErrOptions, o.PerAppend)
	case o.MaxPending < 0:
		return fmt.Errorf("%w: WorkingMemory.MaxPending = %d, want >= 1", ErrOptions, o.MaxPending)
	case o.PerMinute < 0:
		return fmt.Errorf("%w: WorkingMemory.PerMinute = %d, want >= 1", ErrOptions, o.PerMinute)
	}
	return nil
}

// WorkingMemoryMetrics counts the working memory's work since Open.
type WorkingMemoryMetrics struct {
	Queued   uint64 // live records queued
	Dropped  uint64 // queued records dropped unembedded (the queue was full)
	Embedded uint64 // texts the worker embedded (cache misses it computed)
	Cached   uint64 // queued records whose vector was cached already
	Skipped  uint64 // queued records not embedded: forgotten, or only pleasantries
	Pending  int    // records queued now
}

// workMem is the queue of live records and its worker.
type workMem struct {
	mu      sync.Mutex
	queue   []uint64 // record ids, oldest first
	wake    chan struct{}
	idle    *sync.Cond // signalled when the worker has nothing left (Settle)
	busy    bool       // the worker holds a batch taken from the queue
	broke   bool       // the worker waits for budget tokens
	stopped bool
	// The budget's token bucket, on the DB's clock: full (a minute's
	// worth) at since; spent since then.
	since time.Time
	spent float64

	queued, dropped, embedded, cached, skipped atomic.Uint64
}

func newWorkMem(now time.Time) *workMem {
	w := &workMem{wake: make(chan struct{}, 1), since: now}
	w.idle = sync.NewCond(&w.mu)
	return w
}

// tokens is what the budget allows at now (w.mu held): a minute's worth
// refilled at perMinute a minute, less what was spent. The bucket is
// restarted full once it has refilled, so spent stays small. A clock
// that goes back refills nothing.
func (w *workMem) tokens(perMinute int, now time.Time) float64 {
	refill := max(now.Sub(w.since).Minutes(), 0) * float64(perMinute)
	if left := float64(perMinute) - w.spent + refill; left < float64(perMinute) {
		return left
	}
	w.since, w.spent = now, 0
	return float64(perMinute)
}

// noteAppend queues the last live records of one append call: recs with
// the ids the log gave them, now the clock at the append.
func (db *DB) noteAppend(recs []Record, ids []uint64, now time.Time) {
	w, o := db.work, &db.opts.WorkingMemory
	if w == nil {
		return
	}
	var live []uint64
	for i := len(recs) - 1; i >= 0 && len(live) < o.PerAppend; i-- {
		t := recs[i].Time
		if t.IsZero() || (now.Sub(t) <= o.Live && t.Sub(now) <= o.Live) {
			live = append(live, ids[i])
		}
	}
	if len(live) == 0 {
		return
	}
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return
	}
	for i := len(live) - 1; i >= 0; i-- { // oldest first
		w.queue = append(w.queue, live[i])
	}
	w.queued.Add(uint64(len(live)))
	w.broke = false // the worker looks at the budget again (Settle waits for it)
	if over := len(w.queue) - o.MaxPending; over > 0 {
		w.queue = append(w.queue[:0], w.queue[over:]...)
		w.dropped.Add(uint64(over))
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// workLoop is the worker: it embeds queued records until the DB closes.
func (db *DB) workLoop() {
	defer db.bgWG.Done()
	w := db.work
	for {
		w.mu.Lock()
		w.broke = false
		for len(w.queue) == 0 {
			w.busy = false
			w.idle.Broadcast()
			w.mu.Unlock()
			select {
			case <-db.bgStop:
				w.stop()
				return
			case <-w.wake:
			}
			w.mu.Lock()
		}
		n := min(len(w.queue), workBatch, int(w.tokens(db.opts.WorkingMemory.PerMinute, db.opts.Clock())))
		if n == 0 {
			// Out of budget: look again at the next append or after a
			// token's worth of wall time (appends meanwhile only fill
			// the queue, which drops its oldest); SettleWorkingMemory
			// stops waiting.
			w.busy, w.broke = true, true
			w.idle.Broadcast()
			w.mu.Unlock()
			select {
			case <-db.bgStop:
				w.stop()
				return
			case <-w.wake:
			case <-time.After(time.Minute / time.Duration(db.opts.WorkingMemory.PerMinute)):
			}
			continue
		}
		w.spent += float64(n)
		batch := append([]uint64(nil), w.queue[:n]...)
		w.queue = append(w.queue[:0], w.queue[n:]...)
		w.busy = true
		w.mu.Unlock()
		if err := db.embedLive(batch); err != nil {
			select {
			case <-db.bgStop: // Close cancelled it
			default:
				db.backgroundError(fmt.Errorf("lazymem: engine: working memory: %w", err))
			}
		}
	}
}

// embedLive embeds the records ids (those still live in the log) through
// the cache (see the top of this file for Forget).
func (db *DB) embedLive(ids []uint64) error {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil
	}
	w := db.work
	cands := make([]cand, len(ids))
	for i, id := range ids {
		cands[i].id = id
	}
	if err := db.fetch(cands, nil); err != nil {
		return err
	}
	var keys, texts []string
	var kids []uint64
	lx := theLexicon()
	for i := range cands {
		c := &cands[i]
		if !c.fetched || lx.lowInfo(c.rec.Text) {
			w.skipped.Add(1)
			continue
		}
		t := db.construct(&c.rec)
		texts = append(texts, t)
		keys = append(keys, cacheKey(c.rec.Agent, t))
		kids = append(kids, c.id)
	}
	if len(texts) == 0 {
		return nil
	}
	// Bounded by EmbedTimeout, and stopped by Close (which waits for the
	// worker) rather than left to run out.
	ctx, cancel := context.WithTimeout(context.Background(), db.opts.EmbedTimeout)
	defer cancel()
	go func() {
		select {
		case <-db.bgStop:
			cancel()
		case <-ctx.Done():
		}
	}()
	_, ls, err := db.cache.getKeyed(ctx, keys, texts, kids)
	if err != nil {
		return err
	}
	w.embedded.Add(uint64(ls.computed))
	w.cached.Add(uint64(ls.hits + ls.diskHits + ls.shared))
	return nil
}

// SettleWorkingMemory waits until the working memory has embedded every
// record queued so far, its budget is spent, or the DB closes: for tests
// and benchmarks that measure a recall after it, and for a caller that
// wants a live session's turns embedded before it asks. It does not wait
// for budget tokens: over the PerMinute budget it returns with records
// still queued (Metrics().WorkingMemory.Pending). It returns at once when
// working memory is off.
func (db *DB) SettleWorkingMemory() {
	w := db.work
	if w == nil {
		return
	}
	w.mu.Lock()
	for (len(w.queue) > 0 || w.busy) && !w.stopped && !w.broke {
		w.idle.Wait()
	}
	w.mu.Unlock()
}

// stop empties the queue for good and wakes SettleWorkingMemory's
// waiters: the DB is closing.
func (w *workMem) stop() {
	w.mu.Lock()
	w.stopped = true
	w.queue = nil
	w.idle.Broadcast()
	w.mu.Unlock()
}

func (w *workMem) metrics() WorkingMemoryMetrics {
	if w == nil {
		return WorkingMemoryMetrics{}
	}
	w.mu.Lock()
	pending := len(w.queue)
	w.mu.Unlock()
	return WorkingMemoryMetrics{Queued: w.queued.Load(), Dropped: w.dropped.Load(), Embedded: w.embedded.Load(),
		Cached: w.cached.Load(), Skipped: w.skipped.Load(), Pending: pending}
}
