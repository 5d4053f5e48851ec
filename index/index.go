package index

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
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
	MergeErrors  int64
	FlushErrors  int64  // background flushes that failed (retried by the next Flush)
	Rebuilt      uint64 // documents re-indexed from the Source by Open
	Dropped      int    // segments dropped by Open (beyond the log, or corrupt)
	LateDocs     int    // documents whose time is below an earlier id's time
	Terms        int    // distinct terms in the mutable segment
	// ContextErrors counts predecessors SessionContext could not read from
	// the Source (those documents were indexed without context).
	ContextErrors int64
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

	live    *roaring.Bitmap // indexed and not deleted
	tomb    *roaring.Bitmap
	fields  fieldSet
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
	rebuilt                               uint64
	dropped                               int

	pool sync.Pool // *searcher

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
		live: roaring.New(), tomb: roaring.New(), fields: make(fieldSet),
		mergeKick: make(chan struct{}, 1), flushKick: make(chan struct{}, 1), stop: make(chan struct{}),
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
	if err := x.recount(); err != nil {
		return nil, err
	}
	if src != nil {
		if err := x.rebuildTail(src); err != nil {
			return nil, err
		}
	}
	if dirty {
		if err := x.writeManifestLocked(); err != nil {
			return nil, err
		}
	}
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

// load reads the manifest and its segments; dirty reports that the
// manifest must be rewritten (segments were dropped).
func (x *Index) load(src Source) (dirty bool, err error) {
	if err := x.fs.MkdirAll(x.dir, 0o755); err != nil {
		return false, fmt.Errorf("lazymem: index: mkdir: %w", err)
	}
	// A new directory's own entry must be durable too, or a crash can lose
	// the directory with everything synced inside it.
	if err := syncDir(x.fs, x.fs.PathDir(x.dir)); err != nil {
		return false, fmt.Errorf("lazymem: index: sync parent dir: %w", err)
	}
	var m *manifest
	buf, err := readFile(x.fs, x.fs.PathJoin(x.dir, manifestName))
	switch {
	case err == nil:
		if m, err = decodeManifest(buf); err != nil {
			return false, err
		}
	case errors.Is(err, errNotExist) || isNotExist(err):
		m = &manifest{nextNum: 1, tomb: roaring.New()}
	default:
		return false, fmt.Errorf("lazymem: index: read manifest: %w", err)
	}
	x.nextNum = max(m.nextNum, 1)
	x.tomb = m.tomb
	limit := uint64(math.MaxUint64)
	if src != nil {
		limit = src.LastID()
	}
	if sig := x.signature(); len(m.segs) > 0 && m.sig != sig {
		if src == nil {
			return false, fmt.Errorf("%w: index built with analyzer %q, options say %q, and no Source to rebuild from",
				ErrAnalyzerChanged, m.sig, sig)
		}
		x.dropped += len(m.segs)
		m.segs = nil // re-index everything from the log with the new rules
		dirty = true
	}
	keep := map[string]bool{}
	for i, ms := range m.segs {
		if uint64(ms.hi) > limit {
			// The log lacks these ids (it lost a tail): never claim them.
			x.dropped += len(m.segs) - i
			dirty = true
			break
		}
		name := segName(ms.num)
		b, err := readFile(x.fs, x.fs.PathJoin(x.dir, name))
		var s *segment
		if err == nil {
			s, err = openSegment(name, ms.num, b)
		}
		if err == nil && (s.lo != ms.lo || s.hi != ms.hi) {
			err = &CorruptionError{File: name, Offset: 16, Err: errors.New("id range differs from manifest")}
		}
		if err != nil {
			if src == nil {
				return false, fmt.Errorf("lazymem: index: open segment %s: %w", name, err)
			}
			// Index files are derived data: drop this segment and the
			// ones after it and rebuild their ids from the log.
			x.dropped += len(m.segs) - i
			dirty = true
			break
		}
		keep[name] = true
		x.segs = append(x.segs, s)
	}
	// Remove files no manifest references (crashed flushes and merges).
	names, err := x.fs.List(x.dir)
	if err != nil {
		return false, fmt.Errorf("lazymem: index: list: %w", err)
	}
	for _, n := range names {
		if (strings.HasSuffix(n, ".lzi") && !keep[n]) || n == manifestTemp {
			if err := x.fs.Remove(x.fs.PathJoin(x.dir, n)); err != nil {
				return false, fmt.Errorf("lazymem: index: remove orphan %s: %w", n, err)
			}
		}
		if num, ok := strings.CutSuffix(n, ".lzi"); ok {
			if v, err := strconv.ParseUint(num, 10, 64); err == nil && v >= x.nextNum {
				x.nextNum = v + 1
			}
		}
	}
	// Global structures: field postings, time index, live set.
	for _, s := range x.segs {
		if err := x.absorbSegment(s); err != nil {
			return false, err
		}
	}
	if len(x.segs) > 0 {
		x.lastID = x.segs[len(x.segs)-1].hi
		x.hasDocs = true
	}
	return dirty, nil
}

