package segment

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/klauspost/compress/zstd"
	"github.com/lazymem/lazymem/codec"
)

// zdict is a zstd dictionary of the log: stored under 'y' id (see
// format.go), built from the texts of the log's first sealed segments
// (and again by Compact, from live texts, when a record whose text it
// holds is purged: dictrebuild.go), and used by every framed segment
// sealed after it. Small text frames keep their ratio with it
// (frames.go).
type zdict struct {
	num     uint32
	raw     []byte    // the dictionary, as zstd.BuildDict returned it
	encPool sync.Pool // *zstd.Encoder with the dictionary
}

// id is the dictionary's id, 0 for none.
func (d *zdict) id() uint32 {
	if d == nil {
		return 0
	}
	return d.num
}

// dictSet is what the compressor knows of the log's dictionaries: the one
// new segments use and a decoder that knows every one of them.
type dictSet struct {
	cur  *zdict
	byID map[uint32]*zdict
	dec  *zstd.Decoder
}

// Dictionary building: the sealer keeps the texts of the first segments
// it seals until it has dictSample bytes, then builds a dictionary of
// about dictHistory bytes of their text (evenly spaced pieces) with the
// sample's frames as the statistics' contents. Compact builds the next
// one the same way from live text (dictrebuild.go). 112 KiB of history,
// about what the fastest encoder reaches back into from a 4 KiB frame,
// against 64 KiB before (TestDictVariantsDiag, -tags diag, 200k records:
// Zipf's segment values 0.481x -> 0.479x of the text, the workload's
// 0.404x -> 0.399x; BenchmarkColdRead the same within the machine's noise).
const (
	dictSample  = 512 << 10
	dictHistory = 112 << 10
	// dictPiece is the length of one piece of the history: the texts of
	// the records that overlap dictPiece bytes from a record's start.
	dictPiece = 1 << 10
	// dictMinSample is the least live text Compact builds a dictionary
	// from; below it the log goes without one until the sealer has seen
	// dictSample bytes again.
	dictMinSample = 64 << 10
)

// dictState is the log's bookkeeping of its dictionaries, under
// Log.sealMu (the compressor holds the dictionaries themselves).
type dictState struct {
	// done: the current dictionary was built (or found at Open, or its
	// build failed): the sealer samples no more. stored: a commit holding
	// it succeeded (or it was found at Open).
	done, stored bool
	// keys are the ids of the 'y' keys in the store, loaded or damaged,
	// ascending; max is the highest id the log has used.
	keys []uint32
	max  uint32
	// hist[k] lists the ids of the records whose text is in dictionary
	// k's history ('z' k); no entry: unknown (a dictionary written before
	// the list was kept).
	hist map[uint32][]uint64
	// The sealer's sample: the texts of the records it sealed so far and,
	// for each, its id and where its text ends in texts.
	texts []byte
	recs  []sampleRec
}

// sampleRec is one record's text in a dictionary sample: it ends at
// offset end of the sample's texts.
type sampleRec struct {
	id  uint64
	end int
}

// appendSampleRecs appends to recs where each live record of a segment
// starting at first ends in a sample whose texts, before the segment's,
// took base bytes: lens is the segment's text-length column, payloads
// its records (nil for a deleted one, which has no text).
func appendSampleRecs(recs []sampleRec, first uint64, payloads [][]byte, lens []byte, base int) []sampleRec {
	for k, p := range payloads {
		if p == nil {
			continue
		}
		n, w := binary.Uvarint(lens)
		lens = lens[w:]
		base += int(n)
		recs = append(recs, sampleRec{id: first + uint64(k), end: base})
	}
	return recs
}

// encDict returns the dictionary new segments are compressed with, nil
// for none (or when the algorithm is not zstd).
func (c *compressor) encDict() *zdict {
	if c.algo != CompressionZstd {
		return nil
	}
	if s := c.dicts.Load(); s != nil {
		return s.cur
	}
	return nil
}

// decoder returns a zstd decoder that knows dictionary dict (0: none).
func (c *compressor) decoder(dict uint32) (*zstd.Decoder, error) {
	if dict == 0 {
		return c.dec, nil
	}
	if s := c.dicts.Load(); s != nil && s.byID[dict] != nil {
		return s.dec, nil
	}
	return nil, fmt.Errorf("%w: zstd dictionary %d is not in the log", ErrFormat, dict)
}

// addDict makes dictionary raw, numbered num, known to the decoder and,
// when it is the highest numbered, the one new segments use.
func (c *compressor) addDict(num uint32, raw []byte) error {
	c.dictMu.Lock()
	defer c.dictMu.Unlock()
	old := c.dicts.Load()
	next := &dictSet{byID: map[uint32]*zdict{}}
	var raws [][]byte
	if old != nil {
		for id, d := range old.byID {
			next.byID[id] = d
			raws = append(raws, d.raw)
		}
		next.cur = old.cur
	}
	d := &zdict{num: num, raw: raw}
	next.byID[num] = d
	raws = append(raws, raw)
	if next.cur == nil || num > next.cur.num {
		next.cur = d
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(256<<20), zstd.WithDecoderDicts(raws...))
	if err != nil {
		return fmt.Errorf("lazymem: segment: zstd dictionary %d: %w", num, err)
	}
	next.dec = dec
	// A read may still be using the previous decoder: it is closed with
	// the compressor.
	if old != nil {
		c.oldDecs = append(c.oldDecs, old.dec)
	}
	c.dicts.Store(next)
	return nil
}

