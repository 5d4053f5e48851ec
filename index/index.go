package index

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Field is one metadata key with its values.
type Field struct {
	Key    string
	Values []string
}

// Doc is one record as the index sees it.
type Doc struct {
	// ID is dense and increasing (assigned by the log). It must be below
	// 1<<32-1: the index stores ids as uint32 (a documented 4G-record limit).
	ID                         uint64
	Time                       int64 // unix nanoseconds
	Agent, Session, Role, Text string
	Meta                       []Field
}

// Source is the log, so Open can rebuild the tail the persisted index lacks.
type Source interface {
	LastID() uint64
	Scan(from uint64, fn func(d *Doc) error) error // ids >= from, ascending
}

// Reserved field keys for the fixed record attributes; they cannot collide
// with caller metadata keys, which never start with a NUL byte... unless a
// caller sends one, in which case Add rejects it.
const (
	keyAgent   = "\x00agent"
	keySession = "\x00session"
	keyRole    = "\x00role"
)

// Metrics is a snapshot of the index state.
type Metrics struct {
	Docs         uint64 // live documents (indexed minus deleted)
	Deleted      uint64 // tombstones
	Segments     int    // sealed segments
	MemDocs      uint64 // documents in the mutable segment
	SegmentBytes int64  // bytes of sealed segment images
	Flushes      int64
	Merges       int64
	MergeErrors  int64  // background merges that failed (also reported to Options.OnBackgroundError)
	FlushErrors  int64  // background flushes that failed (retried by the next Flush; also reported)
	Rebuilt      uint64 // documents re-indexed from the Source by Open
	Dropped      int    // segments dropped by Open: len(Repairs)
	LateDocs     int    // documents whose time is below an earlier id's time
	Amended      uint64 // documents Reindex indexed again since the index was built
	Terms        int    // distinct terms in the mutable segment
	// Repairs lists the segments Open dropped (corrupt, beyond the log,
	// built by another analyzer), each with its id range and reason; their
	// ids were re-indexed from the Source. A caller logs them.
	Repairs []Repair
	// ContextErrors counts predecessors SessionContext could not read from
	// the Source (those documents were indexed without context).
	ContextErrors int64
	// FilterCacheBytes and FilterCacheEntries are what the filter cache
	// holds (Options.FilterCacheBytes; filtercache.go).
	FilterCacheBytes   int64
	FilterCacheEntries int
}

// Index is the broad-retrieval index. All methods are safe for concurrent use.
type Index struct {
	opts Options
	fs   vfs.FS
	dir  string

	mu      sync.RWMutex
	closed  bool
	segs    []*segment // sealed or being flushed, ascending ids
	mut     *segment
	lastID  uint32
	hasDocs bool
	nextNum uint64

	live *roaring.Bitmap // indexed and not deleted
	tomb *roaring.Bitmap
	// amended holds the documents Reindex indexed again, whose postings
	// are in amend; void is tomb and amended: the ids whose postings the
	// other segments hold but a search skips (amend.go).
	amended, void *roaring.Bitmap
	amend         *segment
	// purged holds the amended documents whose void postings a Purge
	// removed from their segments (purge.go); not persisted.
	purged *roaring.Bitmap
	fields fieldSet
	// roles lists the roles of fields in the order the index first held
	// them (RolesSince); it only grows, as fields' entries do.
	roles []string
	// agented holds every id indexed with an agent: the union of the
	// agent bitmaps in fields, kept as they grow. A filter listing every
	// agent reads it instead of computing that union (filterLocked).
	agented *roaring.Bitmap
	nLive   uint64
	sumLive uint64
	times   timeIndex

	addMu     sync.Mutex // one Add at a time: chunks of a batch go in order
	batchPool sync.Pool  // *batchTerms
	flushMu   sync.Mutex // one flush at a time; flushes go in id order
	mergeMu   sync.Mutex // one merge at a time

	mergeKick chan struct{}
	flushKick chan struct{}
	stop      chan struct{}
	wg        sync.WaitGroup

	flushes, merges, mergeErrs, flushErrs atomic.Int64
	// lastWrite is when a document was last added or deleted (or the index
	// opened), in nanoseconds of the monotonic clock since start: the
	// background merger settles the index SettleAfter later.
	lastWrite atomic.Int64
	rebuilt   uint64
	repairs   []Repair // set by Open

	pool   sync.Pool    // *searcher
	fcache *filterCache // metadata values' documents per sealed segment; nil when off
	// searched, when set (tests only), sees each Search's searcher before
	// it returns to the pool.
	searched func(s *searcher)

	src Source       // for SessionContext lookups; may be nil
	ctx contextState // SessionContext state, guarded by addMu
}

