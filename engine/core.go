package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/lazymem/lazymem/engine/consolidate"
	"github.com/lazymem/lazymem/segment"
)

// The core store lives in dir/core, a Pebble store of its own: the units of
// core memory, their vectors, the value signals of the records, and the
// bitmaps of the consolidation pipeline. It is small (units are few; a
// value entry exists only for a record a recall touched, that feedback
// named or that a trigger queued) and its keys are one byte of table then a
// big-endian id, drawn in docs/format/core.md:
//
//	'u' id   unit       consolidate.AppendUnit encoding (a rewrite replaces it)
//	'e' id   vector     str embedder name, then dim float32 LE
//	'v' id   value      valueEntry encoding (see value.go)
//	'm' name meta       "next_unit": uvarint; "labelled", "queued",
//	                    "consolidated", "type/<n>": a portable roaring bitmap
//
// Table bytes and the meta names NEVER change.
const (
	coreUnit   = 'u'
	coreVector = 'e'
	coreValue  = 'v'
	coreMeta   = 'm'
)

func coreKey(table byte, id uint64) []byte {
	k := make([]byte, 9)
	k[0] = table
	binary.BigEndian.PutUint64(k[1:], id)
	return k
}

func metaKey(name string) []byte { return append([]byte{coreMeta}, name...) }

// coreStore is the in-memory view of dir/core. Every field is guarded by
// mu; the Pebble store is written under it too, so that what is in memory
// and what is on disk change together.
type coreStore struct {
	pdb *pebble.DB
	fs  vfs.FS
	dir string
	// opening is true while pebble.Open runs; park bounds the calls a
	// goroutine parked by the store's QuietLogger would hold up for good
	// (segment.ParkGuard): closes, flushes, compactions, commits.
	opening atomic.Bool
	park    segment.ParkGuard
	// beforeClose, when set (tests), runs just before Pebble's Close.
	beforeClose func()
	// run serializes consolidations.
	run sync.Mutex

	mu sync.Mutex
	// units by id: all of them, live and superseded (history).
	units map[uint64]*coreUnitEntry
	// byAgent lists each agent's unit ids in id order.
	byAgent map[string][]uint64
	// cited is, per agent, every record any unit of the agent cites.
	cited map[string]*roaring.Bitmap
	// citedBy maps a record id to the units citing it.
	citedBy  map[uint64][]uint64
	nextUnit uint64

	// The pipeline's bitmaps of record ids (persisted on flush).
	labelled     *roaring.Bitmap // value scored and labelled
	queued       *roaring.Bitmap // waiting for consolidation
	consolidated *roaring.Bitmap // turned into units already
	types        [consolidate.TypeFact + 1]*roaring.Bitmap
	bitmapsDirty bool

	// values holds the value-signal deltas not flushed yet; flushing
	// those a flush is persisting (nil when none is): flushValues reads
	// the persisted entries without mu, so recalls noting their
	// candidates do not wait for it.
	values, flushing map[uint64]*valueEntry
	// flushMu serializes flushValues.
	flushMu sync.Mutex
	// afterFlushRead, a test hook (nil outside tests), runs when
	// flushValues has read the persisted entries, before it takes mu.
	afterFlushRead func()

	// sessions is what the background pass saw last of each session, for
	// the idle-timeout trigger.
	sessions map[sessionKey]*sessionSeen
}

// coreUnitEntry is one unit with its vector (nil while it has none).
type coreUnitEntry struct {
	u   consolidate.Unit
	vec []float32
}

