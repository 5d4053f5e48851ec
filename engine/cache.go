package engine

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cockroachdb/errors/oserror"
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/dgraph-io/ristretto/v2"
	"github.com/lazymem/lazymem/engine/embed"
	"github.com/lazymem/lazymem/segment"
	"github.com/lazymem/lazymem/vecmath"
)

// Embedding cache keys. On disk (Pebble, dir/cache):
//
//	key:   "v2/" | first 16 bytes of SHA-256(uvarint(len(ns)) | ns | text)
//	       | embedder name
//	value: Dim x float32, little-endian (unit length)
//
// ns is the tenant namespace: a record's agent, or for a query the agents
// it searches. One tenant's lookups therefore never find a vector another
// tenant's text put there, and the cache's hit counts reveal nothing about
// other tenants' texts or questions. The in-memory tier (ristretto) keys by
// the 16-byte digest alone: one cache serves one embedder. 128 bits of
// SHA-256 make a collision between two texts practically impossible at any
// corpus size, so the cache never returns a vector computed for another
// text. The digest comes before the embedder's name so that forgetting a
// text removes its vectors of every embedder that ever cached it (a store
// is sometimes queried with several) by one prefix scan. The "v2/" prefix
// is a wire constant: never change it; a new layout takes a new prefix.
// "v1/" keys ("v1/" name 0x00 SHA-256(text)[:16], no namespace) are no
// longer read; Compact deletes them.
const (
	cacheKeyPrefix = "v2/"
	cacheKeyV1     = "v1/"
	cacheHashLen   = 16
	// cachePurgeKey is written by reopen: a version edit after Open makes
	// Pebble start a new MANIFEST. Outside the "v1/" and "v2/" ranges.
	cachePurgeKey = "purge"
)

// flight is one text being embedded: the callers missing it wait on done.
type flight struct {
	done chan struct{}
	vec  []float32
	err  error
	// waiting counts the callers still waiting (guarded by vecCache.mu):
	// an error nobody is left to receive is a background error.
	waiting int
}

type vecCache struct {
	emb  embed.Embedder
	name string
	dim  int
	// lexical: the embedder matches words, not meaning
	// (embed.Fusion.Lexical; isLexical).
	lexical bool
	fs      vfs.FS
	dir     string          // "": no disk tier
	popts   *pebble.Options // the disk tier's, for reopen
	// diskReset is why Open emptied the disk tier ("" if it did not).
	diskReset string
	// fatal is the disk tier's first fatal Pebble report (onFatal);
	// opening is true while pebble.Open runs (QuietLogger.Opening).
	fatal   atomic.Pointer[error]
	opening atomic.Bool
	// park bounds the calls into the disk tier that a goroutine parked by
	// the logger would hold up for good (segment.ParkGuard).
	park segment.ParkGuard
	// watch ends an Open of the disk tier whose WAL cannot be flushed
	// (segment.OpenWatch), which would otherwise hang.
	watch segment.OpenWatch
	// beforeClose, a test hook (nil outside tests), runs just before the
	// disk tier's Pebble Close in close; beforeWrite just before a
	// writeDisk batch is committed.
	beforeClose, beforeWrite func()

	mem  *ristretto.Cache[string, []float32] // nil: memory tier off
	disk *pebble.DB                          // nil: disk tier off (or closed, see cache_disk.go)
	// diskMu guards disk against the reopen after a full disk; diskErr is
	// the full disk that stopped the tier's writes (nil: none); lastTry
	// is when the reopen was last tried (UnixNano).
	diskMu                   sync.RWMutex
	diskErr                  atomic.Pointer[error]
	lastTry                  atomic.Int64
	diskSkipped, diskReopens atomic.Uint64

	mu       sync.Mutex
	inflight map[string]*flight
	// unwritten holds the vectors computed but not yet in the disk tier
	// (writeDisk), by disk key: lookups count them as the disk's.
	unwritten map[string]unwrittenVec

	// dropped holds the records whose vectors drop removed (Forget): an
	// embedding that read a record's text before Forget and finishes after
	// it must not store the record's vector again. Record ids are never
	// reused, so the set only grows (one bit a forgotten record, in
	// runs). dropMu orders drop against compute's and getKeyed's stores:
	// a store checks the set and writes under the read lock, drop adds to
	// it and deletes under the write lock. It is taken before diskMu.
	dropMu  sync.RWMutex
	dropped roaring.Bitmap

	// Shared embedding work runs detached from the caller that started it
	// (see get): on a context of its own, bounded by timeout and cancelled
	// by close (stop); wg counts it so close can wait.
	timeout time.Duration
	stop    context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	// writers bounds the disk-tier writes running in the background
	// (writeDisk); writes counts them so close, clear and settle can wait.
	writers chan struct{}
	writes  sync.WaitGroup
	// onErr receives the errors of detached work nobody waited for, and
	// the on-disk tier's background errors. Not nil.
	onErr func(error)

	memHits, diskHits, computed, shared, calls atomic.Uint64
}