// Open opens (or creates) the index in dir; dir "" keeps everything in
// memory. Persisted segments are read whole; segments holding ids above
// src.LastID() are dropped, and ids above the persisted watermark are
// re-indexed from src. src may be nil.
func Open(dir string, opts Options, src Source) (*Index, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	x := &Index{
		opts: opts, fs: opts.FS, dir: dir, nextNum: 1,
		live: roaring.New(), tomb: roaring.New(), amended: roaring.New(), void: roaring.New(), purged: roaring.New(), fields: make(fieldSet), agented: roaring.New(),
		mergeKick: make(chan struct{}, 1), flushKick: make(chan struct{}, 1), stop: make(chan struct{}),
		fcache: newFilterCache(opts.FilterCacheBytes),
	}
	x.times.init()
	x.src = src
	dirty := false
	if dir != "" {
		var err error
		if dirty, err = x.load(src); err != nil {
			return nil, err
		}
	}
	x.mut = newMutable(x.nextLo(), memHint{})
	x.recount()
	if src != nil {
		if err := x.rebuildTail(src); err != nil {
			return nil, err
		}
	}
	if _, ok := src.(DocSource); ok && !x.amended.IsEmpty() {
		// The amended documents' postings (amend.go), analysed again.
		// Without a DocSource they stay unsearched (and amended).
		seg, got, err := x.buildAmend(roaring.AndNot(x.amended, x.tomb))
		if err != nil {
			return nil, err
		}
		x.installAmend(seg, got)
	}
	if dirty {
		if err := x.writeManifestLocked(); err != nil {
			return nil, err
		}
	}
	x.wrote() // the index settles SettleAfter after it opens at the earliest
	if !opts.DisableBackgroundMerge {
		x.wg.Add(2)
		go x.mergeLoop()
		go x.flushLoop()
		x.kickMerge()
	}
	return x, nil
}

func (x *Index) nextLo() uint32 {
	if len(x.segs) > 0 {
		return x.segs[len(x.segs)-1].hi + 1
	}
	return 0
}

func (x *Index) allSegs() []*segment {
	if x.mut == nil {
		return x.segs
	}
	return append(x.segs[:len(x.segs):len(x.segs)], x.mut)
}

// Close stops background merging. It does not flush: the mutable segment
// is rebuilt from the log on the next Open (call Flush first to avoid it).
func (x *Index) Close() error {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return ErrClosed
	}
	x.closed = true
	x.mu.Unlock()
	close(x.stop)
	x.wg.Wait()
	return nil
}

// Metrics returns a snapshot.
func (x *Index) Metrics() Metrics {
	x.mu.RLock()
	defer x.mu.RUnlock()
	m := Metrics{
		Docs: x.nLive, Deleted: x.tomb.GetCardinality(), MemDocs: uint64(x.mut.nDocs),
		Flushes: x.flushes.Load(), Merges: x.merges.Load(), MergeErrors: x.mergeErrs.Load(), FlushErrors: x.flushErrs.Load(),
		Rebuilt: x.rebuilt, Dropped: len(x.repairs), Repairs: slices.Clone(x.repairs), LateDocs: len(x.times.lateIDs), Amended: x.amended.GetCardinality(), Terms: x.mut.mut.terms.len(),
		ContextErrors: x.ctx.errors.Load(),
	}
	m.FilterCacheBytes, m.FilterCacheEntries = x.fcache.size()
	for _, s := range x.segs {
		if s.mut == nil {
			m.Segments++
			m.SegmentBytes += int64(len(s.buf))
		}
	}
	return m
}
