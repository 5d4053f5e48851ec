package engine

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cockroachdb/pebble/v2"
	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/engine/consolidate"
)

// The core store's background work: flushing value counts, labelling new
// records, the idle-session trigger and re-embedding units stored under
// another embedder. Consolidation itself is in consolidation.go.

// sessionKey names a session of an agent.
type sessionKey struct{ agent, session string }

// sessionSeen is when the background pass last saw a new record of a
// session.
type sessionSeen struct{ at time.Time }

// background is the core store's goroutine: it flushes the value counts
// every FlushInterval and, with CoreOptions.Background, labels the new
// records and runs the idle-timeout trigger.
type coreBackground struct {
	once sync.Once
	stop chan struct{}
	done sync.WaitGroup
	// watermark is the first record id the labelling pass has not seen.
	watermark uint64
	// vectorsChecked: units without a vector for the DB's embedder (the
	// embedder changed) have been re-embedded.
	vectorsChecked bool
}

func (db *DB) startCoreBackground() {
	bg := &coreBackground{stop: make(chan struct{}), watermark: 1}
	db.bg = bg
	bg.done.Add(1)
	go func() {
		defer bg.done.Done()
		t := time.NewTicker(db.opts.Core.FlushInterval)
		defer t.Stop()
		for {
			select {
			case <-bg.stop:
				return
			case <-t.C:
			}
			db.coreBackgroundPass(bg)
		}
	}()
}

// stopCoreBackground stops the goroutine and waits for it. Close calls it
// before it takes the DB's lock, so a pass in progress finishes.
func (db *DB) stopCoreBackground() {
	if bg := db.bg; bg != nil {
		bg.once.Do(func() { close(bg.stop) })
		bg.done.Wait()
	}
}

func (db *DB) coreBackgroundPass(bg *coreBackground) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return
	}
	if err := db.flushValues(); err != nil {
		db.backgroundError(err)
		return
	}
	if !bg.vectorsChecked {
		if err := db.reembedUnits(); err != nil {
			db.backgroundError(err)
		} else {
			bg.vectorsChecked = true
		}
	}
	if !db.opts.Core.Background {
		return
	}
	next := db.log.Next()
	if next > bg.watermark {
		if err := db.labelNew(bg.watermark, next); err != nil {
			db.backgroundError(err)
			return
		}
		bg.watermark = next
	}
	if db.opts.Core.IdleTimeout <= 0 {
		return
	}
	now := time.Now()
	cs := db.core
	cs.mu.Lock()
	var idle []sessionKey
	for k, s := range cs.sessions {
		if now.Sub(s.at) >= db.opts.Core.IdleTimeout {
			idle = append(idle, k)
			delete(cs.sessions, k)
		}
	}
	cs.mu.Unlock()
	for _, k := range idle {
		if _, err := db.consolidate(context.Background(), k.agent, k.session, nil); err != nil {
			db.backgroundError(err)
		}
	}
}

// labelNew labels the records [from, to) and notes their sessions as
// active now.
func (db *DB) labelNew(from, to uint64) error {
	bm := roaring.New()
	now := time.Now()
	var c codec.Record
	seen := map[sessionKey]bool{}
	err := db.log.Scan(from, to, func(id uint64, payload []byte) error {
		if _, err := codec.DecodeRecord(payload, &c); err != nil {
			return fmt.Errorf("%w: id %d: %w", ErrCorrupt, id, err)
		}
		if id <= math.MaxUint32 {
			bm.Add(uint32(id))
		}
		seen[sessionKey{c.Agent, c.Session}] = true
		return nil
	})
	if err != nil {
		return fmt.Errorf("lazymem: engine: background label: %w", err)
	}
	if _, err := db.label(bm); err != nil {
		return err
	}
	cs := db.core
	cs.mu.Lock()
	for k := range seen {
		cs.sessions[k] = &sessionSeen{at: now}
	}
	cs.mu.Unlock()
	return nil
}

// reembedUnits embeds the units that have no vector for the DB's embedder
// (stored by another one), so they get their own cosine again.
func (db *DB) reembedUnits() error {
	if db.opts.Embedder == nil {
		return nil
	}
	cs := db.core
	cs.run.Lock()
	defer cs.run.Unlock()
	cs.mu.Lock()
	var units []consolidate.Unit
	for _, e := range cs.units {
		if e.vec == nil {
			units = append(units, e.u)
		}
	}
	cs.mu.Unlock()
	if len(units) == 0 {
		return nil
	}
	vecs, err := db.embedUnits(context.Background(), units)
	if err != nil {
		return err
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	b := cs.newBatch()
	defer cs.closeBatch(b)
	for i := range units {
		e := cs.units[units[i].ID]
		if e == nil || vecs[i] == nil {
			continue
		}
		e.vec = vecs[i]
		if err := b.Set(coreKey(coreVector, units[i].ID), appendCoreVector(nil, db.opts.Embedder.Name(), vecs[i]), nil); err != nil {
			return err
		}
	}
	if err := cs.commit(b, pebble.NoSync); err != nil {
		return fmt.Errorf("lazymem: engine: core store: re-embed units: %w", err)
	}
	return nil
}
