package segment

import (
	"container/list"
	"sync"
	"sync/atomic"
)

// segCache is an LRU bounded by bytes that holds two kinds of entries:
// whole decompressed segments (Get and Scan, which read neighbours) and
// single records (GetMany, which reads a few records of many segments,
// until a segment's records are dense enough: see denseRecords).
//
// Why records: a lazy recall reads ~10-50 records scattered over the whole
// log, about one per segment. Caching the segment to serve one record
// keeps ~200 times the bytes that are used: at 1M records a 64 MiB cache
// held ~1000 of 5060 segments, most recalls' records missed it and each
// miss read, checksummed and copied a 64 KiB segment (~40 µs) for one
// ~300-byte record. The same bytes hold ~150k records.
//
// A mutex suffices: a hit costs a map lookup and a list move, far below
// the cost of the copy the caller makes next.
type segCache struct {
	mu       sync.Mutex
	capacity int64
	used     int64
	ll       *list.List               // front = most recent; values *cacheEntry
	m        map[uint64]*list.Element // segments by first id
	recs     map[uint64]*list.Element // records by id
	segRecs  map[uint64][]uint64      // cached record ids by segment (for invalidate)
	// segRecBytes is the cost of the cached records of each segment.
	segRecBytes map[uint64]int64

	hits, misses atomic.Uint64 // served from memory; segments read from Pebble
	// epoch counts invalidations. A reader takes it before reading a
	// segment and its put is dropped if the segment may have been rewritten
	// or dropped meanwhile: a copy read before a compaction must not
	// outlive the tombstones the compaction clears.
	epoch atomic.Uint64
}

type cacheEntry struct {
	first uint64   // the segment's first id
	id    uint64   // a record entry's id; 0 for a segment entry
	d     *decoded // segment entry
	rec   []byte   // record entry: the payload (owned)
}

// recOverhead approximates the memory of a record entry beyond its payload:
// the entry, its list element and two map slots.
const recOverhead = 160

func (e *cacheEntry) size() int64 {
	if e.id != 0 {
		return int64(len(e.rec)) + recOverhead
	}
	return e.d.size()
}

func newSegCache(capacity int64) *segCache {
	return &segCache{
		capacity: capacity,
		ll:       list.New(),
		m:        make(map[uint64]*list.Element),
		recs:     make(map[uint64]*list.Element),
		segRecs:  make(map[uint64][]uint64),

		segRecBytes: make(map[uint64]int64),
	}
}

// get returns the cached segment starting at first, or nil. Misses are
// counted where the segment is then read (Log.read).
func (c *segCache) get(first uint64) *decoded {
	c.mu.Lock()
	e, ok := c.m[first]
	if ok {
		c.ll.MoveToFront(e)
		d := e.Value.(*cacheEntry).d
		c.mu.Unlock()
		c.hits.Add(1)
		return d
	}
	c.mu.Unlock()
	return nil
}

// getRecord returns the cached payload of record id (read only).
func (c *segCache) getRecord(id uint64) ([]byte, bool) {
	c.mu.Lock()
	e, ok := c.recs[id]
	if !ok {
		c.mu.Unlock()
		return nil, false
	}
	c.ll.MoveToFront(e)
	p := e.Value.(*cacheEntry).rec
	c.mu.Unlock()
	c.hits.Add(1)
	return p, true
}

// put caches segment d, read when the invalidation epoch was epoch.
func (c *segCache) put(first uint64, d *decoded, epoch uint64) {
	sz := d.size()
	if sz > c.capacity {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch.Load() != epoch {
		return
	}
	if e, ok := c.m[first]; ok {
		old := e.Value.(*cacheEntry)
		c.used += sz - old.d.size()
		old.d = d
		c.ll.MoveToFront(e)
	} else {
		c.m[first] = c.ll.PushFront(&cacheEntry{first: first, d: d})
		c.used += sz
	}
	c.removeRecords(first) // the segment serves them
	c.evict()
}

// putRecord caches a copy of record id's payload p, which lives in the
// segment starting at first, read when the invalidation epoch was epoch.
func (c *segCache) putRecord(first, id uint64, p []byte, epoch uint64) {
	ent := &cacheEntry{first: first, id: id}
	if ent.size()+int64(len(p)) > c.capacity {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch.Load() != epoch {
		return
	}
	if _, ok := c.recs[id]; ok {
		return // records never change; an invalidation removes the old one
	}
	ent.rec = append(make([]byte, 0, len(p)), p...)
	c.recs[id] = c.ll.PushFront(ent)
	c.segRecs[first] = append(c.segRecs[first], id)
	c.segRecBytes[first] += ent.size()
	c.used += ent.size()
	c.evict()
}

// evict drops least recently used entries until the cache fits. Callers
// hold c.mu.
func (c *segCache) evict() {
	for c.used > c.capacity {
		c.remove(c.ll.Back())
	}
}

// remove drops one entry. Callers hold c.mu.
func (c *segCache) remove(e *list.Element) {
	ent := e.Value.(*cacheEntry)
	c.ll.Remove(e)
	c.used -= ent.size()
	if ent.id == 0 {
		delete(c.m, ent.first)
		return
	}
	delete(c.recs, ent.id)
	ids := c.segRecs[ent.first]
	for i, id := range ids {
		if id == ent.id {
			ids[i] = ids[len(ids)-1]
			ids = ids[:len(ids)-1]
			break
		}
	}
	if len(ids) == 0 {
		delete(c.segRecs, ent.first)
		delete(c.segRecBytes, ent.first)
	} else {
		c.segRecs[ent.first] = ids
		c.segRecBytes[ent.first] -= ent.size()
	}
}

// removeRecords drops the cached records of the segment starting at
// first. Callers hold c.mu.
func (c *segCache) removeRecords(first uint64) {
	for len(c.segRecs[first]) > 0 {
		ids := c.segRecs[first]
		c.remove(c.recs[ids[len(ids)-1]])
	}
}

// invalidate drops the segment starting at first and its cached records:
// the segment was rewritten (seal, compaction) or dropped.
func (c *segCache) invalidate(first uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch.Add(1)
	if e, ok := c.m[first]; ok {
		c.remove(e)
	}
	c.removeRecords(first)
}

// denseRecords reports whether the cached records of the segment starting
// at first cost at least a quarter of the segment's decoded size: its
// records are then read often enough that caching it whole (put, which
// drops them) serves their neighbours too for at most 4x the bytes. A
// small log ends up cached as segments; at 1M records a recall workload's
// records stay ~4% of each segment, so records are cached.
func (c *segCache) denseRecords(first uint64, segSize int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return 4*c.segRecBytes[first] >= segSize
}

func (c *segCache) bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// reset drops every entry: the store under the cache was reopened.
func (c *segCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch.Add(1)
	for c.ll.Len() > 0 {
		c.remove(c.ll.Back())
	}
}
