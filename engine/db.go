package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/index"
	"github.com/lazymem/lazymem/segment"
)

// DB is a lazymem store: an append-only log (dir/log), the broad-retrieval
// index (dir/index) and the embedding cache (dir/cache). All methods are
// safe for concurrent use.
type DB struct {
	dir  string
	opts Options
	// ownConstruct: the caller gave Options.Construct (Forget then cannot
	// tell from the index which records may construct a text).
	ownConstruct bool
	lock         interface{ Close() error } // the store lock (lock.go)
	log          *segment.Log
	// w is the append path: the log itself here. It is the one narrow
	// interface appends go through, so a cluster mode can put a
	// replicated writer in front of the same log without touching the
	// engine's write path.
	w     segment.Writer
	idx   *index.Index
	cache *vecCache // nil when no embedder
	// facts are the recency and rule inputs of the records recalls have
	// read (facts.go), so a warm recall reads only the records it returns.
	facts factTable
	// aliases are the names the records define, per agent set
	// (recall_alias.go).
	aliases aliasTables
	// names are the roles as the name rules across scripts match them
	// (recall_rolenames.go).
	names roleNames
	// core is the core store (dir/core): units, value signals; ring the
	// recent recalls feedback can name; bg its background goroutine.
	core *coreStore
	ring *recallRing
	bg   *coreBackground

	// mu guards closed: every method holds it shared, Close exclusively,
	// so Close waits for calls in progress.
	mu     sync.RWMutex
	closed bool
	// appendMu orders log appends and idxMu index adds. An appender takes
	// idxMu before it releases appendMu (hand over hand), so batches reach
	// the index in id order (it needs strictly increasing ids) while the
	// next batch's durable write overlaps this batch's indexing.
	appendMu sync.Mutex
	idxMu    sync.Mutex

	// indexRepaired is where Open set a corrupt index aside ("" if not).
	indexRepaired string
	// format is the store format (the FORMAT marker).
	format uint32

	usage usageState // per-agent bytes for AgentDB quotas
	// maintMu serializes the operations that change what the store holds
	// other than appends (Forget, retention, Compact) with Backup.
	maintMu sync.Mutex

	// pins are the records retention keeps (dir/PINS), replaced whole
	// under pinMu.
	pinMu sync.Mutex
	pins  *roaring.Bitmap
	// bgStop ends the background loop (retention, compaction); bgWG
	// waits for it.
	bgStop chan struct{}
	bgWG   sync.WaitGroup
	// work is the working memory's queue (workmem.go); nil when off.
	work *workMem
	// stopOnce: concurrent Close calls stop the loop once.
	stopOnce sync.Once

	retPasses, retExpired, retDropped atomic.Uint64

	appended         atomic.Uint64
	forgotten        atomic.Uint64
	compactions      atomic.Uint64
	recalls          atomic.Uint64
	indexErrors      atomic.Uint64
	backgroundErrors atomic.Uint64
}

// backgroundError counts err, an error of work the DB runs in the
// background (no caller to return it to), and hands it to
// Options.OnBackgroundError.
func (db *DB) backgroundError(err error) {
	db.backgroundErrors.Add(1)
	if f := db.opts.OnBackgroundError; f != nil {
		f(err)
	}
}

