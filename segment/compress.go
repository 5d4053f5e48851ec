package segment

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/lazymem/lazymem/codec"
)

// colBodyPool holds the buffers columnar bodies are decompressed into.
var colBodyPool = sync.Pool{New: func() any { return new([]byte) }}

// compressor builds and opens segment values. Encoders are pooled; the zstd
// decoder is safe for concurrent DecodeAll calls.
type compressor struct {
	algo    Compression
	encPool sync.Pool // *zstd.Encoder
	dec     *zstd.Decoder
	level   zstd.EncoderLevel

	dicts   atomic.Pointer[dictSet] // the log's dictionaries (dict.go); nil: none
	dictMu  sync.Mutex              // serialises addDict
	oldDecs []*zstd.Decoder         // decoders of earlier dictSets, closed with c
	names   *nameTable              // the log's names (names.go); version-4 heads refer to them
	words   *wordTable              // the log's vocabulary (words.go); version-5 text frames refer to it
}

// encoderLevel is Options.ZstdLevel (1-4) as the encoder's level.
func encoderLevel(level int) zstd.EncoderLevel {
	return zstd.EncoderLevel(min(max(level, int(zstd.SpeedFastest)), int(zstd.SpeedBestCompression)))
}

func newCompressor(algo Compression, level int) (*compressor, error) {
	c := &compressor{algo: algo, level: encoderLevel(level)}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(256<<20))
	if err != nil {
		return nil, fmt.Errorf("lazymem: segment: zstd decoder: %w", err)
	}
	c.dec = dec
	return c, nil
}

func (c *compressor) close() {
	c.dec.Close()
	if s := c.dicts.Load(); s != nil {
		s.dec.Close()
	}
	for _, d := range c.oldDecs {
		d.Close()
	}
}

// appendSegment appends the stored form of a segment whose uncompressed body
// is body, laid out as version says (segmentVersionRows or
// segmentVersionColumns), and which holds count records:
//
//	version:1 | algo:1 | count:uvarint | bodyLen:uvarint | compressed body | crc32c:4 LE
func (c *compressor) appendSegment(dst []byte, version byte, count int, body []byte) ([]byte, error) {
	start := len(dst)
	dst = append(dst, version, byte(c.algo))
	dst = binary.AppendUvarint(dst, uint64(count))
	dst = binary.AppendUvarint(dst, uint64(len(body)))
	dst, err := c.compress(dst, body, nil)
	if err != nil {
		return nil, err
	}
	return codec.AppendChecksum(dst, dst[start:]), nil
}

// compress appends src compressed with c's algorithm (and, for zstd, the
// dictionary d, nil for none) to dst.
func (c *compressor) compress(dst, src []byte, d *zdict) ([]byte, error) {
	switch c.algo {
	case CompressionNone:
		return append(dst, src...), nil
	case CompressionS2:
		return append(dst, s2.EncodeBetter(nil, src)...), nil
	}
	pool := &c.encPool
	if d != nil {
		pool = &d.encPool
	}
	enc, ok := pool.Get().(*zstd.Encoder)
	if !ok {
		level := c.level
		if d != nil {
			// With the dictionary, the fastest level: each small frame
			// resets the encoder's tables to the dictionary's, which the
			// faster level keeps smaller (BenchmarkSealBody, workload: 32
			// KiB segments 0.48-0.63 ms at level 3, 0.22-0.32 ms at 1;
			// 9,375 and 9,384 stored bytes a segment).
			level = zstd.SpeedFastest
		}
		opts := []zstd.EOption{zstd.WithEncoderLevel(level), zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderCRC(false), zstd.WithLowerEncoderMem(true)}
		if d != nil {
			opts = append(opts, zstd.WithEncoderDict(d.raw))
		}
		var err error
		if enc, err = zstd.NewWriter(nil, opts...); err != nil {
			return nil, fmt.Errorf("lazymem: segment: zstd encoder: %w", err)
		}
	}
	dst = enc.EncodeAll(src, dst)
	pool.Put(enc)
	return dst, nil
}

