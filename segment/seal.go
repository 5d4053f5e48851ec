package segment

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/cockroachdb/errors/oserror"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/cockroachdb/pebble/v2"
	"github.com/lazymem/lazymem/codec"
)

func waitBrief() { time.Sleep(50 * time.Microsecond) }

// purgeArchive deletes the obsolete files Pebble's archive cleaner moved
// aside (see Open).
func purgeArchive(fs vfs.FS, dir string) error {
	adir := fs.PathJoin(dir, "archive")
	names, err := fs.List(adir)
	if err != nil {
		if oserror.IsNotExist(err) {
			return nil
		}
		return fmt.Errorf("lazymem: segment: list %s: %w", adir, err)
	}
	for _, n := range names {
		if err := fs.Remove(fs.PathJoin(adir, n)); err != nil && !oserror.IsNotExist(err) {
			return fmt.Errorf("lazymem: segment: purge %s: %w", n, err)
		}
	}
	return nil
}

// sealLoop seals full segments as the tail fills and purges Pebble's
// obsolete files once a second.
func (l *Log) sealLoop() {
	defer l.wg.Done()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-l.stopCh:
			return
		case <-tick.C:
			if err := purgeArchive(l.opts.FS, l.dir); err != nil && l.opts.Logf != nil {
				l.opts.Logf("%v", err)
			}
			l.keepReserve()
			continue
		case <-l.sealCh:
		}
		if l.opts.DisableBackgroundSeal || l.pauseSealer.Load() {
			continue
		}
		for {
			n, err := l.sealOne(false)
			if errors.Is(err, ErrClosed) {
				return
			}
			if err != nil {
				if l.opts.Logf != nil {
					l.opts.Logf("lazymem: segment: background seal: %v", err)
				}
				break
			}
			if n == 0 {
				break
			}
			select {
			case <-l.stopCh:
				return
			default:
			}
		}
	}
}

// sealAssistSegments bounds the unsealed tail under a sustained load: an
// append that leaves it longer than this many segments (SegmentBytes or
// SegmentRecords each) seals segments itself before it returns
// (assistSeal), as the sealer would. Half the tail mirror's capacity, so
// that the sealer packs every segment from memory.
//
// Without it the sealer fell behind a one-writer load whenever the
// appends outpaced it (bench/workload's records, 1M, batches of 1000,
// the whole engine: the tail grew to 55k-214k records by the load's end): past
// the mirror's 2 MiB every seal read Pebble's tail keys instead, which is
// slower and let the tail grow faster, and the tail went through
// Pebble's flushes and compactions (246 MB of it rewritten in the load)
// before its seal deleted it; the log's size after the load then
// depended on how far behind the sealer happened to be (0.34-0.61x of the
// text after a reopen on the same corpus; log-size.md section 11).
const sealAssistSegments = mirrorSegments / 2

// assistSeal is the appender's share of sealing: while the unsealed tail
// is longer than sealAssistSegments segments, it seals a segment when
// sealMu is free, and otherwise waits for the sealer (or whoever holds
// it) to shorten the tail, for at most assistMaxWait in all: Compact,
// DropBefore and Repair hold sealMu for as long as they run, and an
// append is held back by sealing, never by them. Errors are the sealer's
// to report: the append is durable whatever happens here.
func (l *Log) assistSeal(ctx context.Context) {
	if l.opts.DisableBackgroundSeal {
		return
	}
	var deadline time.Time
	for ctx.Err() == nil && l.tailOver() {
		if l.beforeAssist != nil {
			l.beforeAssist()
		}
		if l.sealMu.TryLock() {
			n, err := l.sealOneLocked(false)
			l.sealMu.Unlock()
			if err != nil || n == 0 {
				return
			}
			l.sealAssists.Add(1)
			continue
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(assistMaxWait)
		} else if time.Now().After(deadline) {
			l.assistTimeouts.Add(1)
			return
		}
		waitBrief()
	}
}

// assistMaxWait bounds how long one append waits in assistSeal for
// another holder of sealMu: a seal takes about a third of a millisecond
// (a 32 KiB segment), so the sealer shortens the tail by dozens of
// segments meanwhile; a Compact delays an append by no more than this.
const assistMaxWait = 20 * time.Millisecond

// tailOver reports whether the unsealed tail is longer than
// sealAssistSegments segments.
func (l *Log) tailOver() bool {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	return l.tailBytes > int64(sealAssistSegments)*int64(l.opts.SegmentBytes) ||
		l.tailCount > int64(sealAssistSegments)*int64(l.opts.SegmentRecords)
}