// Open opens or creates the store in dir. The log recovers every
// acknowledged record; the index reloads its persisted segments and
// re-indexes from the log whatever they lack; the embedding cache reopens
// its Pebble store, so embeddings computed before a restart are reused.
//
// Open first takes the store lock (a store another DB holds is refused
// with a *LockedError naming the holder), undoes a creation a crash
// interrupted (create.go), and finishes a Forget a crash interrupted
// (forget_intent.go). With Options.MustExist a directory holding no store
// is ErrNoStore instead of a new store.
//
// Open resolves opts once, into the DB's own copy: defaults fill the unset
// fields, the fields the caller set are kept as they are, and the result is
// validated.
//
// The recall's built-in tables (warmTables) are parsed while the log and
// the index load, and Open returns once they are; then it collects the
// loading's garbage (collectOpenGarbage).
func Open(dir string, opts Options) (*DB, error) {
	warmed := make(chan struct{})
	go func() {
		defer close(warmed)
		warmTables()
	}()
	defer func() { <-warmed }()
	ownConstruct := opts.Construct != nil
	if err := opts.resolve(); err != nil {
		return nil, err
	}
	db := &DB{dir: dir, opts: opts, ownConstruct: ownConstruct}
	fs := opts.FS
	var err error
	if opts.MustExist {
		if err := storeExists(fs, dir); err != nil {
			return nil, err
		}
	}
	lock, fresh, err := prepareDir(fs, dir)
	if err != nil {
		return nil, err
	}
	db.lock = lock
	if db.format, err = openFormat(fs, dir); err != nil {
		_ = db.lock.Close()
		return nil, err
	}
	db.log, err = segment.Open(fs.PathJoin(dir, "log"), opts.Log)
	if err != nil {
		_ = db.lock.Close()
		return nil, fmt.Errorf("lazymem: engine: open log: %w", err)
	}
	db.w = db.log
	// A rebuild of the index (Forget, Compact) builds index.new, renames
	// the old one to index.old and removes it once the new one is in
	// place; a crash in between leaves them behind, the old one with
	// forgotten words in it.
	if err := errors.Join(fs.RemoveAll(fs.PathJoin(dir, "index.old")), fs.RemoveAll(fs.PathJoin(dir, "index.new"))); err != nil {
		_ = db.log.Close()
		_ = db.lock.Close()
		return nil, fmt.Errorf("lazymem: engine: remove index.old: %w", err)
	}
	// The index's background flushes and merges report through the DB
	// (counted in Metrics.BackgroundErrors, then Options.OnBackgroundError)
	// unless the caller wired the index's own hook.
	if db.opts.Index.OnBackgroundError == nil {
		db.opts.Index.OnBackgroundError = db.backgroundError
	}
	opts.Index = db.opts.Index
	idir := fs.PathJoin(dir, "index")
	db.idx, err = index.Open(idir, opts.Index, logSource{db.log})
	if err != nil && errors.Is(err, index.ErrCorrupt) && !opts.DisableIndexRepair {
		// The index is derived data: set the damaged one aside (for
		// forensics) and rebuild it from the log.
		aside := fmt.Sprintf("%s.corrupt-%d", idir, time.Now().UnixNano())
		if rerr := opts.Index.FS.Rename(idir, aside); rerr == nil {
			db.indexRepaired = aside
			db.idx, err = index.Open(idir, opts.Index, logSource{db.log})
		}
	}
	if err != nil {
		_ = db.log.Close()
		_ = db.lock.Close()
		return nil, fmt.Errorf("lazymem: engine: open index: %w", err)
	}
	if opts.Embedder != nil {
		cdir := ""
		if !opts.DisableDiskCache {
			cdir = fs.PathJoin(dir, "cache")
		}
		db.cache, err = newVecCache(cacheConfig{
			fs: fs, dir: cdir, emb: opts.Embedder,
			memBytes: opts.CacheBytes, blockBytes: opts.DiskCacheBlockBytes,
			timeout: opts.EmbedTimeout, onErr: db.backgroundError,
		})
		if err != nil {
			_ = db.idx.Close()
			_ = db.log.Close()
			_ = db.lock.Close()
			return nil, fmt.Errorf("lazymem: engine: open embedding cache: %w", err)
		}
	}
	// The core store opens before a Forget interrupted by a crash is
	// finished: finishing it forgets the records' units too.
	if err := db.openCore(); err != nil {
		_ = db.closeParts()
		return nil, err
	}
	if err := db.finishIntent(); err != nil {
		_ = db.closeParts()
		return nil, err
	}
	if err := db.loadPins(); err != nil {
		_ = db.closeParts()
		return nil, err
	}
	if fresh {
		if err := doneCreating(fs, dir); err != nil {
			_ = db.closeParts()
			return nil, err
		}
	}
	db.collectOpenGarbage()
	db.bgStop = make(chan struct{})
	if (opts.Retention.enabled() && opts.Retention.Interval > 0) || opts.CompactInterval > 0 {
		db.bgWG.Add(1)
		go db.background()
	}
	if db.cache != nil && !db.opts.WorkingMemory.Disable {
		db.work = newWorkMem(db.opts.Clock())
		db.bgWG.Add(1)
		go db.workLoop()
	}
	return db, nil
}