// setCur makes dictionary num (0: none) the one new segments use; num
// must be known to the compressor (addDict) unless 0.
func (c *compressor) setCur(num uint32) {
	c.dictMu.Lock()
	defer c.dictMu.Unlock()
	old := c.dicts.Load()
	if old == nil {
		return
	}
	next := *old
	next.cur = old.byID[num]
	c.dicts.Store(&next)
}

// buildDict builds dictionary num from sample, texts of records (recs
// says which record's text ends where), cut at frame size (as they are
// compressed) for the statistics, for the fastest level (the one frames
// with a dictionary are compressed at). The history is dictPiece bytes
// from the start of records evenly spaced in the sample; hist lists the
// ids of the records whose text it holds part of, ascending (a record
// longer than the step may give a piece of its middle).
func buildDict(num uint32, sample []byte, recs []sampleRec) (raw []byte, hist []uint64, err error) {
	return buildDictSized(num, sample, recs, dictHistory)
}

// buildDictSized is buildDict with a history of about size bytes.
func buildDictSized(num uint32, sample []byte, recs []sampleRec, size int) (raw []byte, hist []uint64, err error) {
	var contents [][]byte
	for o := 0; o < len(sample); o += frameBytes {
		contents = append(contents, sample[o:min(len(sample), o+frameBytes)])
	}
	step := max(dictPiece, len(sample)/(size/dictPiece))
	var h []byte
	seen := map[uint64]bool{}
	r := 0 // the first record ending after the sampling point
	prevEnd := 0
	for o := 0; o < len(sample) && len(h) < size; o += step {
		for r < len(recs) && recs[r].end <= o {
			r++
		}
		if r == len(recs) {
			break
		}
		start := 0
		if r > 0 {
			start = recs[r-1].end
		}
		if start < prevEnd {
			start = o // a record longer than the step: a piece of its middle
		}
		end := min(len(sample), start+dictPiece)
		prevEnd = end
		h = append(h, sample[start:end]...)
		for k := r; k < len(recs); k++ {
			if recs[k].end > start && !seen[recs[k].id] {
				seen[recs[k].id] = true
				hist = append(hist, recs[k].id)
			}
			if recs[k].end >= end {
				break
			}
		}
		o = max(o, end-step) // the next piece starts past this one
	}
	slices.Sort(hist)
	raw, err = zstd.BuildDict(zstd.BuildDictOptions{ID: num, Contents: contents, History: h, Offsets: [3]int{1, 4, 8}, Level: zstd.SpeedFastest})
	return raw, hist, err
}

// appendDictIDs appends the value of a 'z' key: the count and the
// ascending ids as uvarint deltas, then crc32c.
func appendDictIDs(dst []byte, ids []uint64) []byte {
	start := len(dst)
	dst = binary.AppendUvarint(dst, uint64(len(ids)))
	prev := uint64(0)
	for _, id := range ids {
		dst = binary.AppendUvarint(dst, id-prev)
		prev = id
	}
	return codec.AppendChecksum(dst, dst[start:])
}

// parseDictIDs reads a 'z' value (appendDictIDs).
func parseDictIDs(v []byte) ([]uint64, error) {
	b, err := codec.VerifyChecksum(v)
	if err != nil {
		return nil, err
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, fmt.Errorf("%w: dictionary record ids: count", ErrFormat)
	}
	b = b[k:]
	ids := make([]uint64, 0, n)
	prev := uint64(0)
	for range n {
		d, k := binary.Uvarint(b)
		if k <= 0 || (len(ids) > 0 && d == 0) {
			return nil, fmt.Errorf("%w: dictionary record ids: id %d", ErrFormat, len(ids))
		}
		b = b[k:]
		prev += d
		ids = append(ids, prev)
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%w: dictionary record ids: %d bytes after the last", ErrFormat, len(b))
	}
	return ids, nil
}

// loadDicts loads the log's dictionaries ('y' keys) and the lists of the
// records whose text they hold ('z' keys) at Open.
func (l *Log) loadDicts(it *pebble.Iterator) error {
	for ok := it.SeekGE([]byte{prefixDict}); ok && it.Key()[0] == prefixDict; ok = it.Next() {
		// The sealer builds no dictionary once one is stored, damaged or
		// not; a new one (Compact's) takes a higher id: one under the id
		// of an old one would decode its segments' frames into wrong bytes
		// (their checksums cover the compressed bytes).
		l.dict.done = true
		id, kok := keyID(it.Key())
		if kok && id > 0 && id < 1<<32 {
			l.dict.keys = append(l.dict.keys, uint32(id))
			l.dict.max = max(l.dict.max, uint32(id))
		}
		raw, err := codec.VerifyChecksum(it.Value())
		if kok && err == nil && id > 0 && id < 1<<32 {
			err = l.comp.addDict(uint32(id), slices.Clone(raw))
		}
		if !kok || err != nil || id == 0 || id >= 1<<32 {
			// The segments compressed with it fail to read, each with a
			// *CorruptionError; every other segment reads.
			l.logf("lazymem: segment: zstd dictionary %x: %v", it.Key(), err)
			continue
		}
		l.dict.stored = true
	}
	for ok := it.SeekGE([]byte{prefixDictIDs}); ok && it.Key()[0] == prefixDictIDs; ok = it.Next() {
		id, kok := keyID(it.Key())
		ids, err := parseDictIDs(it.Value())
		if !kok || err != nil || id == 0 || id >= 1<<32 {
			// Unknown: Compact rebuilds that dictionary at the first
			// purge, as one written before the lists were kept.
			l.logf("lazymem: segment: zstd dictionary record ids %x: %v", it.Key(), err)
			continue
		}
		l.dict.hist[uint32(id)] = ids
	}
	return nil
}