func (x *Index) absorbSegment(s *segment) error {
	x.live.Or(s.present)
	it := s.present.Iterator()
	for it.HasNext() {
		id := it.Next()
		x.times.add(id, s.docTime(id))
	}
	return s.forEachField(func(k, v string, bm *roaring.Bitmap) error {
		m := x.fields[k]
		if m == nil {
			m = make(map[string]*roaring.Bitmap)
			x.fields[k] = m
		}
		if b := m[v]; b != nil {
			b.Or(bm)
		} else {
			m[v] = bm.Clone()
		}
		return nil
	})
}

// recount recomputes per-segment deletion counts and the live totals from
// the segments and the tombstones.
func (x *Index) recount() error {
	x.nLive, x.sumLive = 0, 0
	x.live.AndNot(x.tomb)
	for _, s := range x.allSegs() {
		x.recountSeg(s)
		x.nLive += uint64(s.nDocs) - uint64(s.nDeleted)
		x.sumLive += s.sumLen - s.delLen
	}
	return nil
}

func (x *Index) recountSeg(s *segment) {
	s.nDeleted, s.delLen = 0, 0
	s.delMu.Lock()
	s.delDF = nil
	s.delMu.Unlock()
	if x.tomb.IsEmpty() || s.empty() {
		return
	}
	d := roaring.And(x.tomb, s.present)
	it := d.Iterator()
	for it.HasNext() {
		id := it.Next()
		s.nDeleted++
		s.delLen += uint64(s.docLen(id))
	}
}

func (x *Index) allSegs() []*segment {
	if x.mut == nil {
		return x.segs
	}
	return append(x.segs[:len(x.segs):len(x.segs)], x.mut)
}