// newVecCache opens the cache; dir "" keeps it in memory only. fs holds
// dir.
// cacheConfig configures a vecCache.
type cacheConfig struct {
	fs         vfs.FS
	dir        string // "": no disk tier
	emb        embed.Embedder
	memBytes   int64 // <= 0: no memory tier
	blockBytes int64
	timeout    time.Duration // of one detached embedder call
	onErr      func(error)   // nil: discarded
}

func newVecCache(cfg cacheConfig) (*vecCache, error) {
	emb, memBytes := cfg.emb, cfg.memBytes
	c := &vecCache{emb: emb, name: emb.Name(), dim: emb.Dim(), lexical: isLexical(emb), inflight: map[string]*flight{}, unwritten: map[string]unwrittenVec{}, fs: cfg.fs, dir: cfg.dir,
		timeout: cfg.timeout, onErr: cfg.onErr, writers: make(chan struct{}, cacheWriters)}
	if c.onErr == nil {
		c.onErr = func(error) {}
	}
	c.stop, c.cancel = context.WithCancel(context.Background())
	if memBytes > 0 {
		// About one entry per (4*dim + overhead) bytes; ristretto wants ~10
		// counters per entry it may hold.
		per := int64(4*c.dim + 64)
		counters := max(10*memBytes/per, 1000)
		m, err := ristretto.NewCache(&ristretto.Config[string, []float32]{
			NumCounters: counters,
			MaxCost:     memBytes,
			BufferItems: 64,
			Metrics:     true,
		})
		if err != nil {
			c.cancel()
			return nil, err
		}
		c.mem = m
	}
	if cfg.dir != "" {
		// Pebble's fatal reports never end the process: the log's logger
		// records them (counted as background errors), returns where
		// Pebble stops safely, and parks the reporting goroutine elsewhere;
		// close then leaves the parked store alone.
		logger := segment.QuietLogger{OnFatal: c.onFatal, Opening: c.opening.Load}
		c.popts = &pebble.Options{FS: diskFS{FS: cfg.fs, full: c.diskFull}, Logger: logger, CacheSize: cfg.blockBytes,
			// Pebble recycles obsolete WAL files, keeping the old bytes of
			// deleted (forgotten) entries, unless its cleaner needs the
			// files' contents: the archive cleaner turns recycling off,
			// and the listeners below remove what it archives.
			Cleaner: pebble.ArchiveCleaner{}}
		c.popts.EventListener = &pebble.EventListener{
			BackgroundError: func(err error) {
				c.onErr(fmt.Errorf("lazymem: engine: embedding cache: %w", err))
			},
			FlushEnd:      func(i pebble.FlushInfo) { c.watch.FlushEnd(i); c.backoff(i.Err) },
			CompactionEnd: func(i pebble.CompactionInfo) { c.backoff(i.Err) },
			TableDeleted:  func(i pebble.TableDeleteInfo) { unarchive(cfg.fs, i.Path, c.onErr) },
			WALDeleted:    func(i pebble.WALDeleteInfo) { unarchive(cfg.fs, i.Path, c.onErr) },
		}
		// Point lookups of random keys: a bloom filter spares the misses a
		// data-block read, and float32 vectors do not compress, so block
		// compression would only cost CPU on every read (measured: snappy
		// decoding was a third of a warm recall at 1M records).
		// A canceled Compact must not leave a picked compaction behind (see
		// segment.CompactionScheduler); it keeps no state, so reopens share it.
		c.popts.Experimental.CompactionScheduler = segment.CompactionScheduler()
		c.popts.Levels[0].FilterPolicy = bloom.FilterPolicy(10)
		c.popts.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.DBCompressionNone })
		d, err := c.openDisk(cfg.dir)
		if err != nil && (errors.Is(err, pebble.ErrCorruption) || oserror.IsNotExist(err)) {
			// The cache is derived data: one that does not open (a crash
			// in Pebble's MANIFEST switch, a damaged file) is emptied,
			// not repaired; its vectors are computed again when needed.
			c.diskReset = err.Error()
			if rerr := cfg.fs.RemoveAll(cfg.dir); rerr == nil {
				d, err = c.openDisk(cfg.dir)
			}
		}
		if err != nil {
			if c.mem != nil {
				c.mem.Close()
			}
			c.cancel()
			return nil, err
		}
		c.disk = d
		if err := purgeArchive(cfg.fs, cfg.dir); err != nil {
			_ = c.close()
			return nil, err
		}
	}
	return c, nil
}

