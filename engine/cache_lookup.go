package engine

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2"
)

// lookup returns the vectors of keys found in memory or on disk (nil:
// not cached) without embedding anything: a recall that knows a record's
// key (its fact) need not read the record to look its vector up. ids as
// in get.
func (c *vecCache) lookup(keys []string, ids []uint64) ([][]float32, lookupStats, error) {
	var st lookupStats
	out := make([][]float32, len(keys))
	if _, err := c.find(keys, ids, out, &st, true); err != nil {
		return nil, st, err
	}
	c.account(st)
	return out, st, nil
}

// find sets out[i] to the vector of keys[i] found in memory, else on disk
// (which then enters memory, by record id when ids names one, unless
// Forget dropped that record), and returns the indices of the keys found
// in neither. split allows the disk reads to be split between the cores:
// for keys expected on disk (a fact's key), not for a cold recall's, which
// the bloom filter mostly answers without a read.
func (c *vecCache) find(keys []string, ids []uint64, out [][]float32, st *lookupStats, split bool) ([]int, error) {
	c.dropMu.RLock() // before diskMu (see vecCache)
	defer c.dropMu.RUnlock()
	var miss []int
	for i, k := range keys {
		if c.mem != nil {
			if v, ok := c.mem.Get(k); ok && len(v) == c.dim {
				out[i] = v
				st.hits++
				if id := recordID(ids, i); id != 0 && !c.isDropped(id) {
					c.setID(id, v) // found by text (a duplicate text): by id next time
				}
				continue
			}
		}
		miss = append(miss, i)
	}
	if len(miss) > 0 {
		miss = c.findUnwritten(keys, ids, miss, out, st)
	}
	if len(miss) == 0 {
		return miss, nil
	}
	// Held across the reads (the split ones too): a reopen of the disk
	// tier after a full disk (reopenDisk) waits for them.
	c.diskMu.RLock()
	defer c.diskMu.RUnlock()
	if c.disk == nil { // no disk tier, or closed by a reopen that failed
		return miss, nil
	}
	// Point reads of random keys, a few microseconds of CPU each (block
	// search, checksum, copy): split over the cores like the log's reads.
	w := min(runtime.GOMAXPROCS(0), 4, len(miss)/(diskParallelMin/2))
	if !split || w <= 1 || len(miss) < diskParallelMin {
		return c.readDisk(keys, ids, miss, out, st)
	}
	rests := make([][]int, w)
	sts := make([]lookupStats, w)
	errs := make([]error, w)
	var wg sync.WaitGroup
	for j := range w {
		run := miss[j*len(miss)/w : (j+1)*len(miss)/w]
		wg.Add(1)
		go func() {
			defer wg.Done()
			rests[j], errs[j] = c.readDisk(keys, ids, slices.Clone(run), out, &sts[j])
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var rest []int
	for j := range w {
		rest = append(rest, rests[j]...)
		st.diskHits += sts[j].diskHits
	}
	return rest, nil
}

// diskParallelMin is the fewest disk-tier reads find splits between
// goroutines.
const diskParallelMin = 8

// readDisk reads the keys at miss from the disk tier into out and returns
// those it does not hold; it reuses miss. c.dropMu is held.
func (c *vecCache) readDisk(keys []string, ids []uint64, miss []int, out [][]float32, st *lookupStats) ([]int, error) {
	var kb []byte
	rest := miss[:0]
	for _, i := range miss {
		kb = c.diskKey(kb[:0], keys[i])
		val, closer, err := c.disk.Get(kb)
		if errors.Is(err, pebble.ErrNotFound) {
			rest = append(rest, i)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("lazymem: engine: cache read: %w", err)
		}
		v, ok := decodeVec(val, c.dim)
		_ = closer.Close()
		if !ok { // wrong length: a damaged entry; recompute it
			rest = append(rest, i)
			continue
		}
		out[i] = v
		st.diskHits++
		c.promote(keys, ids, i, v)
	}
	return rest, nil
}

// promote puts v, found in the disk tier for keys[i], in the memory tier
// (by record id when ids names one), unless Forget dropped that record.
// c.dropMu is held.
func (c *vecCache) promote(keys []string, ids []uint64, i int, v []float32) {
	if id := recordID(ids, i); c.mem != nil && !c.isDropped(id) {
		k := c.memKey(keys[i], id)
		c.mem.Set(k, v, c.cost(k))
	}
}
