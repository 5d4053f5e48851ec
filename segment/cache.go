package segment

import (
	"container/list"
	"sync"
	"sync/atomic"
)

// segCache is an LRU of decompressed segments bounded by bytes. A mutex
// suffices: a hit costs a map lookup and a list move, far below the cost of
// the copy the caller makes next.
type segCache struct {
	mu       sync.Mutex
	capacity int64
	used     int64
	ll       *list.List // front = most recent; values *cacheEntry
	m        map[uint64]*list.Element

	hits, misses atomic.Uint64
}

type cacheEntry struct {
	first uint64
	d     *decoded
}

func newSegCache(capacity int64) *segCache {
	return &segCache{capacity: capacity, ll: list.New(), m: make(map[uint64]*list.Element)}
}

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
	c.misses.Add(1)
	return nil
}

func (c *segCache) put(first uint64, d *decoded) {
	sz := d.size()
	if sz > c.capacity {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[first]; ok {
		old := e.Value.(*cacheEntry)
		c.used += sz - old.d.size()
		old.d = d
		c.ll.MoveToFront(e)
	} else {
		c.m[first] = c.ll.PushFront(&cacheEntry{first: first, d: d})
		c.used += sz
	}
	for c.used > c.capacity {
		e := c.ll.Back()
		ent := e.Value.(*cacheEntry)
		c.ll.Remove(e)
		delete(c.m, ent.first)
		c.used -= ent.d.size()
	}
}

func (c *segCache) invalidate(first uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[first]; ok {
		c.used -= e.Value.(*cacheEntry).d.size()
		c.ll.Remove(e)
		delete(c.m, first)
	}
}

func (c *segCache) bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}