// close cancels the detached embedding work still running, waits for it,
// and closes both tiers.
func (c *vecCache) close() error {
	defer c.park.Stop()
	c.cancel()
	c.wg.Wait()
	c.writes.Wait() // a flight's disk write starts before its fly ends
	if c.mem != nil {
		c.mem.Close()
	}
	c.diskMu.Lock()
	defer c.diskMu.Unlock()
	if c.disk != nil {
		if c.parked() {
			return fmt.Errorf("lazymem: engine: embedding cache left open: %w", c.park.Err())
		}
		// Close waits for the flushes and compactions running: one may be
		// parked meanwhile (segment.ParkGuard).
		// The store is read before the call: once the call returns the
		// parked report, close clears c.disk while the call runs on.
		disk := c.disk
		err := c.park.Call(func() error {
			if c.beforeClose != nil {
				c.beforeClose()
			}
			return disk.Close()
		})
		if segment.Parked(err) {
			c.disk = nil // never closes: no reads of it
			return fmt.Errorf("lazymem: engine: embedding cache left open: %w", err)
		}
		if p := c.diskErr.Load(); err != nil && p != nil {
			// The WAL writer's error after a full disk: what it held was
			// never synced (derived data), and the full disk was reported.
			err = nil
		}
		return err
	}
	return nil
}

// idKey is the memory-tier key of a record's vector: 0xff then the id,
// 9 bytes, so it never equals a 16-byte text key. A record's constructed
// text never changes (records are immutable and ids never reused), so the
// vector found by id is the one its text would find; the id entry spares a
// warm recall reading the record from the log just to hash its text.
func idKey(id uint64) string {
	var b [9]byte
	b[0] = 0xff
	binary.LittleEndian.PutUint64(b[1:], id)
	return string(b[:])
}

// getID returns the vector of record id from the memory tier.
func (c *vecCache) getID(id uint64) ([]float32, bool) {
	if c.mem == nil {
		return nil, false
	}
	v, ok := c.mem.Get(idKey(id))
	if ok && len(v) == c.dim {
		return v, true
	}
	return nil, false
}

// setID records the vector of record id in the memory tier.
func (c *vecCache) setID(id uint64, v []float32) {
	if c.mem == nil {
		return
	}
	k := idKey(id)
	c.mem.Set(k, v, c.cost(k))
}

// cacheKey is the digest of text in namespace ns (see the key layout).
func cacheKey(ns, text string) string {
	h := sha256.New()
	h.Write(binary.AppendUvarint(nil, uint64(len(ns))))
	h.Write([]byte(ns))
	h.Write([]byte(text))
	var sum [sha256.Size]byte
	return string(h.Sum(sum[:0])[:cacheHashLen])
}

// queryNS is the cache namespace of a query searching agents: its vector
// is cached apart from every record's and from queries over other agent
// sets.
func queryNS(agents []string) string {
	s := slices.Clone(agents)
	slices.Sort(s)
	s = slices.Compact(s)
	return "\x00query\x00" + strings.Join(s, "\x00")
}

func (c *vecCache) diskKey(dst []byte, key string) []byte {
	return append(append(append(dst, cacheKeyPrefix...), key...), c.name...)
}

// lookupStats counts where the vectors of one get came from.
type lookupStats struct {
	hits, diskHits, computed, shared int
}