func (x *Index) rebuildTail(src Source) error {
	last := src.LastID()
	from := uint64(0)
	if x.hasDocs {
		from = uint64(x.lastID) + 1
	}
	if from > last && x.hasDocs {
		return nil
	}
	batch := make([]*Doc, 0, 512)
	docs := make([]Doc, 512)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := x.add(batch, false)
		x.rebuilt += uint64(len(batch))
		batch = batch[:0]
		return err
	}
	err := src.Scan(from, func(d *Doc) error {
		if d.ID > last || d.ID < from {
			return nil
		}
		c := &docs[len(batch)]
		*c = *d
		c.Meta = append(c.Meta[:0], d.Meta...)
		for i := range c.Meta {
			c.Meta[i].Values = slices.Clone(c.Meta[i].Values)
		}
		batch = append(batch, c)
		if len(batch) == cap(batch) {
			return flush()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("lazymem: index: rebuild from log: %w", err)
	}
	return flush()
}

// Add indexes documents. Ids must be strictly increasing across calls. The
// batch is validated first: on a validation error nothing is indexed.
func (x *Index) Add(docs []*Doc) error { return x.add(docs, true) }

type analyzed struct {
	off, n int // terms/tfs of the doc in batchTerms[off:off+n]
	// xoff, xn: terms added by withContext (the terms of a predecessor from
	// an earlier chunk that the document lacks), in [xoff:xoff+xn].
	xoff, xn int
	dl       uint32 // indexed length: own plus context
	// own is the number of the document's own terms: the first own
	// entries of [off:off+n], their own frequencies in batchTerms.otfs.
	own   int
	ownDL uint32
	// pred is the chunk index of the document's predecessor in the chunk
	// (whose own terms analyze merged in), -1 if none; succ reports that a
	// later document of the chunk has this one as predecessor.
	pred int32
	succ bool
}

// batchTerms holds the analysed terms of a chunk, flat.
type batchTerms struct {
	terms []string
	tfs   []uint32 // indexed frequencies (own plus context)
	// otfs and tid are parallel to terms: otfs is the own frequency of a
	// document's own term (0 for a context term); tid is the term's id in
	// the chunk (its index in uterms), or -1 for a term withContext added.
	otfs []uint32
	tid  []int32
	docs []analyzed
	// Chunk term ids: analyze gives each distinct term of the chunk an id,
	// so that a document's terms are deduplicated and its predecessor's
	// merged by array index, and insert looks each distinct term up once
	// per chunk instead of once per posting (profile: the term map lookup
	// was a quarter of insert, the serial part of an Add).
	ids    map[string]int32
	uterms []string // id -> term
	stamp  []int32  // id -> 1 + the last document (in the chunk) holding it
	at     []int32  // id -> the term's entry in that document
	slotOf []int32  // id -> slot in the mutable segment, filled by insert
	// reused by analyze
	scratch []string
	lastOf  map[ctxKey]int32 // key -> latest doc of the chunk
	slow    bool             // made by withContextSlow (remembered already)
}

func (bt *batchTerms) reset() {
	bt.terms, bt.tfs, bt.otfs, bt.tid, bt.docs = bt.terms[:0], bt.tfs[:0], bt.otfs[:0], bt.tid[:0], bt.docs[:0]
	bt.uterms = bt.uterms[:0]
	if bt.ids == nil || len(bt.ids) > 1<<14 {
		bt.ids = make(map[string]int32, 1024) // do not keep a huge chunk's table
	} else {
		clear(bt.ids)
	}
	bt.slow = false
}

// analyze analyses the texts of one chunk. With SessionContext, a document
// whose predecessor (the previous document of its agent and session) is in
// the same chunk takes the predecessor's own terms here, on the worker
// goroutine; withContext later does the rest under addMu (the first
// document of each session in the chunk, and deletions during a rebuild).
// It reads only docs: chunks of one batch are analysed concurrently.
func (x *Index) analyze(docs []*Doc, out *batchTerms) {
	out.reset()
	scratch := out.scratch[:0]
	ctx := x.opts.SessionContext
	if ctx {
		if out.lastOf == nil {
			out.lastOf = make(map[ctxKey]int32, addChunk)
		}
		clear(out.lastOf)
	}
	ids := out.ids
	for i, d := range docs {
		scratch = x.opts.Analyzer.Terms(scratch[:0], d.Text)
		mark := int32(i + 1)
		a := analyzed{off: len(out.terms), dl: uint32(len(scratch)), ownDL: uint32(len(scratch)), pred: -1}
		for _, t := range scratch {
			id, ok := ids[t]
			if !ok {
				id = int32(len(out.uterms))
				ids[t] = id
				out.uterms = append(out.uterms, t)
				out.stamp = append(out.stamp[:id], 0)
				out.at = append(out.at[:id], 0)
			}
			if out.stamp[id] == mark {
				out.tfs[out.at[id]]++
				continue
			}
			out.stamp[id], out.at[id] = mark, int32(len(out.terms))
			out.terms = append(out.terms, t)
			out.tfs = append(out.tfs, 1)
			out.tid = append(out.tid, id)
		}
		a.own = len(out.terms) - a.off
		out.otfs = append(out.otfs, out.tfs[a.off:]...)
		if ctx && d.Session != "" {
			k := ctxKey{d.Agent, d.Session}
			if j, ok := out.lastOf[k]; ok {
				// The predecessor's own terms: a shared term adds its
				// frequency, a new one is appended.
				p := &out.docs[j]
				for e := p.off; e < p.off+p.own; e++ {
					id := out.tid[e]
					if out.stamp[id] == mark {
						out.tfs[out.at[id]] += out.otfs[e]
						continue
					}
					out.terms = append(out.terms, out.terms[e])
					out.tfs = append(out.tfs, out.otfs[e])
					out.otfs = append(out.otfs, 0)
					out.tid = append(out.tid, id)
				}
				a.dl += p.ownDL
				a.pred = j
				p.succ = true
			}
			out.lastOf[k] = int32(i)
		}
		a.n = len(out.terms) - a.off
		out.docs = append(out.docs, a)
	}
	clear(scratch) // do not pin document text
	out.scratch = scratch[:0]
}

// parallelMin is the batch size from which Add analyses on several cores.
const parallelMin = 256

// validateDocs checks a batch before anything of it is indexed.
func validateDocs(docs []*Doc) error {
	prev := uint64(0)
	for i, d := range docs {
		if d == nil {
			return ErrNilDoc
		}
		if d.ID >= endDoc {
			return fmt.Errorf("%w: %d", ErrIDRange, d.ID)
		}
		if i > 0 && d.ID <= prev {
			return fmt.Errorf("%w: %d after %d", ErrIDOrder, d.ID, prev)
		}
		for _, f := range d.Meta {
			if err := CheckMetaKey(f.Key); err != nil {
				return fmt.Errorf("document %d: %w", d.ID, err)
			}
		}
		prev = d.ID
	}
	return nil
}

// checkAppend reports whether docs may follow what is indexed. Callers hold
// x.addMu.
func (x *Index) checkAppend(docs []*Doc) error {
	x.mu.RLock()
	closed, bad := x.closed, x.hasDocs && docs[0].ID <= uint64(x.lastID)
	last := x.lastID
	x.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	if bad {
		return fmt.Errorf("%w: %d after %d", ErrIDOrder, docs[0].ID, last)
	}
	return nil
}

// Analyzed is the text analysis of a batch made by Analyze before the
// batch's ids are known: the engine analyses while the log makes the batch
// durable, then adds it with AddAnalyzed.
type Analyzed struct {
	x     *Index
	n     int
	bts   []*batchTerms
	ready []chan struct{} // ready[c] is closed once bts[c] is analysed
	wg    sync.WaitGroup  // the analysing goroutines
}

// Analyze starts the analysis of docs' texts, the costly part of Add,
// without touching the index, and returns at once; docs' ids are not read,
// and no other field of docs may change until the analysis is handed to
// AddAnalyzed with the same documents, or to Release (both wait for it).
// AddAnalyzed inserts each chunk as soon as it is analysed (profile: a lone
// writer waited for the whole batch's analysis after its log sync, then
// inserted on one core while the other idled).
func (x *Index) Analyze(docs []*Doc) *Analyzed {
	a := &Analyzed{x: x, n: len(docs)}
	nChunks := (len(docs) + addChunk - 1) / addChunk
	a.bts = make([]*batchTerms, nChunks)
	a.ready = make([]chan struct{}, nChunks)
	for i := range a.bts {
		a.bts[i] = x.getBatch()
		a.ready[i] = make(chan struct{})
	}
	workers := min(runtime.GOMAXPROCS(0), nChunks)
	if len(docs) < parallelMin {
		workers = min(1, nChunks)
	}
	next := new(atomic.Int64)
	for range workers {
		a.wg.Go(func() {
			for {
				c := int(next.Add(1)) - 1
				if c >= nChunks {
					return
				}
				x.analyze(docs[c*addChunk:min((c+1)*addChunk, len(docs))], a.bts[c])
				close(a.ready[c])
			}
		})
	}
	return a
}

// Release returns an analysis that will not be added, once its goroutines
// are done.
func (a *Analyzed) Release() {
	if a == nil {
		return
	}
	a.wg.Wait()
	for _, bt := range a.bts {
		a.x.putBatch(bt)
	}
	a.bts = nil
}

// AddAnalyzed indexes docs, whose analysis Analyze made (their ids may have
// been set since). It validates like Add and consumes a either way.
func (x *Index) AddAnalyzed(docs []*Doc, a *Analyzed) error {
	defer a.Release()
	if a == nil || a.x != x || a.n != len(docs) || a.bts == nil {
		return fmt.Errorf("%w: AddAnalyzed with an analysis of another batch", ErrOptions)
	}
	if len(docs) == 0 {
		return nil
	}
	if err := validateDocs(docs); err != nil {
		return err
	}
	x.addMu.Lock()
	defer x.addMu.Unlock()
	if err := x.checkAppend(docs); err != nil {
		return err
	}
	for c := range a.bts {
		<-a.ready[c]
		x.insertChunk(docs[c*addChunk:min((c+1)*addChunk, len(docs))], a.bts, c)
	}
	return x.afterAdd(true)
}

func (x *Index) add(docs []*Doc, autoFlush bool) error {
	if len(docs) == 0 {
		return nil
	}
	if err := validateDocs(docs); err != nil {
		return err
	}
	x.addMu.Lock()
	defer x.addMu.Unlock()
	if err := x.checkAppend(docs); err != nil {
		return err
	}
	// Analysis runs outside the lock. Large batches are cut into chunks that
	// worker goroutines analyse while this goroutine inserts the chunks
	// already analysed, in order, taking the write lock once per chunk.
	nChunks := (len(docs) + addChunk - 1) / addChunk
	bts := make([]*batchTerms, nChunks)
	for i := range bts {
		bts[i] = x.getBatch()
	}
	if nChunks == 1 || len(docs) < parallelMin {
		for c := range nChunks {
			x.analyze(docs[c*addChunk:min((c+1)*addChunk, len(docs))], bts[c])
		}
		for c := range nChunks {
			x.insertChunk(docs[c*addChunk:min((c+1)*addChunk, len(docs))], bts, c)
		}
	} else {
		done := make([]chan struct{}, nChunks)
		for i := range done {
			done[i] = make(chan struct{})
		}
		var next atomic.Int64
		workers := min(runtime.GOMAXPROCS(0), nChunks)
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					c := int(next.Add(1)) - 1
					if c >= nChunks {
						return
					}
					x.analyze(docs[c*addChunk:min((c+1)*addChunk, len(docs))], bts[c])
					close(done[c])
				}
			}()
		}
		for c := range nChunks {
			<-done[c]
			x.insertChunk(docs[c*addChunk:min((c+1)*addChunk, len(docs))], bts, c)
		}
		wg.Wait()
	}
	for _, bt := range bts {
		x.putBatch(bt)
	}
	return x.afterAdd(autoFlush)
}

