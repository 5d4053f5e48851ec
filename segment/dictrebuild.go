package segment

import (
	"context"
	"errors"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// The log's dictionary holds pieces of the texts it was built from (its
// history, dict.go). When a record whose text it holds is purged, Compact
// builds a new dictionary from live text, rewrites every segment
// compressed with the old one and then deletes the old one ('y' and 'z'
// keys), before the flush and compaction that rewrite Pebble's files. A
// crash at any point leaves every record readable (the new dictionary is
// committed before any segment that uses it, the old one deleted after
// the last segment that used it is rewritten), and the next Compact
// finishes the job: it rewrites the segments of every dictionary but the
// current one, and it rebuilds whenever a record the current dictionary
// holds is deleted, dropped or dead in its segment, which stays true
// after a crash.

// compactDict, at the start of Compact, builds a new dictionary when the
// current one holds text of a record that is deleted or gone (dictStale),
// and drops the records about to be purged from the sealer's sample when
// no dictionary is built yet. purging: the compaction purges records or
// names. Callers hold sealMu.
func (l *Log) compactDict(ctx context.Context, purging bool) error {
	if len(l.dict.recs) > 0 {
		l.segMu.RLock()
		l.dict.texts, l.dict.recs = dropSampled(l.dict.texts, l.dict.recs, l.deleted.Contains)
		l.segMu.RUnlock()
	}
	stale, err := l.dictStale(purging)
	if err != nil || !stale {
		return err
	}
	return l.rebuildDict(ctx)
}

// dropSampled removes the texts of the records gone says are gone from a
// sample.
func dropSampled(texts []byte, recs []sampleRec, gone func(uint64) bool) ([]byte, []sampleRec) {
	if !slices.ContainsFunc(recs, func(r sampleRec) bool { return gone(r.id) }) {
		return texts, recs
	}
	var out []byte
	var kept []sampleRec
	start := 0
	for _, r := range recs {
		if !gone(r.id) {
			out = append(out, texts[start:r.end]...)
			kept = append(kept, sampleRec{id: r.id, end: len(out)})
		}
		start = r.end
	}
	return out, kept
}

// dictStale reports whether the current dictionary holds text of a
// record that is deleted, dropped (retention) or dead in its segment.
// A dictionary whose records are unknown (written before they were kept)
// counts as stale when the compaction purges anything. Callers hold
// sealMu.
func (l *Log) dictStale(purging bool) (bool, error) {
	cur := l.comp.encDict()
	if cur == nil {
		return false, nil
	}
	hist, known := l.dict.hist[cur.num]
	if !known {
		return purging, nil
	}
	l.segMu.RLock()
	var check []segMeta
	for _, id := range hist {
		if l.deleted.Contains(id) {
			l.segMu.RUnlock()
			return true, nil
		}
		m := findSeg(l.segs, id)
		if m == nil {
			l.segMu.RUnlock()
			return true, nil // dropped
		}
		if m.dead > 0 && (len(check) == 0 || check[len(check)-1].first != m.first) {
			check = append(check, *m)
		}
	}
	l.segMu.RUnlock()
	for _, m := range check {
		d, closer, err := l.read(m, false)
		if errors.Is(err, errSegmentGone) {
			return true, nil
		}
		if err != nil {
			// Damaged: the records it held are unreadable, their text may
			// be gone: rebuild.
			l.logf("lazymem: segment: compact: dictionary check: %v", err)
			return true, nil
		}
		dead := false
		for _, id := range hist {
			if id >= m.first && id < m.end() && d.dead[id-m.first] {
				dead = true
				break
			}
		}
		closer.Close()
		if dead {
			return true, nil
		}
	}
	return false, nil
}

// rebuildDict builds a new dictionary from live text and makes it the
// current one, committed before any segment uses it. With too little live
// text the log goes on without one (the sealer samples again). Callers
// hold sealMu.
func (l *Log) rebuildDict(ctx context.Context) error {
	sample, recs, err := l.liveSample(ctx)
	if err != nil {
		return err
	}
	num := l.dict.max + 1
	var raw []byte
	var hist []uint64
	if len(sample) >= dictMinSample && !l.opts.DisableDictionary {
		raw, hist, err = l.buildDict(num, sample, recs)
		if err != nil {
			l.logf("lazymem: segment: compact: building a zstd dictionary: %v", err)
		}
	}
	if raw == nil {
		l.comp.setCur(0)
		l.dict.done, l.dict.texts, l.dict.recs = false, nil, nil
		return nil
	}
	if err := l.comp.addDict(num, raw); err != nil {
		return err
	}
	l.dict.max = num
	l.dict.hist[num] = hist
	db, err := l.rdb()
	if err != nil {
		return err
	}
	defer l.dbMu.RUnlock()
	b := db.NewBatch()
	defer l.closeBatch(b)
	if err := l.setDict(b, l.comp.encDict()); err != nil {
		return err
	}
	// No sync: the segments that use it commit after it, in the same WAL.
	l.dict.stored = false // until the commit succeeds: a seal stores it again
	if err := l.commit(b, pebble.NoSync); err != nil {
		return wrapWrite("compact dictionary", err)
	}
	l.dict.stored, l.dict.done = true, true
	l.dict.keys = append(l.dict.keys, num)
	return nil
}

// liveSample returns about dictSample bytes of the texts of live records
// from segments spread evenly over the log, and which record's text ends
// where. Callers hold sealMu.
func (l *Log) liveSample(ctx context.Context) ([]byte, []sampleRec, error) {
	l.segMu.RLock()
	segs := slices.Clone(l.segs)
	l.segMu.RUnlock()
	var raw int64
	for _, m := range segs {
		raw += int64(m.raw)
	}
	stride := max(1, int(raw/dictSample))
	var enc colEncoder
	var sample []byte
	var recs []sampleRec
	for off := 0; off < stride && len(sample) < dictSample; off++ {
		for i := off; i < len(segs) && len(sample) < dictSample; i += stride {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
			m := segs[i]
			d, closer, err := l.read(m, false)
			if errors.Is(err, errSegmentGone) {
				continue
			}
			if err != nil {
				l.logf("lazymem: segment: compact: dictionary sample: %v", err)
				continue
			}
			payloads := make([][]byte, m.count)
			l.segMu.RLock()
			for k := range payloads {
				id := m.first + uint64(k)
				if !l.deleted.Contains(id) {
					payloads[k], _ = d.get(id)
				}
			}
			l.segMu.RUnlock()
			if _, ok := enc.encode(nil, payloads); ok {
				recs = appendSampleRecs(recs, m.first, payloads, enc.cols[colTextLens], len(sample))
				sample = append(sample, enc.cols[colTexts]...)
			}
			closer.Close()
		}
	}
	return sample, recs, nil
}

// sweepDicts rewrites every segment compressed with a dictionary other
// than the current one, then deletes those dictionaries. It takes sealMu
// (held by the caller) away between segments so that seals go on. A
// segment that fails to read keeps its dictionary until a later Compact.
func (l *Log) sweepDicts(ctx context.Context) error {
	curID := l.comp.encDict().id()
	var stale []uint32
	for _, k := range l.dict.keys {
		if k != curID {
			stale = append(stale, k)
		}
	}
	if len(stale) == 0 {
		return nil
	}
	l.segMu.RLock()
	segs := slices.Clone(l.segs)
	l.segMu.RUnlock()
	kept := map[uint32]bool{} // stale dictionaries a damaged segment still uses
	for _, m := range segs {
		if err := ctx.Err(); err != nil {
			return err
		}
		dict, err := l.segmentDict(m)
		if errors.Is(err, errSegmentGone) {
			continue
		}
		if err != nil {
			return err
		}
		if !slices.Contains(stale, dict) {
			continue
		}
		if err := l.rewrite(m); err != nil {
			if !IsCorruption(err) {
				return err
			}
			l.logf("lazymem: segment: compact: dictionary %d kept: %v", dict, err)
			kept[dict] = true
		}
		// Let a seal waiting for sealMu in; Close may take it too.
		l.sealMu.Unlock()
		l.sealMu.Lock()
		if l.isClosed() {
			return ErrClosed
		}
	}
	db, err := l.rdb()
	if err != nil {
		return err
	}
	defer l.dbMu.RUnlock()
	b := db.NewBatch()
	defer l.closeBatch(b)
	var gone []uint32
	for _, k := range stale {
		if kept[k] {
			continue
		}
		gone = append(gone, k)
		if err := b.Delete(makeKey(prefixDict, uint64(k)), nil); err != nil {
			return err
		}
		if err := b.Delete(makeKey(prefixDictIDs, uint64(k)), nil); err != nil {
			return err
		}
	}
	if len(gone) == 0 {
		return nil
	}
	if err := l.commit(b, pebble.NoSync); err != nil {
		return wrapWrite("compact dictionary", err)
	}
	// The decoder keeps them: a read that got a segment's value before its
	// rewrite still decodes it.
	l.dict.keys = slices.DeleteFunc(l.dict.keys, func(k uint32) bool { return slices.Contains(gone, k) })
	for _, k := range gone {
		delete(l.dict.hist, k)
	}
	return nil
}

// segmentDict returns the dictionary segment m's value was compressed
// with (0 for none, or for a value that is not framed).
func (l *Log) segmentDict(m segMeta) (uint32, error) {
	db, err := l.rdb()
	if err != nil {
		return 0, err
	}
	defer l.dbMu.RUnlock()
	v, closer, err := value(db, m)
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	if len(v) == 0 || !isFramed(v[0]) {
		return 0, nil
	}
	f, err := parseFramed(m.first, v)
	if err != nil {
		return 0, nil // damaged: its reads fail either way; rewriting cannot read it
	}
	return f.dict, nil
}

// rewrite rewrites segment m with the current dictionary, without the
// records deleted since it was written. Callers hold sealMu.
func (l *Log) rewrite(m segMeta) error {
	// Through the cache, as Compact read them before the rebuild: a
	// Forget's re-indexing has just read many of these segments.
	d, err := l.load(m)
	if err != nil {
		return err
	}
	payloads := make([][]byte, m.count)
	var clear []uint64
	l.segMu.RLock()
	for i := range payloads {
		id := m.first + uint64(i)
		if l.deleted.Contains(id) {
			clear = append(clear, id)
			continue
		}
		if p, ok := d.get(id); ok {
			payloads[i] = p
		}
	}
	l.segMu.RUnlock()
	l.uncount([]segMeta{m})
	nm, err := l.writeSegment(m.first, payloads, clear)
	if err != nil {
		l.use.ok = false // the old value may still be the stored one
		return err
	}
	l.recount(nm)
	return nil
}