// Seal packs the whole unsealed tail into segments, including a last partial
// one. Background sealing only forms full segments; Seal is for tests and
// for callers that want everything compressed now (before a backup, say).
func (l *Log) Seal() error {
	for {
		n, err := l.sealOne(true)
		if err != nil || n == 0 {
			return err
		}
	}
}

// sealOne seals at most one segment from the start of the tail and returns
// how many records it sealed. Without force it seals only a full segment.
func (l *Log) sealOne(force bool) (int, error) {
	l.sealMu.Lock()
	defer l.sealMu.Unlock()
	return l.sealOneLocked(force)
}

// sealOneLocked is sealOne for a caller that holds sealMu.
func (l *Log) sealOneLocked(force bool) (int, error) {
	if l.isClosed() {
		// Close has begun: it closes Pebble once it holds sealMu, and an
		// appender's assistSeal may come here after that.
		return 0, ErrClosed
	}
	end := l.committed.Load()
	l.segMu.RLock()
	first := l.sealed
	full := l.tailCount >= int64(l.opts.SegmentRecords) || l.tailBytes >= int64(l.opts.SegmentBytes)
	var payloads [][]byte
	mirrored := false
	raw := 0
	if first < end && (force || full) {
		payloads, raw, mirrored = l.mirroredSegment(first, end)
	}
	l.segMu.RUnlock()
	if first >= end || (!force && !full) {
		return 0, nil
	}
	if mirrored {
		l.mirrorSeals++
	} else {
		var err error
		if payloads, raw, err = l.iteratedSegment(first, end); err != nil {
			return 0, err
		}
	}
	l.sealPayloads = payloads
	defer clear(payloads) // do not keep the payloads around
	n := len(payloads)
	if n == 0 || (!force && n < l.opts.SegmentRecords && raw < l.opts.SegmentBytes) {
		return 0, nil
	}
	if _, err := l.writeSegment(first, payloads, nil); err != nil {
		return 0, err
	}
	return n, nil
}

// mirroredSegment returns the payloads (nil = deleted) of the segment
// starting at first, up to end, from the tail mirror, and ok = false when
// the mirror does not hold first. Callers hold segMu (read) and sealMu.
func (l *Log) mirroredSegment(first, end uint64) (payloads [][]byte, raw int, ok bool) {
	recs := l.tail.get(first)
	if recs == nil {
		return nil, 0, false
	}
	payloads = l.sealPayloads[:0]
	for i, r := range recs {
		if first+uint64(i) >= end {
			break
		}
		if r.dead {
			payloads = append(payloads, nil)
		} else {
			payloads = append(payloads, r.p)
			raw += len(r.p)
		}
		if len(payloads) >= l.opts.SegmentRecords || raw >= l.opts.SegmentBytes {
			break
		}
	}
	return payloads, raw, true
}

// iteratedSegment is mirroredSegment reading Pebble's tail keys: for the
// tail recovered at Open, and when the mirror restarted.
func (l *Log) iteratedSegment(first, end uint64) (payloads [][]byte, raw int, err error) {
	db, err := l.rdb()
	if err != nil {
		return nil, 0, err
	}
	defer l.dbMu.RUnlock()
	it, err := db.NewIter(&pebble.IterOptions{
		LowerBound: makeKey(prefixTail, first),
		UpperBound: makeKey(prefixTail, end),
	})
	if err != nil {
		return nil, 0, err
	}
	// The payloads are copied out of the iterator into one reused buffer
	// (sealRaw); ends[i] is where payload i ends in it, -1 for a deleted one.
	buf := l.sealRaw[:0]
	ends := l.sealEnds[:0]
	expect := first
	for ok := it.First(); ok; ok = it.Next() {
		id, _ := keyID(it.Key())
		if id != expect {
			it.Close()
			return nil, 0, &CorruptionError{Segment: id, Err: fmt.Errorf("%w: tail ids jump from %d to %d while sealing", ErrFormat, expect-1, id)}
		}
		v := it.Value()
		if len(v) == 0 || v[0] > tailDeleted {
			it.Close()
			return nil, 0, &CorruptionError{Segment: id, Err: fmt.Errorf("%w: tail record state byte", ErrFormat)}
		}
		if v[0] == tailDeleted {
			ends = append(ends, -1)
		} else {
			buf = append(buf, v[1:]...)
			ends = append(ends, len(buf))
			raw += len(v) - 1
		}
		expect++
		if len(ends) >= l.opts.SegmentRecords || raw >= l.opts.SegmentBytes {
			break
		}
	}
	l.sealRaw, l.sealEnds = buf, ends
	if err := it.Close(); err != nil {
		return nil, 0, l.counted(pebbleErr(expect, "seal: read tail from", err))
	}
	if buf == nil {
		buf = make([]byte, 0, 1) // an empty payload is not nil (deleted)
	}
	payloads = l.sealPayloads[:0]
	start := 0
	for _, e := range ends {
		if e < 0 {
			payloads = append(payloads, nil)
			continue
		}
		payloads = append(payloads, buf[start:e:e])
		start = e
	}
	return payloads, raw, nil
}