// Append validates r, appends it durably to the log and indexes it. It
// returns the record's id.
func (db *DB) Append(ctx context.Context, r Record) (uint64, error) {
	ids, err := db.appendBatch(ctx, []Record{r}, "record")
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// AppendBatch appends recs in order with one durable write and returns
// their ids (consecutive). Every record is validated first: if any is
// invalid, nothing is written and the error names it ("records[3].agent").
func (db *DB) AppendBatch(ctx context.Context, recs []Record) ([]uint64, error) {
	if len(recs) == 0 {
		return nil, fieldErr("records", ErrMissing, "empty batch")
	}
	return db.appendBatch(ctx, recs, "")
}

func (db *DB) appendBatch(ctx context.Context, recs []Record, single string) ([]uint64, error) {
	maxRec := db.opts.Log.MaxRecordBytes
	now := db.opts.Clock()

	// First pass: validate every record and make its index document, so
	// that the analysis can start before the encoding (profile: a lone
	// writer's critical path was encode, then analysis, then insert).
	// Metadata is in sorted key order, from one array for the batch
	// (profile: sorting each record's keys into fresh slices twice was 14%
	// of the bytes allocated); the codec's fields are made from the index's.
	nMeta := 0
	for i := range recs {
		nMeta += len(recs[i].Meta)
	}
	docs := make([]index.Doc, len(recs))
	ptrs := make([]*index.Doc, len(recs))
	imeta := make([]index.Field, 0, nMeta)
	var keys []string
	var cmeta []codec.Field
	size := 0
	for i := range recs {
		r := &recs[i]
		if !recordOK(r, &db.opts) {
			return nil, recordError(r, &db.opts, recordName(single, i))
		}
		t := r.Time
		if t.IsZero() {
			t = now
		}
		d := &docs[i]
		*d = index.Doc{Time: t.UnixNano(), Agent: r.Agent, Session: r.Session, Role: r.Role, Text: r.Text}
		if len(r.Meta) > 0 {
			keys = sortedKeys(keys, r.Meta)
			m0 := len(imeta)
			for _, k := range keys {
				imeta = append(imeta, index.Field{Key: k, Values: r.Meta[k]})
			}
			d.Meta = imeta[m0:len(imeta):len(imeta)]
		}
		c := docRecord(d, &cmeta)
		n := codec.RecordSize(&c)
		if n > maxRec {
			return nil, fieldErr(recordName(single, i), ErrTooLong, fmt.Sprintf("encoded %d bytes, log limit %d", n, maxRec))
		}
		size += n
		ptrs[i] = d
	}

	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The text analysis (most of the index's cost) does not need the ids:
	// it runs while this goroutine encodes the batch and the log syncs it
	// (profile: a lone caller spent a quarter of each 1000-record batch
	// waiting on the fsync), and AddAnalyzed inserts each chunk as soon as
	// it is analysed.
	analyzed := db.idx.Analyze(ptrs)
	enc := getEncoding(size, len(recs))
	buf := enc.buf // RecordSize is exact: buf never moves
	for i := range docs {
		c := docRecord(&docs[i], &cmeta)
		start := len(buf)
		buf = codec.AppendRecord(buf, &c)
		enc.payloads[i] = buf[start:len(buf):len(buf)]
	}
	enc.buf = buf
	db.appendMu.Lock()
	first, err := db.w.AppendBatch(ctx, enc.payloads)
	putEncoding(enc) // the log copied the payloads
	if err != nil {
		db.appendMu.Unlock()
		analyzed.Release()
		return nil, fmt.Errorf("lazymem: engine: append: %w", err)
	}
	db.idxMu.Lock()
	db.appendMu.Unlock()
	defer db.idxMu.Unlock()
	ids := make([]uint64, len(recs))
	for i := range ids {
		ids[i] = first + uint64(i)
		docs[i].ID = ids[i] // the analysis reads no id
	}
	db.appended.Add(uint64(len(recs)))
	if err := db.idx.AddAnalyzed(ptrs, analyzed); err != nil {
		// The records are durable; the index lacks them until the next Open
		// re-indexes the log's tail.
		db.indexErrors.Add(1)
		return ids, fmt.Errorf("lazymem: engine: records %d..%d are stored but not indexed until reopen: %w",
			first, ids[len(ids)-1], err)
	}
	db.noteAppend(recs, ids, now)
	return ids, nil
}

// encoding is a batch's encoded records, recycled through encodingPool:
// the log copies what it appends (profile: the encoded batch, about the
// size of its text, was a tenth of the bytes one writer's ingest
// allocated).
type encoding struct {
	buf      []byte
	payloads [][]byte
}

var encodingPool sync.Pool // *encoding

// maxPooledEncoding bounds the buffer an encoding keeps in the pool.
const maxPooledEncoding = 4 << 20

// getEncoding returns an encoding with room for size bytes and n payloads.
func getEncoding(size, n int) *encoding {
	e, _ := encodingPool.Get().(*encoding)
	if e == nil {
		e = &encoding{}
	}
	if cap(e.buf) < size {
		e.buf = make([]byte, 0, size)
	}
	e.buf = e.buf[:0]
	e.payloads = slices.Grow(e.payloads[:0], n)[:n]
	return e
}

func putEncoding(e *encoding) {
	clear(e.payloads)
	if cap(e.buf) > maxPooledEncoding {
		return
	}
	encodingPool.Put(e)
}

// docRecord is the log record of an index document; its metadata fields
// are made in *scratch, valid until the next call.
func docRecord(d *index.Doc, scratch *[]codec.Field) codec.Record {
	c := codec.Record{Time: d.Time, Agent: d.Agent, Session: d.Session, Role: d.Role, Text: d.Text}
	if len(d.Meta) > 0 {
		fs := (*scratch)[:0]
		for _, f := range d.Meta {
			fs = append(fs, codec.Field{Key: f.Key, Values: f.Values})
		}
		*scratch = fs
		c.Meta = fs
	}
	return c
}

// recordName names record i of a call in errors: single for Append,
// records[i] for AppendBatch.
func recordName(single string, i int) string {
	if single != "" {
		return single
	}
	return fmt.Sprintf("records[%d]", i)
}

// Get returns the record with the given id.
func (db *DB) Get(ctx context.Context, id uint64) (Record, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return Record{}, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return Record{}, err
	}
	p, err := db.log.Get(id, nil)
	switch {
	case errors.Is(err, segment.ErrNotFound), errors.Is(err, segment.ErrDeleted):
		// A forgotten record is indistinguishable from an id never
		// assigned: the same error, the same message.
		return Record{}, fmt.Errorf("%w: id %d", ErrNotFound, id)
	case err != nil:
		return Record{}, fmt.Errorf("lazymem: engine: get %d: %w", id, err)
	}
	var c codec.Record
	if _, err := codec.DecodeRecord(p, &c); err != nil {
		return Record{}, fmt.Errorf("%w: id %d: %w", ErrCorrupt, id, err)
	}
	return fromCodec(id, &c), nil
}

// Close flushes the index (so the next Open need not re-index), closes the
// embedding cache, the index and the log. Calls in progress finish first.
func (db *DB) Close() error {
	db.mu.RLock()
	closed := db.closed
	db.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	db.stopOnce.Do(func() {
		close(db.bgStop)
		db.bgWG.Wait() // a pass in progress finishes (or stops on its context)
	})
	db.stopCoreBackground()
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return ErrClosed
	}
	db.closed = true
	return db.closeParts()
}