// afterAdd starts a flush when the mutable segment is full. Callers hold
// x.addMu.
func (x *Index) afterAdd(autoFlush bool) error {
	x.mu.RLock()
	need := autoFlush && x.opts.FlushDocs > 0 && int(x.mut.nDocs) >= x.opts.FlushDocs
	x.mu.RUnlock()
	if !need {
		return nil
	}
	// Freeze the full mutable segment (it stays searchable) and let the
	// flusher goroutine encode and persist it while Adds continue. If the
	// flusher falls behind by two segments, this Add flushes synchronously
	// (back-pressure bounds the unpersisted, uncompacted memory).
	if x.freeze() >= 2 || x.opts.DisableBackgroundMerge {
		return x.Flush()
	}
	select {
	case x.flushKick <- struct{}{}:
	default:
	}
	return nil
}

// freeze moves a non-empty mutable segment to the segment list (to be
// sealed by a flush) and returns the number of segments awaiting sealing.
func (x *Index) freeze() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	if s := x.mut; !s.empty() && !x.closed {
		x.segs = append(x.segs, s)
		x.mut = newMutable(s.hi+1, memHint{terms: len(s.mut.terms), docs: len(s.mut.lens)})
		s.mut.fields = x.fieldsIn(s.lo, s.hi)
	}
	n := 0
	for _, s := range x.segs {
		if s.mut != nil {
			n++
		}
	}
	return n
}