// decompress appends src, compressed with algo (and dictionary dict, 0
// for none), decompressed to dst.
func (c *compressor) decompress(algo Compression, dict uint32, dst, src []byte) ([]byte, error) {
	switch algo {
	case CompressionNone:
		return append(dst, src...), nil
	case CompressionS2:
		n, err := s2.DecodedLen(src)
		if err != nil {
			return dst, err
		}
		start := len(dst)
		dst = slices.Grow(dst, n)
		out, err := s2.Decode(dst[start:start+n], src)
		if err != nil {
			return dst, err
		}
		return dst[:start+len(out)], nil
	case CompressionZstd:
		dec, err := c.decoder(dict)
		if err != nil {
			return dst, err
		}
		return dec.DecodeAll(src, dst)
	}
	return dst, fmt.Errorf("unknown compression %d", algo)
}

// openSegment verifies and decompresses a stored segment value. first is the
// segment's first id, used in errors. With alias, an uncompressed body is
// not copied: the result then shares v's bytes and is valid only as long
// as v is.
func (c *compressor) openSegment(first uint64, v []byte, alias bool) (*decoded, error) {
	corrupt := func(off int, err error) error {
		return &CorruptionError{Segment: first, Offset: int64(off), Err: err}
	}
	if len(v) < 2+2+4 {
		return nil, corrupt(0, fmt.Errorf("%w: segment value of %d bytes is shorter than its header", ErrFormat, len(v)))
	}
	if isFramed(v[0]) {
		return c.openFramed(first, v)
	}
	end := len(v) - 4
	if _, err := codec.VerifyChecksum(v); err != nil {
		return nil, corrupt(end, fmt.Errorf("%w: %w", ErrChecksum, err))
	}
	version := v[0]
	if version != segmentVersionRows && version != segmentVersionColumns {
		return nil, corrupt(0, fmt.Errorf("%w: unknown segment version %d", ErrFormat, v[0]))
	}
	algo := Compression(v[1])
	off := 2
	count, n := binary.Uvarint(v[off:end])
	if n <= 0 || count == 0 || count > 1<<20 {
		return nil, corrupt(off, fmt.Errorf("%w: record count", ErrFormat))
	}
	off += n
	bodyLen, n := binary.Uvarint(v[off:end])
	if n <= 0 || bodyLen > 1<<30 {
		return nil, corrupt(off, fmt.Errorf("%w: body length", ErrFormat))
	}
	off += n
	src := v[off:end]
	var body []byte
	var err error
	// A columnar body is garbage once its records are rebuilt (into a
	// buffer of their own): it is decompressed into a pooled buffer
	// (profile: a second large allocation per cold read was half the
	// rebuild's cost).
	columns := version == segmentVersionColumns
	var scratch *[]byte
	out := func() []byte {
		if !columns {
			return make([]byte, 0, bodyLen)
		}
		scratch = colBodyPool.Get().(*[]byte)
		return slices.Grow((*scratch)[:0], int(bodyLen))
	}
	defer func() {
		if scratch != nil {
			*scratch = body[:0]
			colBodyPool.Put(scratch)
		}
	}()
	switch algo {
	case CompressionNone:
		if alias || columns {
			body = src
		} else {
			body = append([]byte(nil), src...)
		}
	case CompressionS2:
		body, err = s2.Decode(out(), src)
	case CompressionZstd:
		body, err = c.dec.DecodeAll(src, out())
	default:
		return nil, corrupt(1, fmt.Errorf("%w: unknown compression %d", ErrFormat, algo))
	}
	if err != nil {
		return nil, corrupt(off, fmt.Errorf("%w: decompress: %v", ErrFormat, err))
	}
	if uint64(len(body)) != bodyLen {
		return nil, corrupt(off, fmt.Errorf("%w: body is %d bytes, header says %d", ErrFormat, len(body), bodyLen))
	}
	var d *decoded
	if columns {
		d, err = parseColumns(first, int(count), body, nil)
	} else {
		d, err = parseBody(first, int(count), body)
	}
	if err != nil {
		return nil, corrupt(off, err)
	}
	return d, nil
}