// closeParts flushes the index and closes the cache, the index and the
// log.
func (db *DB) closeParts() error {
	var errs []error
	if db.idx.Metrics().MemDocs > 0 {
		if err := db.idx.Flush(); err != nil {
			errs = append(errs, fmt.Errorf("lazymem: engine: flush index: %w", err))
		}
	}
	errs = append(errs, db.closeCore())
	if db.cache != nil {
		if err := db.cache.close(); err != nil {
			errs = append(errs, fmt.Errorf("lazymem: engine: close cache: %w", err))
		}
	}
	if err := db.idx.Close(); err != nil {
		errs = append(errs, fmt.Errorf("lazymem: engine: close index: %w", err))
	}
	if err := db.log.Close(); err != nil {
		errs = append(errs, fmt.Errorf("lazymem: engine: close log: %w", err))
	}
	if db.lock != nil {
		if err := db.lock.Close(); err != nil {
			errs = append(errs, fmt.Errorf("lazymem: engine: release lock: %w", err))
		}
		db.lock = nil
	}
	return errors.Join(errs...)
}

// Metrics is a point-in-time snapshot of a DB.
type Metrics struct {
	Appended    uint64 // records appended since Open
	Forgotten   uint64 // records forgotten since Open (Forget)
	Compactions uint64 // purges (Compact, background) since Open
	Recalls     uint64 // recalls answered since Open
	IndexErrors uint64 // batches stored but not indexed (re-indexed on Open)
	// BackgroundErrors counts the errors of work the DB ran in the
	// background, with no caller to return them to (each also went to
	// Options.OnBackgroundError): a shared embedding that failed after
	// every recall waiting for it had given up, a failure of the embedding
	// cache's Pebble (flush, compaction).
	BackgroundErrors uint64
	// IndexRepaired is the directory Open moved a corrupt index to before
	// rebuilding it from the log; "" when the index opened cleanly.
	IndexRepaired string
	// StoreFormat is the store's format version (its FORMAT marker; a
	// store written before the marker existed is format 1).
	StoreFormat uint32
	Retention   RetentionMetrics
	Log         segment.Metrics
	Index       index.Metrics
	Cache       CacheMetrics
	// WorkingMemory counts the background embedding of live turns.
	WorkingMemory WorkingMemoryMetrics
}