// writeSegment stores payloads (nil = deleted) as the segment starting at
// first, atomically removing the tail records it replaces and the given
// tombstones, and inserts or replaces its summary in l.segs. Callers hold
// l.sealMu.
func (l *Log) writeSegment(first uint64, payloads [][]byte, clearTombstones []uint64) (segMeta, error) {
	n := len(payloads)
	// Scratch buffers reused under sealMu: Pebble's Batch.Set copies the
	// value.
	var body []byte
	ok := false
	if !l.opts.DisableColumns {
		l.sealCols.names = nil
		if l.columnsVersion == segmentVersionNames {
			l.sealCols.names = l.names
		}
		body, ok = l.sealCols.encode(l.sealBody[:0], payloads)
	}
	var val []byte
	var err error
	switch {
	case !ok:
		body = encodeBody(l.sealBody[:0], payloads)
		val, err = l.comp.appendSegment(l.sealVal[:0], segmentVersionRows, n, body)
	case l.columnsVersion == segmentVersionColumns:
		val, err = l.comp.appendSegment(l.sealVal[:0], segmentVersionColumns, n, body)
	default:
		texts := l.sealCols.cols[colTexts]
		if first >= l.sealed {
			// A new seal (not a rewrite: its texts were sampled when
			// sealed).
			l.sampleDict(first, payloads, texts, l.sealCols.cols[colTextLens])
		}
		version := l.columnsVersion
		var words *wordCoder
		framed := body
		if l.wordsOn() && l.words.active {
			version = segmentVersionWords
			if !l.noPacking {
				version = segmentVersionPacked
				l.sealPacked = l.sealCols.appendBody(l.sealPacked[:0], true)
				framed = l.sealPacked
			}
			words = &l.sealWords
			words.ids, words.misses = l.words.ids, words.misses[:0]
		}
		val, err = l.comp.appendFramed(l.sealVal[:0], version, n, framed, len(texts), words)
		if words != nil {
			if err == nil && first >= l.sealed {
				// A new seal: the words it wrote out are counted once, and
				// those met before enter the vocabulary (written in this
				// seal's batch, used from the next seal on).
				l.words.growFrom(words.misses)
			}
			clear(words.misses)
			// Readers know every word assigned before a batch that uses
			// it is in Pebble.
			l.words.publish()
		}
	}
	l.sealBody = body
	if err != nil {
		return segMeta{}, err
	}
	l.sealVal = val
	m := segMeta{first: first, count: uint32(n), stored: uint32(len(val))}
	for _, p := range payloads {
		if p == nil {
			m.dead++
		} else {
			m.raw += uint32(len(p))
		}
	}
	db, err := l.rdb()
	if err != nil {
		return m, err
	}
	defer l.dbMu.RUnlock()
	b := db.NewBatch()
	defer l.closeBatch(b)
	if err := b.Set(makeKey(prefixSegment, first), val, nil); err != nil {
		return m, err
	}
	if err := b.Set(makeKey(prefixSegMeta, first), appendSegMeta(nil, &m), nil); err != nil {
		return m, err
	}
	if err := b.DeleteRange(makeKey(prefixTail, first), makeKey(prefixTail, first+uint64(n)), nil); err != nil {
		return m, err
	}
	for _, id := range clearTombstones {
		if err := b.Delete(makeKey(prefixDeleted, id), nil); err != nil {
			return m, err
		}
	}
	var names []pendingName
	if ok && l.sealCols.names != nil {
		// The names the segment is the first to use, in its batch.
		names = l.sealCols.pending
		for _, nm := range names {
			if err := b.Set(makeKey(prefixName, nm.id), nameValue(nm.s), nil); err != nil {
				return m, err
			}
		}
	}
	if wv := l.words.pendingValue(); wv != nil {
		// The words the segment is the first to use (or that a failed
		// commit left pending), in its batch.
		if err := b.Set(makeKey(prefixWords, uint64(l.words.pendBase)), wv, nil); err != nil {
			return m, err
		}
	}
	dict := l.comp.encDict()
	if dict != nil && !l.dict.stored {
		// Stored with the first segment that uses it (again, until a
		// commit holding it succeeds), with the ids of the records whose
		// text it holds.
		if err := l.setDict(b, dict); err != nil {
			return m, err
		}
	}
	// The commit happens under segMu so that readers never see the tail
	// keys gone before the segment is in l.segs (or the reverse). commitMu
	// is taken first: waiting for it (an append's fsync) must not hold
	// segMu, which every reader and the append's bookkeeping take.
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	l.segMu.Lock()
	defer l.segMu.Unlock()
	sealed := l.sealed
	if e := first + uint64(n); e > sealed {
		sealed = e
	}
	var sb [8]byte
	binary.BigEndian.PutUint64(sb[:], sealed)
	if err := b.Set([]byte(keySealed), sb[:], nil); err != nil {
		return m, err
	}
	// No sync: every record in the segment is already durable in the tail or
	// in the segment this one replaces; the batch is atomic, so a crash
	// leaves either the old or the new form.
	if err := l.commitLocked(b, pebble.NoSync); err != nil {
		return m, wrapWrite(fmt.Sprintf("seal %d", first), err)
	}
	if dict != nil && !l.dict.stored {
		l.dict.stored = true
		l.dict.keys = append(l.dict.keys, dict.num)
	}
	l.names.add(names)
	l.words.committed()
	l.cache.invalidate(first)
	i := searchSegs(l.segs, first)
	if i < len(l.segs) && l.segs[i].first == first {
		l.segs[i] = m
	} else {
		l.segs = append(l.segs, segMeta{})
		copy(l.segs[i+1:], l.segs[i:])
		l.segs[i] = m
	}
	for _, id := range clearTombstones {
		l.deleted.Remove(id)
	}
	if sealed > l.sealed {
		// Tail counters move with the boundary, in the same critical section.
		for _, p := range payloads {
			if p != nil {
				l.tailBytes -= int64(len(p))
			}
		}
		l.tailCount -= int64(sealed - l.sealed)
		l.sealed = sealed
		l.tail.trim(sealed)
	}
	return m, nil
}

