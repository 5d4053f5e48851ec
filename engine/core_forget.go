package engine

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cockroachdb/pebble/v2"
	"github.com/lazymem/lazymem/engine/consolidate"
)

// coreForgetSources makes the core memory forget records: their value
// entries and pipeline bits go, and every unit citing one of them is
// re-derived from its remaining sources by the consolidator (when it gives
// a unit of the same type, that one takes the old unit's id and links) or
// deleted when no source remains or the re-derivation gives nothing.
// Deleting a live unit revives the units it superseded. Content derived
// from a forgotten record therefore does not outlive it; the deleted
// bytes leave the core store with Pebble's compactions.
//
// Forget calls it after the records are deleted from the log and the
// index, so re-derivation reads only what remains. The caller holds db.mu
// shared.
func (db *DB) coreForgetSources(ctx context.Context, ids []uint64) error {
	cs := db.core
	cs.run.Lock()
	defer cs.run.Unlock()
	gone := roaring.New()
	for _, id := range ids {
		if id <= math.MaxUint32 {
			gone.Add(uint32(id))
		}
	}
	// The units to rework, read under the lock; re-derivation runs the
	// consolidator without it.
	cs.mu.Lock()
	affected := map[uint64]consolidate.Unit{}
	for _, id := range ids {
		for _, uid := range cs.citedBy[id] {
			if e := cs.units[uid]; e != nil {
				affected[uid] = e.u
			}
		}
	}
	cs.mu.Unlock()

	rederived := map[uint64]consolidate.Unit{}
	var vecs = map[uint64][]float32{}
	for uid, u := range affected {
		rest := roaring.New()
		for _, s := range u.SourceIDs {
			if s <= math.MaxUint32 && !gone.Contains(uint32(s)) {
				rest.Add(uint32(s))
			}
		}
		if rest.IsEmpty() {
			continue
		}
		in, err := db.buildInput(u.Agent, rest)
		if err != nil {
			return err
		}
		if len(in.Records) == 0 {
			continue
		}
		units, err := db.opts.Core.Consolidator.Consolidate(ctx, in)
		if err != nil {
			return fmt.Errorf("lazymem: engine: forget: re-derive unit %d: %w", uid, err)
		}
		for _, n := range units {
			if n.Type != u.Type {
				continue
			}
			n.ID, n.Agent, n.Supersedes, n.SupersededBy = u.ID, u.Agent, u.Supersedes, u.SupersededBy
			v, err := db.embedUnits(ctx, []consolidate.Unit{n})
			if err != nil {
				return err
			}
			rederived[uid], vecs[uid] = n, v[0]
			break
		}
	}

	cs.mu.Lock()
	defer cs.mu.Unlock()
	// What the deletions delete goes to sstables first, so that they
	// always overlap it and a compaction drops both (a memtable holding a
	// write and its deletion would flush as a file of deletions alone).
	if err := cs.park.Call(cs.pdb.Flush); err != nil {
		return fmt.Errorf("lazymem: engine: core store: forget: %w", err)
	}
	b := cs.newBatch()
	defer cs.closeBatch(b)
	var buf []byte
	// Only keys that exist are deleted: a file of tombstones over nothing
	// would be moved down by a compaction rather than dropped, and a
	// purge could not finish.
	del := func(k []byte) error {
		ok, err := cs.has(k)
		if err != nil || !ok {
			return err
		}
		return b.Delete(k, nil)
	}
	for _, id := range ids {
		if err := del(coreKey(coreValue, id)); err != nil {
			return err
		}
		delete(cs.values, id)
		delete(cs.flushing, id)
	}
	for _, bm := range cs.bitmaps() {
		bm.AndNot(gone)
	}
	cs.bitmapsDirty = true
	touched := map[uint64]bool{}
	for uid := range affected {
		if n, ok := rederived[uid]; ok {
			cs.units[uid] = &coreUnitEntry{u: n, vec: vecs[uid]}
			touched[uid] = true
			if vecs[uid] != nil {
				if err := b.Set(coreKey(coreVector, uid), appendCoreVector(nil, db.opts.Embedder.Name(), vecs[uid]), nil); err != nil {
					return err
				}
			}
			continue
		}
		e := cs.units[uid]
		if e == nil {
			continue
		}
		delete(cs.units, uid)
		if err := del(coreKey(coreUnit, uid)); err != nil {
			return err
		}
		if err := del(coreKey(coreVector, uid)); err != nil {
			return err
		}
		// Unlink: the successor no longer supersedes it; its predecessors
		// are revived when it was live, or handed to its successor.
		if s := cs.units[e.u.SupersededBy]; s != nil {
			s.u.Supersedes = slices.DeleteFunc(s.u.Supersedes, func(x uint64) bool { return x == uid })
			touched[s.u.ID] = true
		}
		for _, pid := range e.u.Supersedes {
			if p := cs.units[pid]; p != nil && p.u.SupersededBy == uid {
				p.u.SupersededBy = e.u.SupersededBy
				if s := cs.units[e.u.SupersededBy]; s != nil {
					s.u.Supersedes = append(s.u.Supersedes, pid)
					s.u.Normalize()
				}
				touched[pid] = true
			}
		}
	}
	for uid := range touched {
		if e := cs.units[uid]; e != nil {
			if len(e.u.Supersedes) == 0 {
				e.u.Supersedes = nil
			}
			buf = consolidate.AppendUnit(buf[:0], &e.u)
			if err := b.Set(coreKey(coreUnit, uid), buf, nil); err != nil {
				return err
			}
		}
	}
	if err := cs.putBitmaps(b); err != nil {
		return err
	}
	if err := cs.commit(b, pebble.Sync); err != nil {
		return fmt.Errorf("lazymem: engine: core store: forget: %w", err)
	}
	cs.reindex()
	return nil
}