// Stopped returns the report after which the storage engine of the log
// or of the core store stopped (segment.ErrStopped wraps it; a goroutine
// of it is parked for good), or nil. Once it is non-nil, appends and
// core-memory writes fail until the process restarts; reads of the log go
// on. A daemon's readiness probe answers with it. (The embedding cache
// is derived data: a stopped cache is not a stopped store.)
func (db *DB) Stopped() error {
	if err := db.log.Stopped(); err != nil {
		return err
	}
	if db.core != nil {
		return db.core.park.Err()
	}
	return nil
}

// Metrics returns a snapshot.
func (db *DB) Metrics() Metrics {
	db.mu.RLock()
	defer db.mu.RUnlock()
	m := Metrics{
		Appended:         db.appended.Load(),
		Forgotten:        db.forgotten.Load(),
		Compactions:      db.compactions.Load(),
		Recalls:          db.recalls.Load(),
		IndexErrors:      db.indexErrors.Load(),
		BackgroundErrors: db.backgroundErrors.Load(),
		IndexRepaired:    db.indexRepaired,
		StoreFormat:      db.format,
		WorkingMemory:    db.work.metrics(),
	}
	if db.closed {
		return m
	}
	db.pinMu.Lock()
	m.Retention = RetentionMetrics{Passes: db.retPasses.Load(), Expired: db.retExpired.Load(),
		DroppedRecords: db.retDropped.Load(), Pinned: db.pins.GetCardinality()}
	db.pinMu.Unlock()
	m.Log = db.log.Metrics()
	m.Index = db.idx.Metrics()
	if db.cache != nil {
		m.Cache = db.cache.metrics()
	}
	return m
}

// Stats is Metrics under the name docs/DESIGN.md gives it (stats).
func (db *DB) Stats() Metrics { return db.Metrics() }