// searchSegs returns the index of the first segment whose first id is >= id.
func searchSegs(segs []segMeta, id uint64) int {
	lo, hi := 0, len(segs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if segs[m].first < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// findSeg returns the segment holding id, or nil.
func findSeg(segs []segMeta, id uint64) *segMeta {
	i := searchSegs(segs, id+1) - 1
	if i < 0 || id >= segs[i].end() {
		return nil
	}
	return &segs[i]
}

// sampleDict adds the texts of a segment being sealed (the segment
// starting at first; texts and text_lens are its columns) to the sample
// the log's dictionary is built from, and builds it once the sample is
// full. A build that fails leaves the log without a dictionary (logged).
// Callers hold l.sealMu.
func (l *Log) sampleDict(first uint64, payloads [][]byte, texts, lens []byte) {
	if l.opts.DisableDictionary || l.dict.done || l.comp.algo != CompressionZstd || l.comp.encDict() != nil {
		return
	}
	base := len(l.dict.texts)
	l.dict.texts = append(l.dict.texts, texts...)
	end := base
	for i, p := range payloads {
		if p == nil {
			continue
		}
		n, k := binary.Uvarint(lens)
		if k <= 0 {
			break // the encoder wrote one length per live record
		}
		lens = lens[k:]
		end += int(n)
		l.dict.recs = append(l.dict.recs, sampleRec{id: first + uint64(i), end: end})
	}
	if len(l.dict.texts) < dictSample {
		return
	}
	sample, recs := l.dict.texts, l.dict.recs
	l.dict.texts, l.dict.recs, l.dict.done = nil, nil, true
	if l.wordsOn() {
		// The vocabulary's seed: the sample's words by frequency; from now
		// on new seals are word-coded, and the dictionary is built from the
		// sample's tokens.
		l.words.seed(sample)
		l.words.active = true
	}
	num := l.dict.max + 1
	raw, hist, err := l.buildDict(num, sample, recs)
	if err == nil {
		err = l.comp.addDict(num, raw)
	}
	if err != nil {
		l.logf("lazymem: segment: building the log's zstd dictionary: %v", err)
		return
	}
	l.dict.max, l.dict.stored = num, false
	l.dict.hist[num] = hist
}

// setDict adds dictionary d and the ids of the records whose text it
// holds to batch b.
func (l *Log) setDict(b *pebble.Batch, d *zdict) error {
	if err := b.Set(makeKey(prefixDict, uint64(d.num)), codec.AppendChecksum(slices.Clone(d.raw), d.raw), nil); err != nil {
		return err
	}
	if hist, ok := l.dict.hist[d.num]; ok {
		return b.Set(makeKey(prefixDictIDs, uint64(d.num)), appendDictIDs(nil, hist), nil)
	}
	return nil
}