func (x *Index) flushLoop() {
	defer x.wg.Done()
	for {
		select {
		case <-x.stop:
			return
		case <-x.flushKick:
		}
		if err := x.flushPending(); err != nil && !errors.Is(err, ErrClosed) {
			x.flushErrs.Add(1)
		}
	}
}

// addChunk is the number of documents analysed and inserted as one unit.
const addChunk = 128

func (x *Index) getBatch() *batchTerms {
	if bt, ok := x.batchPool.Get().(*batchTerms); ok {
		bt.reset()
		return bt
	}
	return &batchTerms{}
}

func (x *Index) putBatch(bt *batchTerms) {
	clear(bt.terms) // do not pin document text
	clear(bt.uterms)
	clear(bt.ids)
	x.batchPool.Put(bt)
}

// insertChunk inserts chunk c of a batch, with session context when the
// index has it on. Callers hold x.addMu.
func (x *Index) insertChunk(docs []*Doc, bts []*batchTerms, c int) {
	if x.opts.SessionContext {
		bts[c] = x.withContext(docs, bts[c])
	}
	x.insert(docs, bts[c])
	if x.opts.SessionContext {
		x.rememberChunk(docs, bts[c])
	}
}

// insert adds analysed documents to the mutable segment and the global
// structures. Callers hold x.addMu.
func (x *Index) insert(docs []*Doc, bt *batchTerms) {
	x.mu.Lock()
	defer x.mu.Unlock()
	s := x.mut
	m := s.mut
	slotOf := slices.Grow(bt.slotOf[:0], len(bt.uterms))[:len(bt.uterms)]
	for i := range slotOf {
		slotOf[i] = -1
	}
	bt.slotOf = slotOf
	for i, d := range docs {
		id := uint32(d.ID)
		if s.empty() && len(x.segs) == 0 && !x.hasDocs {
			s.lo, s.hi = id, id-1
		}
		for uint32(len(m.lens)) < id-s.lo {
			m.lens = append(m.lens, 0)
			m.times = append(m.times, 0)
		}
		a := &bt.docs[i]
		m.lens = append(m.lens, a.dl)
		m.times = append(m.times, d.Time)
		s.hi = id
		s.nDocs++
		s.sumLen += uint64(a.dl)
		s.present.Add(id)
		for j := a.off; j < a.off+a.n; j++ {
			// Each distinct term of the chunk is looked up once.
			var k int32
			if c := bt.tid[j]; c >= 0 && slotOf[c] >= 0 {
				k = slotOf[c]
			} else {
				t := bt.terms[j]
				var ok bool
				if k, ok = m.terms[t]; !ok {
					k = m.slab.alloc()
					m.terms[strings.Clone(t)] = k
				}
				if c >= 0 {
					slotOf[c] = k
				}
			}
			m.slab.at(k).add(&m.arena, id, bt.tfs[j], a.dl)
		}
		for j := a.xoff; j < a.xoff+a.xn; j++ {
			t := bt.terms[j]
			k, ok := m.terms[t]
			if !ok {
				k = m.slab.alloc()
				m.terms[strings.Clone(t)] = k
			}
			m.slab.at(k).add(&m.arena, id, bt.tfs[j], a.dl)
		}
		x.addField(keyAgent, d.Agent, id)
		x.addField(keySession, d.Session, id)
		x.addField(keyRole, d.Role, id)
		for _, f := range d.Meta {
			for _, v := range f.Values {
				x.addField(f.Key, v, id)
			}
		}
		x.times.add(id, d.Time)
		x.live.Add(id)
		x.nLive++
		x.sumLive += uint64(a.dl)
		if x.tomb.Contains(id) { // persisted deletion of a re-indexed record
			x.live.Remove(id)
			s.nDeleted++
			s.delLen += uint64(a.dl)
			x.nLive--
			x.sumLive -= uint64(a.dl)
		}
		x.lastID, x.hasDocs = id, true
	}
}

