package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cockroachdb/errors/oserror"
	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/index"
)

// RetentionOptions removes raw records older than a window, in the
// background. Pinned records (DB.Pin) are kept whatever their age.
type RetentionOptions struct {
	// Window is how long a record is kept, measured from its Time to the
	// DB's Clock. Default 0: forever.
	Window time.Duration
	// PerAgent overrides Window for the agents it names; a value <= 0
	// keeps that agent's records forever. Default nil.
	PerAgent map[string]time.Duration
	// Interval is how often the background pass runs. Default 1 minute;
	// negative: never in the background (call DB.ApplyRetention).
	Interval time.Duration
}

// enabled reports whether any record can expire.
func (r *RetentionOptions) enabled() bool {
	if r.Window > 0 {
		return true
	}
	for _, w := range r.PerAgent {
		if w > 0 {
			return true
		}
	}
	return false
}

// RetentionMetrics describes the retention passes since Open.
type RetentionMetrics struct {
	Passes  uint64 // passes run (background and ApplyRetention)
	Expired uint64 // records removed because they were past their window
	// DroppedRecords counts record slots removed by dropping whole log
	// segments (no rewrite); the others were tombstoned and leave the
	// files at the next compaction.
	DroppedRecords uint64
	Pinned         uint64 // records pinned now
}

// ApplyRetention runs one retention pass now: every record past its
// agent's window and not pinned is forgotten (as by Forget: the next record
// of its session, which inherited its words, is indexed again, unless the
// pass would amend more than Forget amends before it rebuilds the index;
// then those words leave the index at the next compaction), and whole
// sealed log segments whose records have all expired are dropped without
// a rewrite. Appends continue during the pass. It returns how many records
// expired.
func (db *DB) ApplyRetention(ctx context.Context) (int, error) {
	db.maintMu.Lock()
	defer db.maintMu.Unlock()
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return 0, ErrClosed
	}
	db.retPasses.Add(1)
	r := &db.opts.Retention
	if !r.enabled() {
		return 0, nil
	}
	now := db.opts.Clock()
	expired := roaring.New()
	if r.Window > 0 {
		bm, err := db.idx.Filter(&index.Filter{Until: now.Add(-r.Window).UnixNano()})
		if err != nil {
			return 0, err
		}
		for agent := range r.PerAgent { // their own windows apply below
			ab, err := db.idx.Filter(&index.Filter{Agents: []string{agent}})
			if err != nil {
				return 0, err
			}
			bm.AndNot(ab)
		}
		expired.Or(bm)
	}
	for agent, w := range r.PerAgent {
		if w <= 0 {
			continue
		}
		bm, err := db.idx.Filter(&index.Filter{Agents: []string{agent}, Until: now.Add(-w).UnixNano()})
		if err != nil {
			return 0, err
		}
		expired.Or(bm)
	}
	db.pinMu.Lock()
	expired.AndNot(db.pins)
	db.pinMu.Unlock()
	expired.AndNot(db.coreCitedLive()) // a live unit's evidence stays
	if expired.IsEmpty() {
		return 0, nil
	}
	// The vectors stay in the cache under their texts (a vector is not the
	// raw record, and counting the references would read every live record
	// of the agent on every pass); the vectors by id go.
	in := &intent{ids: expired}
	if err := writeIntent(db.opts.FS, db.dir, in); err != nil {
		return 0, err
	}
	// Whole segments below the first live record that stays: dropped.
	all, err := db.idx.Filter(nil)
	if err != nil {
		return 0, err
	}
	all.AndNot(expired)
	below := uint64(db.log.Next())
	if !all.IsEmpty() {
		below = uint64(all.Minimum())
	}
	dropped, err := db.log.DropBefore(ctx, below)
	if err != nil {
		return 0, fmt.Errorf("lazymem: engine: retention: %w", err)
	}
	db.retDropped.Add(uint64(dropped))
	if err := db.applyForget(ctx, in, true); err != nil {
		return 0, err
	}
	if db.opts.Index.SessionContext {
		pick := func() ([]uint64, error) { return db.idx.Successors(expired), nil }
		if _, err := db.reindexAfter(pick, false); err != nil {
			return 0, fmt.Errorf("lazymem: engine: retention: %w", err)
		}
	}
	if err := removeIntent(db.opts.FS, db.dir); err != nil {
		return 0, err
	}
	n := int(expired.GetCardinality())
	db.retExpired.Add(uint64(n))
	db.forgotten.Add(uint64(n))
	db.usage.mu.Lock()
	clear(db.usage.by)
	db.usage.mu.Unlock()
	return n, nil
}

// Pin exempts the records ids from retention until Unpin. Every id must be
// a live record (else ErrNotFound naming it, and nothing is pinned). Pins
// are durable (dir/PINS). Forget removes a pinned record all the same.
func (db *DB) Pin(ctx context.Context, ids ...uint64) error {
	return db.setPins(ctx, ids, true, "")
}