func openCoreStore(db *DB) (*coreStore, error) {
	fs := db.opts.FS
	cs := &coreStore{}
	var fatal atomic.Pointer[error] // the first fatal report (the Open's watch)
	onFatal := func(err error) {
		fatal.CompareAndSwap(nil, &err)
		cs.park.Note(err)
		db.backgroundError(fmt.Errorf("lazymem: engine: core store: %w", err))
	}
	// The archive cleaner turns off Pebble's recycling of obsolete WAL
	// files, which would keep the old bytes of forgotten units; the
	// listeners delete what it archives (as the embedding cache does).
	watch := &segment.OpenWatch{Fatal: func() error {
		if p := fatal.Load(); p != nil {
			return *p
		}
		return nil
	}}
	popts := &pebble.Options{FS: fs, Logger: segment.QuietLogger{OnFatal: onFatal, Opening: cs.opening.Load},
		Cleaner: pebble.ArchiveCleaner{}}
	// A canceled Compact must not leave a picked compaction behind (see
	// segment.CompactionScheduler).
	popts.Experimental.CompactionScheduler = segment.CompactionScheduler()
	onErr := func(err error) { db.backgroundError(fmt.Errorf("lazymem: engine: core store: %w", err)) }
	popts.EventListener = &pebble.EventListener{
		BackgroundError: onErr,
		TableDeleted:    func(i pebble.TableDeleteInfo) { unarchive(fs, i.Path, onErr) },
		WALDeleted:      func(i pebble.WALDeleteInfo) { unarchive(fs, i.Path, onErr) },
		FlushEnd:        func(i pebble.FlushInfo) { watch.FlushEnd(i) },
	}
	// Uncompressed: the store is small, vectors do not compress, and a
	// purge can then be checked byte for byte.
	popts.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.DBCompressionNone })
	cs.dir = fs.PathJoin(db.dir, "core")
	cs.fs = fs
	cs.opening.Store(true)
	// Watched: a WAL replayed on a disk failing MANIFEST writes would
	// hang pebble.Open (segment.OpenWatch).
	watch.Dir, watch.Park = cs.dir, &cs.park
	pdb, err := watch.Open(func() (*pebble.DB, error) { return pebble.Open(cs.dir, popts) })
	cs.opening.Store(false)
	if err != nil {
		return nil, fmt.Errorf("lazymem: engine: open core store: %w", err)
	}
	if err := purgeArchive(fs, cs.dir); err != nil {
		_ = pdb.Close()
		return nil, fmt.Errorf("lazymem: engine: open core store: %w", err)
	}
	cs.pdb, cs.nextUnit = pdb, 1
	cs.units, cs.byAgent = map[uint64]*coreUnitEntry{}, map[string][]uint64{}
	cs.cited, cs.citedBy = map[string]*roaring.Bitmap{}, map[uint64][]uint64{}
	cs.labelled, cs.queued, cs.consolidated = roaring.New(), roaring.New(), roaring.New()
	cs.values, cs.sessions = map[uint64]*valueEntry{}, map[sessionKey]*sessionSeen{}
	for i := range cs.types {
		cs.types[i] = roaring.New()
	}
	if err := cs.load(db.opts.Embedder); err != nil {
		_ = pdb.Close()
		return nil, err
	}
	return cs, nil
}

// load reads the units, their vectors and the bitmaps.
func (cs *coreStore) load(emb interface {
	Name() string
	Dim() int
}) error {
	it, err := cs.pdb.NewIter(&pebble.IterOptions{LowerBound: []byte{coreUnit}, UpperBound: []byte{coreUnit + 1}})
	if err != nil {
		return fmt.Errorf("lazymem: engine: core store: %w", err)
	}
	for it.First(); it.Valid(); it.Next() {
		u, _, err := consolidate.DecodeUnit(it.Value())
		if err != nil {
			_ = it.Close()
			return fmt.Errorf("%w: core unit %x: %w", ErrCorrupt, it.Key(), err)
		}
		cs.units[u.ID] = &coreUnitEntry{u: u}
		cs.nextUnit = max(cs.nextUnit, u.ID+1)
	}
	if err := it.Close(); err != nil {
		return fmt.Errorf("lazymem: engine: core store: %w", err)
	}
	for id, e := range cs.units {
		v, closer, err := cs.pdb.Get(coreKey(coreVector, id))
		if errors.Is(err, pebble.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("lazymem: engine: core store: %w", err)
		}
		if emb != nil {
			e.vec = decodeCoreVector(v, emb.Name(), emb.Dim())
		}
		_ = closer.Close()
	}
	if v, closer, err := cs.pdb.Get(metaKey("next_unit")); err == nil {
		n, k := binary.Uvarint(v)
		_ = closer.Close()
		if k <= 0 {
			return fmt.Errorf("%w: core store next_unit", ErrCorrupt)
		}
		cs.nextUnit = max(cs.nextUnit, n)
	} else if !errors.Is(err, pebble.ErrNotFound) {
		return fmt.Errorf("lazymem: engine: core store: %w", err)
	}
	for name, bm := range cs.bitmaps() {
		v, closer, err := cs.pdb.Get(metaKey(name))
		if errors.Is(err, pebble.ErrNotFound) {
			continue
		}
		if err != nil {
			return fmt.Errorf("lazymem: engine: core store: %w", err)
		}
		_, err = bm.FromBuffer(slices.Clone(v))
		_ = closer.Close()
		if err != nil {
			return fmt.Errorf("%w: core store bitmap %s: %w", ErrCorrupt, name, err)
		}
	}
	cs.reindex()
	return nil
}