func (x *Index) addField(key, val string, id uint32) {
	if val == "" && strings.HasPrefix(key, "\x00") {
		return
	}
	x.fields.add(key, val, id)
}

// fieldsIn extracts the field postings of ids [lo, hi] from the global
// ones (a sealed segment stores its own part). Callers hold x.mu.
func (x *Index) fieldsIn(lo, hi uint32) fieldSet {
	r := roaring.New()
	r.AddRange(uint64(lo), uint64(hi)+1)
	out := make(fieldSet)
	for k, m := range x.fields {
		for v, bm := range m {
			if bm.IsEmpty() || bm.Maximum() < lo || bm.Minimum() > hi {
				continue
			}
			sub := roaring.And(bm, r)
			if sub.IsEmpty() {
				continue
			}
			om := out[k]
			if om == nil {
				om = make(map[string]*roaring.Bitmap)
				out[k] = om
			}
			om[v] = sub
		}
	}
	return out
}

// Delete tombstones documents: they disappear from Filter and Search at
// once, from global statistics at once, and physically at the next merge
// of their segment. With a directory, the tombstones are persisted before
// Delete returns. Unknown or already deleted ids are ignored.
func (x *Index) Delete(ids []uint64) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrClosed
	}
	changed := false
	all := x.allSegs()
	for _, id64 := range ids {
		if id64 >= endDoc {
			continue
		}
		id := uint32(id64)
		if !x.live.Contains(id) {
			continue
		}
		i, _ := slices.BinarySearchFunc(all, id, func(s *segment, id uint32) int {
			switch {
			case s.hi < id:
				return -1
			case s.lo > id:
				return 1
			}
			return 0
		})
		if i >= len(all) || !all[i].present.Contains(id) {
			continue
		}
		s := all[i]
		dl := s.docLen(id)
		x.tomb.Add(id)
		x.live.Remove(id)
		s.nDeleted++
		s.delLen += uint64(dl)
		s.delMu.Lock()
		s.delDF = nil
		s.delMu.Unlock()
		x.nLive--
		x.sumLive -= uint64(dl)
		changed = true
	}
	if changed && x.dir != "" {
		return x.writeManifestLocked()
	}
	return nil
}

