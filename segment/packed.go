package segment

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
)

// segmentVersionPacked is the first byte of a version-6 segment value:
// version 5's layout (names in the log's table, text frames coded as
// words), but the head's times and text_lens columns start with a mode
// byte and may be bit-packed (below). Stored on disk: never change.
const segmentVersionPacked = 6

// Version-6 times and text_lens columns. The column's first byte is its
// mode; the sealer writes whichever mode is shorter for the segment.
// Stored on disk: never change.
//
//	times, mode 0:     zigzag varint deltas, as versions 2-5
//	times, mode 1:     varint t0 | uvarint g | varint lo | w:1 | bits
//	                   the live records' times t0, t1, ...: delta i (i >= 1)
//	                   is t_i - t_{i-1} = g * (lo + u_i), u_i in w bits
//	text_lens, mode 0: uvarint lengths, as versions 2-5
//	text_lens, mode 1: uvarint lo | w:1 | bits; length i is lo + u_i
//
// bits: the u_i, w bits each (w <= 64), least significant bit first,
// packed from the least significant bit of each byte; the last byte's
// unused bits are zero. A column has no mode byte and no values when the
// segment has no live record.
//
// Why: Zipf times are nanoseconds of uniform jitter; their varint deltas
// take 5.9 bytes a record, which zstd does not shrink, against about 4.5
// packed (log-size.md section 9). A gcd makes times of a coarser clock
// (whole milliseconds or seconds) as small as their own resolution.
const (
	packVarint = 0
	packBits   = 1
)

// appendTimesColumn appends the version-6 times column of ts, the live
// records' times in id order.
func appendTimesColumn(dst []byte, ts []int64) []byte {
	if len(ts) == 0 {
		return dst
	}
	var varintLen int
	prev := int64(0)
	for _, t := range ts {
		varintLen += varintSize(t - prev)
		prev = t
	}
	var g uint64
	for i := 1; i < len(ts); i++ {
		g = gcd(g, absU(ts[i]-ts[i-1]))
	}
	if g == 0 || g > math.MaxInt64 {
		g = 1
	}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for i := 1; i < len(ts); i++ {
		q := (ts[i] - ts[i-1]) / int64(g)
		lo, hi = min(lo, q), max(hi, q)
	}
	if len(ts) == 1 {
		lo, hi = 0, 0
	}
	w := uint(bits.Len64(uint64(hi - lo)))
	packedLen := varintSize(ts[0]) + uvarintLen(g) + varintSize(lo) + 1 + ((len(ts)-1)*int(w)+7)/8
	if varintLen <= packedLen {
		dst = append(dst, packVarint)
		prev = 0
		for _, t := range ts {
			dst = binary.AppendVarint(dst, t-prev)
			prev = t
		}
		return dst
	}
	dst = append(dst, packBits)
	dst = binary.AppendVarint(dst, ts[0])
	dst = binary.AppendUvarint(dst, g)
	dst = binary.AppendVarint(dst, lo)
	dst = append(dst, byte(w))
	var bw bitWriter
	for i := 1; i < len(ts); i++ {
		dst = bw.append(dst, uint64((ts[i]-ts[i-1])/int64(g)-lo), w)
	}
	return bw.flush(dst)
}

// decodeTimesColumn decodes a version-6 times column of n live records
// into dst[:0].
func decodeTimesColumn(b []byte, n int, dst []int64) ([]int64, error) {
	dst = dst[:0]
	if n == 0 {
		if len(b) != 0 {
			return dst, fmt.Errorf("%w: packed head: %d bytes of times for no record", ErrFormat, len(b))
		}
		return dst, nil
	}
	c := colReader{b: b}
	switch mode := c.bytes(1, "times mode"); {
	case c.err != nil:
		return dst, c.err
	case mode[0] == packVarint:
		t := int64(0)
		for range n {
			t += c.varint("time")
			dst = append(dst, t)
		}
		if c.err == nil && c.off != len(b) {
			c.fail("bytes after the times")
		}
		return dst, c.err
	case mode[0] != packBits:
		return dst, fmt.Errorf("%w: packed head: times mode %d", ErrFormat, mode[0])
	}
	t := c.varint("first time")
	g := c.uvarint("time divisor")
	lo := c.varint("least time step")
	wb := c.bytes(1, "time width")
	if c.err != nil {
		return dst, c.err
	}
	if g == 0 || g > math.MaxInt64 {
		return dst, fmt.Errorf("%w: packed head: time divisor %d", ErrFormat, g)
	}
	br, err := newBitReader(b[c.off:], n-1, uint(wb[0]))
	if err != nil {
		return dst, fmt.Errorf("%w: packed head: times: %w", ErrFormat, err)
	}
	dst = append(dst, t)
	for range n - 1 {
		t += (lo + int64(br.read())) * int64(g)
		dst = append(dst, t)
	}
	return dst, nil
}