// get returns the unit-length vectors of texts, in order, from memory, then
// disk, then one batched Embed call for what is still missing. A text that
// another caller is embedding right now is waited for, not embedded twice.
// The returned vectors are shared with the cache: read only.
//
// ids, when not nil, gives the record whose constructed text texts[i] is
// (0: not a record, the query): the vector then enters the memory tier
// under the record's id (idKey) only, not under its text as well. A warm
// lazy recall looks records up by id, so a second entry per vector would
// only halve the vectors the tier holds (measured at 1M records: each
// vector was kept twice, and 64 MiB held about 20k of the 48k vectors of
// 1000 agent-only queries).
//
// ns[i] is texts[i]'s namespace (cacheKey).
func (c *vecCache) get(ctx context.Context, ns, texts []string, ids []uint64) ([][]float32, lookupStats, error) {
	keys := make([]string, len(texts))
	for i, t := range texts {
		keys[i] = cacheKey(ns[i], t)
	}
	return c.getKeyed(ctx, keys, texts, ids)
}

// getKeyed is get with the texts' keys (cacheKey) computed by the caller.
func (c *vecCache) getKeyed(ctx context.Context, keys, texts []string, ids []uint64) ([][]float32, lookupStats, error) {
	var st lookupStats
	out := make([][]float32, len(texts))
	miss, err := c.find(keys, ids, out, &st, false)
	if err != nil {
		return nil, st, err
	}
	if len(miss) == 0 {
		c.account(st)
		return out, st, nil
	}

	// Claim the misses nobody is computing; wait for the others.
	var waits []flightWait
	var own []*flight
	var ownTexts []string
	var ownKeys, ownMemKeys []string
	var ownIDs []uint64
	mine := map[string]*flight{}
	c.mu.Lock()
	for _, i := range miss {
		k := keys[i]
		if f, ok := mine[k]; ok { // the same text twice in this call
			f.waiting++
			waits = append(waits, flightWait{i: i, f: f})
			continue
		}
		if f, ok := c.inflight[k]; ok {
			f.waiting++
			waits = append(waits, flightWait{i: i, f: f})
			st.shared++
			continue
		}
		f := &flight{done: make(chan struct{}), waiting: 1}
		c.inflight[k] = f
		mine[k] = f
		own = append(own, f)
		ownTexts = append(ownTexts, texts[i])
		ownKeys = append(ownKeys, k)
		ownMemKeys = append(ownMemKeys, c.memKey(k, recordID(ids, i)))
		ownIDs = append(ownIDs, recordID(ids, i))
		waits = append(waits, flightWait{i: i, f: f, stored: true})
	}
	c.mu.Unlock()

	if len(own) > 0 {
		// The embedding this call claimed is shared: other callers missing
		// the same texts wait on its flights. It runs detached from ctx, so
		// this caller hanging up does not fail them; each waiter stops
		// waiting on its own ctx. A caller that cannot hang up (ctx without
		// Done) runs it itself and spares a goroutine.
		c.wg.Add(1)
		if ctx.Done() == nil {
			c.fly(ctx, ownTexts, ownKeys, ownMemKeys, ownIDs, own)
		} else {
			go c.fly(ctx, ownTexts, ownKeys, ownMemKeys, ownIDs, own)
		}
		st.computed += len(own)
	}
	for k, w := range waits {
		select {
		case <-w.f.done:
		case <-ctx.Done():
			c.leave(waits[k:])
			return nil, st, ctx.Err()
		}
		if w.f.err != nil {
			c.leave(waits[k+1:])
			return nil, st, w.f.err
		}
		out[w.i] = w.f.vec
	}
	// A vector another call computed (shared), or the same text a second
	// time in this call, entered memory under another key: add this
	// record's, unless Forget dropped the record meanwhile.
	c.dropMu.RLock()
	for _, w := range waits {
		if id := recordID(ids, w.i); id != 0 && !w.stored && !c.isDropped(id) {
			c.setID(id, w.f.vec)
		}
	}
	c.dropMu.RUnlock()
	c.account(st)
	return out, st, nil
}

// flightWait is one text of a get waiting on a flight.
type flightWait struct {
	i      int // index of the text in the get
	f      *flight
	stored bool // compute stores the vector in memory under i's key
}

// leave stops waiting on the flights of ws: a get returning before they
// complete.
func (c *vecCache) leave(ws []flightWait) {
	c.mu.Lock()
	for _, w := range ws {
		w.f.waiting--
	}
	c.mu.Unlock()
}