// Unpin makes the records ids subject to retention again. Ids not pinned
// are ignored.
func (db *DB) Unpin(ctx context.Context, ids ...uint64) error {
	return db.setPins(ctx, ids, false, "")
}

// setPins pins or unpins ids; agent, when set, is the only agent whose
// records may be named (AgentDB).
func (db *DB) setPins(ctx context.Context, ids []uint64, pin bool, agent string) error {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if pin || agent != "" {
		var live *roaring.Bitmap
		var err error
		if agent != "" {
			live, err = db.idx.Filter(&index.Filter{Agents: []string{agent}})
		} else {
			live, err = db.idx.Filter(nil)
		}
		if err != nil {
			return err
		}
		for i, id := range ids {
			if id == 0 || id >= 1<<32-1 || !live.Contains(uint32(id)) {
				if !pin && agent == "" {
					continue
				}
				return fmt.Errorf("%w: ids[%d]: id %d", ErrNotFound, i, id)
			}
		}
	}
	db.pinMu.Lock()
	defer db.pinMu.Unlock()
	next := db.pins.Clone()
	for _, id := range ids {
		if id == 0 || id >= 1<<32-1 {
			continue
		}
		if pin {
			next.Add(uint32(id))
		} else {
			next.Remove(uint32(id))
		}
	}
	if err := writePins(db, next); err != nil {
		return err
	}
	db.pins = next
	return nil
}

// The pins file, replaced atomically (temp, fsync, rename, fsync dir):
//
//	+----------+---------------------------+---------+
//	| LZMPIN01 | pinned ids (roaring32,     | crc32c  |
//	| 8 bytes  | portable format)           | u32 LE  |
//	+----------+---------------------------+---------+
//
// Wire constants: never change.
const (
	pinsFile  = "PINS"
	pinsMagic = "LZMPIN01"
)

func writePins(db *DB, bm *roaring.Bitmap) error {
	fs := db.opts.FS
	body, err := bm.ToBytes()
	if err != nil {
		return err
	}
	b := append([]byte(pinsMagic), body...)
	b = binary.LittleEndian.AppendUint32(b, codec.Checksum(b))
	name := fs.PathJoin(db.dir, pinsFile)
	if err := writeFileSync(fs, name+".tmp", b); err != nil {
		return fmt.Errorf("lazymem: engine: write %s: %w", pinsFile, err)
	}
	if err := fs.Rename(name+".tmp", name); err != nil {
		return fmt.Errorf("lazymem: engine: write %s: %w", pinsFile, err)
	}
	return syncDir(fs, db.dir)
}

// loadPins reads dir/PINS (absent: nothing pinned).
func (db *DB) loadPins() error {
	fs := db.opts.FS
	db.pins = roaring.New()
	b, err := readFile(fs, fs.PathJoin(db.dir, pinsFile))
	if oserror.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("lazymem: engine: read %s: %w", pinsFile, err)
	}
	if len(b) < len(pinsMagic)+4 || string(b[:len(pinsMagic)]) != pinsMagic ||
		codec.Checksum(b[:len(b)-4]) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return fmt.Errorf("%w: %s: bad magic or checksum", ErrCorrupt, pinsFile)
	}
	if _, err := db.pins.FromUnsafeBytes(append([]byte(nil), b[len(pinsMagic):len(b)-4]...)); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrCorrupt, pinsFile, err)
	}
	return nil
}

// background runs retention every Retention.Interval and compacts every
// CompactInterval when something was forgotten since the last compaction,
// until stop is closed. Errors go to backgroundError.
func (db *DB) background() {
	defer db.bgWG.Done()
	var retC, compC <-chan time.Time
	if db.opts.Retention.enabled() && db.opts.Retention.Interval > 0 {
		t := time.NewTicker(db.opts.Retention.Interval)
		defer t.Stop()
		retC = t.C
	}
	if db.opts.CompactInterval > 0 {
		t := time.NewTicker(db.opts.CompactInterval)
		defer t.Stop()
		compC = t.C
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-db.bgStop; cancel() }()
	var compactedAt uint64
	for {
		select {
		case <-db.bgStop:
			return
		case <-retC:
			if _, err := db.ApplyRetention(ctx); err != nil && ctx.Err() == nil {
				db.backgroundError(fmt.Errorf("lazymem: engine: retention: %w", err))
			}
		case <-compC:
			f := db.forgotten.Load()
			if f == compactedAt {
				continue
			}
			if err := db.Compact(ctx); err != nil {
				if ctx.Err() == nil {
					db.backgroundError(fmt.Errorf("lazymem: engine: background compaction: %w", err))
				}
				continue
			}
			compactedAt = f
		}
	}
}
