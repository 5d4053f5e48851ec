package segment

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// zdict is a zstd dictionary of the log: stored under 'y' id (see
// format.go), built once from the texts of the log's first sealed
// segments, and used by every framed segment sealed after it. Small text
// frames keep their ratio with it (frames.go).
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
// sample's frames as the statistics' contents.
const (
	dictSample  = 512 << 10
	dictHistory = 64 << 10
)

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

// buildDict builds dictionary num from sample, the texts of the first
// sealed segments, cut at frame size (as they are compressed), for the
// fastest level (the one frames with a dictionary are compressed at).
func buildDict(num uint32, sample []byte) ([]byte, error) {
	var contents [][]byte
	for o := 0; o < len(sample); o += frameBytes {
		contents = append(contents, sample[o:min(len(sample), o+frameBytes)])
	}
	// The history: pieces spread evenly over the sample.
	const piece = 1 << 10
	step := max(piece, len(sample)/(dictHistory/piece))
	var hist []byte
	for o := 0; o+piece <= len(sample) && len(hist) < dictHistory; o += step {
		hist = append(hist, sample[o:o+piece]...)
	}
	return zstd.BuildDict(zstd.BuildDictOptions{ID: num, Contents: contents, History: hist, Offsets: [3]int{1, 4, 8}, Level: zstd.SpeedFastest})
}