// bitmaps names the persisted bitmaps.
func (cs *coreStore) bitmaps() map[string]*roaring.Bitmap {
	m := map[string]*roaring.Bitmap{"labelled": cs.labelled, "queued": cs.queued, "consolidated": cs.consolidated}
	for _, t := range consolidate.Types {
		m[fmt.Sprintf("type/%d", t)] = cs.types[t]
	}
	return m
}

// reindex rebuilds byAgent, cited and citedBy from units.
func (cs *coreStore) reindex() {
	cs.byAgent = map[string][]uint64{}
	cs.cited = map[string]*roaring.Bitmap{}
	cs.citedBy = map[uint64][]uint64{}
	ids := make([]uint64, 0, len(cs.units))
	for id := range cs.units {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		u := &cs.units[id].u
		cs.byAgent[u.Agent] = append(cs.byAgent[u.Agent], id)
		bm := cs.cited[u.Agent]
		if bm == nil {
			bm = roaring.New()
			cs.cited[u.Agent] = bm
		}
		for _, s := range u.SourceIDs {
			if s <= math.MaxUint32 {
				bm.Add(uint32(s))
			}
			cs.citedBy[s] = append(cs.citedBy[s], id)
		}
	}
}

func appendCoreVector(dst []byte, name string, v []float32) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(name)))
	dst = append(dst, name...)
	for _, f := range v {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(f))
	}
	return dst
}