// fly runs the embedding of claimed flights on a context detached from the
// caller's (its values kept, its cancellation not), bounded by c.timeout
// and cancelled by close, then completes the flights. An error no waiter is
// left to receive goes to c.onErr, unless close caused it.
func (c *vecCache) fly(parent context.Context, texts, keys, memKeys []string, ids []uint64, fs []*flight) {
	defer c.wg.Done()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), c.timeout)
	stop := context.AfterFunc(c.stop, cancel)
	err := c.compute(ctx, texts, keys, memKeys, ids, fs)
	stop()
	cancel()
	// The vectors go to the disk tier after their waiters have them;
	// c.unwritten holds them until then (writeDisk), but for a record
	// Forget dropped meanwhile (see drop).
	toDisk := err == nil && c.dir != ""
	if toDisk {
		c.dropMu.RLock()
	}
	waiting := 0
	c.mu.Lock()
	for j, f := range fs {
		if err != nil {
			f.err = err
		}
		if toDisk && !c.isDropped(ids[j]) {
			c.unwritten[keys[j]] = unwrittenVec{vec: f.vec, id: ids[j]}
		}
		waiting += f.waiting
		delete(c.inflight, keys[j])
		close(f.done)
	}
	c.mu.Unlock()
	if toDisk {
		c.dropMu.RUnlock()
		c.writeDisk(keys, ids, fs)
	}
	if err != nil && waiting == 0 && c.stop.Err() == nil {
		c.onErr(fmt.Errorf("lazymem: engine: embedding %d texts nobody waited for any more: %w", len(texts), err))
	}
}

// recordID returns ids[i], or 0 when ids is nil.
func recordID(ids []uint64, i int) uint64 {
	if ids == nil {
		return 0
	}
	return ids[i]
}

// memKey is the memory-tier key of a vector: the record's id key when it
// is a record's (id != 0), else its text key.
func (c *vecCache) memKey(key string, id uint64) string {
	if id != 0 {
		return idKey(id)
	}
	return key
}

// isDropped reports whether Forget dropped record id's vectors (c.dropMu
// held).
func (c *vecCache) isDropped(id uint64) bool {
	return id <= math.MaxUint32 && c.dropped.Contains(uint32(id))
}

// compute embeds texts in one call, normalizes the vectors, stores them in
// the memory tier (under memKeys) and hands them to the flights; fly then
// writes them to the disk tier (under keys) after their waiters have them
// (writeDisk). ids[j] is texts[j]'s record (0: not a record's); the vector
// of a record Forget dropped while it was embedded is handed to the flight
// but not stored.
func (c *vecCache) compute(ctx context.Context, texts, keys, memKeys []string, ids []uint64, fs []*flight) error {
	c.calls.Add(1)
	vs, err := c.emb.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrEmbed, c.name, err)
	}
	if len(vs) != len(texts) {
		return fmt.Errorf("%w: %s returned %d vectors for %d texts", ErrEmbed, c.name, len(vs), len(texts))
	}
	slab := make([]float32, len(texts)*c.dim)
	for j, v := range vs {
		if len(v) != c.dim {
			return fmt.Errorf("%w: %s returned a %d-d vector, want %d", ErrEmbed, c.name, len(v), c.dim)
		}
		u := slab[j*c.dim : (j+1)*c.dim : (j+1)*c.dim]
		copy(u, v)
		vecmath.Normalize(u)
		fs[j].vec = u
	}
	if c.mem != nil {
		c.dropMu.RLock()
		defer c.dropMu.RUnlock()
		for j := range fs {
			if !c.isDropped(ids[j]) {
				c.mem.Set(memKeys[j], fs[j].vec, c.cost(memKeys[j]))
			}
		}
		c.mem.Wait()
	}
	return nil
}

func (c *vecCache) cost(key string) int64 { return int64(4*c.dim + len(key) + 48) }

func (c *vecCache) account(st lookupStats) {
	c.memHits.Add(uint64(st.hits))
	c.diskHits.Add(uint64(st.diskHits))
	c.computed.Add(uint64(st.computed))
	c.shared.Add(uint64(st.shared))
}

func encodeVec(dst []byte, v []float32) []byte {
	for _, x := range v {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(x))
	}
	return dst
}

func decodeVec(b []byte, dim int) ([]float32, bool) {
	if len(b) != 4*dim {
		return nil, false
	}
	v := make([]float32, dim)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, true
}