// appendLensColumn appends the version-6 text_lens column of ls, the live
// records' text lengths in id order.
func appendLensColumn(dst []byte, ls []uint64) []byte {
	if len(ls) == 0 {
		return dst
	}
	var varintLen int
	lo, hi := uint64(math.MaxUint64), uint64(0)
	for _, l := range ls {
		varintLen += uvarintLen(l)
		lo, hi = min(lo, l), max(hi, l)
	}
	w := uint(bits.Len64(hi - lo))
	packedLen := uvarintLen(lo) + 1 + (len(ls)*int(w)+7)/8
	if varintLen <= packedLen {
		dst = append(dst, packVarint)
		for _, l := range ls {
			dst = binary.AppendUvarint(dst, l)
		}
		return dst
	}
	dst = append(dst, packBits)
	dst = binary.AppendUvarint(dst, lo)
	dst = append(dst, byte(w))
	var bw bitWriter
	for _, l := range ls {
		dst = bw.append(dst, l-lo, w)
	}
	return bw.flush(dst)
}

// decodeLensColumn decodes a version-6 text_lens column of n live records
// into dst[:0].
func decodeLensColumn(b []byte, n int, dst []uint64) ([]uint64, error) {
	dst = dst[:0]
	if n == 0 {
		if len(b) != 0 {
			return dst, fmt.Errorf("%w: packed head: %d bytes of text lengths for no record", ErrFormat, len(b))
		}
		return dst, nil
	}
	c := colReader{b: b}
	switch mode := c.bytes(1, "text lengths mode"); {
	case c.err != nil:
		return dst, c.err
	case mode[0] == packVarint:
		for range n {
			dst = append(dst, c.uvarint("text length"))
		}
		if c.err == nil && c.off != len(b) {
			c.fail("bytes after the text lengths")
		}
		return dst, c.err
	case mode[0] != packBits:
		return dst, fmt.Errorf("%w: packed head: text lengths mode %d", ErrFormat, mode[0])
	}
	lo := c.uvarint("least text length")
	wb := c.bytes(1, "text length width")
	if c.err != nil {
		return dst, c.err
	}
	br, err := newBitReader(b[c.off:], n, uint(wb[0]))
	if err != nil {
		return dst, fmt.Errorf("%w: packed head: text lengths: %w", ErrFormat, err)
	}
	for range n {
		dst = append(dst, lo+br.read())
	}
	return dst, nil
}

// bitWriter packs values least significant bit first.
type bitWriter struct {
	acc  uint64 // pending bits, fewer than 8 between calls
	nacc uint
}

// append appends the low w bits of v, and every byte they complete.
func (bw *bitWriter) append(dst []byte, v uint64, w uint) []byte {
	for w > 0 {
		k := min(w, 8)
		bw.acc |= (v & (1<<k - 1)) << bw.nacc
		bw.nacc += k
		v >>= k
		w -= k
		for bw.nacc >= 8 {
			dst = append(dst, byte(bw.acc))
			bw.acc >>= 8
			bw.nacc -= 8
		}
	}
	return dst
}

// flush appends the last, partial byte.
func (bw *bitWriter) flush(dst []byte) []byte {
	if bw.nacc > 0 {
		dst = append(dst, byte(bw.acc))
	}
	*bw = bitWriter{}
	return dst
}

// bitReader reads n values of w bits from b, whose length newBitReader
// checked: read never runs past it.
type bitReader struct {
	b   []byte
	pos uint // in bits
	w   uint
}

func newBitReader(b []byte, n int, w uint) (bitReader, error) {
	if w > 64 {
		return bitReader{}, fmt.Errorf("width %d", w)
	}
	total := uint64(n) * uint64(w)
	if uint64(len(b)) != (total+7)/8 {
		return bitReader{}, fmt.Errorf("%d bytes for %d values of %d bits", len(b), n, w)
	}
	if total%8 != 0 && b[len(b)-1]>>(total%8) != 0 {
		return bitReader{}, fmt.Errorf("padding bits set")
	}
	return bitReader{b: b, w: w}, nil
}

func (r *bitReader) read() uint64 {
	if i := r.pos / 8; r.w <= 56 && i+8 <= uint(len(r.b)) {
		// One load: a value of w <= 56 bits starting at any bit of a
		// byte lies in the 8 bytes from that byte.
		v := binary.LittleEndian.Uint64(r.b[i:]) >> (r.pos % 8) & (1<<r.w - 1)
		r.pos += r.w
		return v
	}
	var v uint64
	for got := uint(0); got < r.w; {
		off := r.pos % 8
		k := min(r.w-got, 8-off)
		v |= uint64(r.b[r.pos/8]>>off) & (1<<k - 1) << got
		got += k
		r.pos += k
	}
	return v
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func absU(d int64) uint64 {
	if d < 0 {
		return uint64(-d) // -MinInt64 wraps to itself: 1<<63 as uint64
	}
	return uint64(d)
}

func varintSize(v int64) int {
	return uvarintLen(uint64(v<<1) ^ uint64(v>>63))
}