// writeManifestLocked persists the sealed, file-backed segments and the
// tombstones. Callers hold x.mu (read or write).
func (x *Index) writeManifestLocked() error {
	if x.dir == "" {
		return nil
	}
	m := &manifest{nextNum: x.nextNum, tomb: x.tomb, sig: x.signature()}
	for _, s := range x.segs {
		if s.mut != nil {
			break // being flushed: not persisted yet
		}
		m.segs = append(m.segs, manifestSeg{num: s.num, lo: s.lo, hi: s.hi})
	}
	if err := writeManifest(x.fs, x.dir, m); err != nil {
		return fmt.Errorf("lazymem: index: write manifest: %w", err)
	}
	return nil
}

// Flush seals the mutable segment into an immutable one (persisted as a
// file when the index has a directory) and records it in the manifest,
// together with any segment frozen by Add and not yet sealed. Searches and
// Adds proceed during the encoding. A segment whose sealing failed stays
// searchable in memory and is retried by the next Flush.
func (x *Index) Flush() error {
	x.mu.RLock()
	closed := x.closed
	x.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	x.freeze()
	return x.flushPending()
}

// flushPending seals, in id order, every frozen segment.
func (x *Index) flushPending() error {
	x.flushMu.Lock()
	defer x.flushMu.Unlock()
	x.mu.RLock()
	var pending []*segment
	for _, s := range x.segs {
		if s.mut != nil {
			pending = append(pending, s)
		}
	}
	x.mu.RUnlock()
	for _, s := range pending {
		if err := x.sealOne(s); err != nil {
			return err
		}
	}
	return nil
}

func (x *Index) sealOne(s *segment) error {
	x.mu.Lock()
	num := x.nextNum
	x.nextNum++
	x.mu.Unlock()
	sealed, err := x.seal(s, num)
	if err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	i := slices.Index(x.segs, s)
	x.segs[i] = sealed
	x.recountSeg(sealed)
	x.flushes.Add(1)
	if err := x.writeManifestLocked(); err != nil {
		return err
	}
	x.kickMerge()
	return nil
}

// seal encodes a frozen mutable segment and writes its file.
func (x *Index) seal(s *segment, num uint64) (*segment, error) {
	m := s.mut
	b := &segBuilder{lo: s.lo, hi: s.hi, lens: m.lens, times: m.times, present: s.present.Clone(),
		nDocs: s.nDocs, sumLen: s.sumLen, fields: m.fields}
	type termRef struct {
		t string
		k int32
	}
	terms := make([]termRef, 0, len(m.terms))
	total, strLen := 0, 0
	for t, k := range m.terms {
		terms = append(terms, termRef{t, k})
		total += m.slab.at(k).df()
		strLen += len(t)
	}
	slices.SortFunc(terms, func(a, b termRef) int { return strings.Compare(a.t, b.t) })
	b.posts = make([]byte, 0, 3*total+blockMetaSize*(total/blockSize+len(terms)))
	b.table = make([]byte, 0, termEntrySize*len(terms))
	b.strs = make([]byte, 0, strLen)
	var docs, tfs []uint32
	for _, r := range terms {
		docs, tfs = m.slab.at(r.k).appendPostings(&m.arena, docs[:0], tfs[:0])
		b.addTerm(r.t, docs, tfs)
	}
	return x.writeSegment(b, num)
}

func (x *Index) writeSegment(b *segBuilder, num uint64) (*segment, error) {
	img, err := b.finish()
	if err != nil {
		return nil, fmt.Errorf("lazymem: index: encode segment: %w", err)
	}
	name := segName(num)
	if x.dir != "" {
		if err := writeFileSync(x.fs, x.fs.PathJoin(x.dir, name), img); err != nil {
			return nil, fmt.Errorf("lazymem: index: write %s: %w", name, err)
		}
		if err := syncDir(x.fs, x.dir); err != nil {
			return nil, fmt.Errorf("lazymem: index: sync dir: %w", err)
		}
	}
	return openSegment(name, num, img)
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
		Rebuilt: x.rebuilt, Dropped: x.dropped, LateDocs: len(x.times.lateIDs), Terms: len(x.mut.mut.terms),
		ContextErrors: x.ctx.errors.Load(),
	}
	for _, s := range x.segs {
		if s.mut == nil {
			m.Segments++
			m.SegmentBytes += int64(len(s.buf))
		}
	}
	return m
}