// decodeCoreVector returns the vector stored in b when it was made by the
// embedder named name with dimension dim, else nil (it is re-embedded).
func decodeCoreVector(b []byte, name string, dim int) []float32 {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n || string(b[k:k+int(n)]) != name {
		return nil
	}
	b = b[k+int(n):]
	if len(b) != 4*dim {
		return nil
	}
	v := make([]float32, dim)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// putBitmaps adds the bitmaps to b when they changed. Caller holds mu.
func (cs *coreStore) putBitmaps(b *pebble.Batch) error {
	if !cs.bitmapsDirty {
		return nil
	}
	for name, bm := range cs.bitmaps() {
		bm.RunOptimize()
		buf, err := bm.ToBytes()
		if err != nil {
			return fmt.Errorf("lazymem: engine: core store bitmap %s: %w", name, err)
		}
		if err := b.Set(metaKey(name), buf, nil); err != nil {
			return err
		}
	}
	cs.bitmapsDirty = false
	return nil
}

// close closes the store, unless a Pebble goroutine is parked in the
// logger after a fatal report (before or while it closes): closing would
// wait for it forever.
func (cs *coreStore) close() error {
	defer cs.park.Stop()
	if err := cs.park.Call(func() error {
		if cs.beforeClose != nil {
			cs.beforeClose()
		}
		return cs.pdb.Close()
	}); err != nil {
		if segment.Parked(err) {
			return fmt.Errorf("lazymem: engine: core store left open: %w", err)
		}
		return err
	}
	return nil
}

// newBatch returns a batch of the store, to be committed with commit and
// released with closeBatch.
func (cs *coreStore) newBatch() *pebble.Batch { return cs.pdb.NewBatch() }

// commit commits b, or returns the parked report once a Pebble goroutine
// is parked (the commit may wait for it for good: a memtable rotation
// takes the mutex it holds).
func (cs *coreStore) commit(b *pebble.Batch, o *pebble.WriteOptions) error {
	return cs.park.Call(func() error { return b.Commit(o) })
}

// closeBatch closes b unless a commit of it may have been left behind.
func (cs *coreStore) closeBatch(b *pebble.Batch) { cs.park.CloseBatch(b) }

// unitText is what is embedded for a unit and what its memory reads: the
// topic, the content and the tasks, each with its owner and due time when
// the text does not say them ("给出压测报告 (张伟, due 2026-12-03 16:00
// UTC)"): an agent reading the memory must learn who does what by when,
// and the content is often the task alone.
func unitText(u *consolidate.Unit) string {
	s := u.Content
	if u.Topic != "" && !strings.Contains(u.Content, u.Topic) {
		s = u.Topic + ": " + s
	}
	for _, a := range u.ActionItems {
		var extra []string
		switch {
		case !strings.Contains(s, a.Task):
			s += "; " + a.Owner + ": " + a.Task
		case a.Owner != "" && !strings.Contains(s, a.Owner):
			extra = append(extra, a.Owner)
		}
		if !a.Due.IsZero() {
			extra = append(extra, "due "+a.Due.UTC().Format("2006-01-02 15:04")+" UTC")
		}
		if len(extra) > 0 {
			s += " (" + strings.Join(extra, ", ") + ")"
		}
	}
	return s
}

// openCore opens the core store, the recall ring and the background
// goroutine; Open calls it last.
func (db *DB) openCore() error {
	cs, err := openCoreStore(db)
	if err != nil {
		return err
	}
	db.core = cs
	db.ring = &recallRing{buf: make([]recallEntry, db.opts.Core.RecallRing)}
	db.startCoreBackground()
	return nil
}

// closeCore flushes the value counts and closes the core store. Close
// calls it with the background goroutine stopped.
func (db *DB) closeCore() error {
	if db.core == nil { // Open failed before the core store opened
		return nil
	}
	var errs []error
	if err := db.flushValues(); err != nil {
		errs = append(errs, err)
	}
	if err := db.core.close(); err != nil {
		errs = append(errs, fmt.Errorf("lazymem: engine: close core store: %w", err))
	}
	return errors.Join(errs...)
}

// coreCited reports whether a live unit cites record id: retention must
// keep such a record, it is the unit's evidence. A superseded unit does
// not pin its sources.
func (db *DB) coreCited(id uint64) bool {
	cs := db.core
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, uid := range cs.citedBy[id] {
		if e := cs.units[uid]; e != nil && e.u.Live() {
			return true
		}
	}
	return false
}

// coreCitedLive returns every record a live unit cites, of any agent: the
// set retention subtracts from what it expires.
func (db *DB) coreCitedLive() *roaring.Bitmap {
	out := roaring.New()
	cs := db.core
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, e := range cs.units {
		if e.u.Live() {
			for _, s := range e.u.SourceIDs {
				if s <= math.MaxUint32 {
					out.Add(uint32(s))
				}
			}
		}
	}
	return out
}

// purge makes the deletions of the core store physical: the memtable is
// flushed, every level compacted (a deleted unit, vector or value entry is
// dropped at the bottom level), compacted again while an sstable still
// holds deletions, and the obsolete files waited for. Keys hold only table
// bytes and ids, so the MANIFEST's key bounds name no content. Compact
// calls it.
func (cs *coreStore) purge(ctx context.Context) error {
	if err := cs.park.Call(cs.pdb.Flush); err != nil {
		return err
	}
	for try := 0; ; try++ {
		if err := cs.park.Call(func() error { return cs.pdb.Compact(ctx, []byte{0}, []byte{0xff}, true) }); err != nil {
			return err
		}
		var tabs [][]pebble.SSTableInfo
		err := cs.park.Call(func() (err error) {
			tabs, err = cs.pdb.SSTables(pebble.WithProperties())
			return err
		})
		if err != nil {
			return err
		}
		var n uint64
		for _, level := range tabs {
			for _, t := range level {
				n += t.Properties.NumDeletions
			}
		}
		if n == 0 {
			break
		}
		if try == 3 {
			return fmt.Errorf("%w: core store: sstables still hold %d deletions after compaction", ErrPurge, n)
		}
	}
	return segment.WaitPurged(ctx, cs.pdb, cs.fs, cs.dir, purgeTimeout)
}

// has reports whether key is in the store. Caller holds mu.
func (cs *coreStore) has(key []byte) (bool, error) {
	_, closer, err := cs.pdb.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("lazymem: engine: core store: %w", err)
	}
	return true, closer.Close()
}
