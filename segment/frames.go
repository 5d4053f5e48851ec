package segment

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"sort"
	"sync"
)

// Framed segment values (segment version 3). The body is the columnar body
// of version 2, cut in two: the head (the column lengths and every column
// but the texts) is one compressed frame, and the texts are cut into
// frames of sealFrameBytes (the last shorter), each compressed on its own and
// followed by its own checksum. A read of one record decompresses the
// head (a few hundred bytes to a few KiB: times, references, lengths) and
// the one or two text frames its text lies in, not the whole segment; a
// damaged text frame loses the records whose text lies in it, not the
// segment's others.
//
//	+---------+------+-------+---------+------+----------+-------------+--------------------+
//	| version | algo | count | dict    | n    | head_raw | head_stored | raw, stored (each  |
//	| 1 byte  | 1    | uvar  | uvarint | uvar | uvarint  | uvarint     | uvarint) * n       |
//	+---------+------+-------+---------+------+----------+-------------+--------------------+
//	| head frame (head_stored bytes) | crc32c of every byte before, 4 LE |
//	+--------------------------------+-----------------------------------+
//	| text frame 0 (stored bytes) | crc32c of the frame, 4 LE | text frame 1 | crc | ...
//
// dict is the zstd dictionary the frames were compressed with (0: none;
// see dict.go). Frame k holds the raw_k bytes of the texts column after
// frame k-1's (sealFrameBytes each but the last; a reader takes any
// raw_k up to frameBytes); record i's text starts where the previous live
// record's ends (text_lens, in the head). The head decompresses to a
// version-2 body whose texts column is empty; the head and every text
// frame, decompressed and concatenated, are exactly the version-2 body.

// segmentVersionFrames is the first byte of a framed segment value.
// Stored on disk: never change.
const segmentVersionFrames = 3

// frameBytes is the raw size of a text frame, and the most a reader
// accepts (a larger one is a format error): never raise it without a new
// version. Measured on 100k records
// (bench TestTextFramesDiag, zstd-3): without a dictionary the workload's
// records grow from 0.489x of their text (one frame) to 0.604x at 4 KiB
// frames and 0.556x at 8 KiB; with a 64 KiB dictionary built from other
// records of the corpus 4 KiB frames take 0.429x.
const frameBytes = 4 << 10

// sealFrameBytes is the raw size of the text frames the sealer writes
// (the last of a segment shorter): 4 KiB (frameBytes) until 2026-12-02.
// A cold read decompresses the frame its record's text lies in, and a
// frame's decompression takes about its length: measured on the 1M-record
// logs of the engine's benchmarks (segment TestFrameSizeDiag, the log's
// dictionary, the fastest of five alternated rounds, one frame of each of
// 3277 Zipf segments) 1 KiB frames 4.8 µs, 2 KiB 7.6, 3 KiB 11.2, 4 KiB
// 17.0; stored, over the texts: Zipf 0.4280x, 0.4098x, 0.4033x,
// 0.3998x, the workload 0.3519x, 0.3312x, 0.3224x, 0.3184x. 3 KiB
// takes a third off a cold record's frame for +0.7% (Zipf) and +1.0%
// (workload) of the log's sealed values (0.478x and 0.388x of the text);
// 2 KiB half of it for +2.1% and +3.3%. Readers before this take 3 KiB
// frames: no version changes.
const sealFrameBytes = 3 << 10

// maxFrames bounds a value's frame table: a segment holds at most
// maxRebuilt bytes.
const maxFrames = maxRebuilt / frameBytes

// frameSpan is where a frame lies in the value and what it holds.
type frameSpan struct {
	off, stored int // the compressed bytes: v[off : off+stored]
	raw         int // decompressed size
}

// framedValue is a parsed version-3 value whose header and head frame's
// checksum held.
type framedValue struct {
	first  uint64
	v      []byte
	names  bool // versions 4 to 6: the head's names are ids in the log's table
	words  bool // versions 5 and 6: the text frames are word tokens (words.go)
	packed bool // version 6: the head's times and text lengths are packed.go's
	algo   Compression
	count  int
	dict   uint32
	head   frameSpan
	frames []frameSpan
	starts []uint64 // starts[k]: offset of frame k's first byte in the texts
}

func frameCRC(b []byte) uint32 { return crc32.Checksum(b, crcTable) }

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// appendFramed appends the framed value (version 3, or 4 for a head
// whose names are ids in the log's table, or 5 for version 4 with its text
// frames coded as words of words' vocabulary, which notes the words it
// wrote out) of a columnar body (body,
// whose last textsLen bytes are its texts column) holding count records.
func (c *compressor) appendFramed(dst []byte, version byte, count int, body []byte, textsLen int, words *wordCoder) ([]byte, error) {
	return c.appendFramedSized(dst, version, count, body, textsLen, sealFrameBytes, words)
}

// appendFramedSized is appendFramed with text frames of fb raw bytes (at
// most frameBytes): the frames of earlier sealers in tests.
func (c *compressor) appendFramedSized(dst []byte, version byte, count int, body []byte, textsLen, fb int, words *wordCoder) ([]byte, error) {
	head, texts := body[:len(body)-textsLen], body[len(body)-textsLen:]
	n := (len(texts) + fb - 1) / fb
	dict := c.encDict()
	// The frames are compressed first, into the scratch after dst, then
	// the header and the head are laid out in front of them.
	start := len(dst)
	scratch := dst
	var stored []int
	var codes []byte
	for k := range n {
		fs := len(scratch)
		var err error
		src := texts[k*fb : min(len(texts), (k+1)*fb)]
		if hasWords(version) {
			codes = encodeWordsMiss(codes[:0], words.ids, src, &words.misses)
			src = codes
		}
		if scratch, err = c.compress(scratch, src, dict); err != nil {
			return nil, err
		}
		stored = append(stored, len(scratch)-fs)
	}
	frames := slices.Clone(scratch[start:])
	hs := len(scratch)
	scratch, err := c.compress(scratch, head, dict)
	if err != nil {
		return nil, err
	}
	headZ := slices.Clone(scratch[hs:])
	dst = scratch[:start]
	dst = append(dst, version, byte(c.algo))
	dst = binary.AppendUvarint(dst, uint64(count))
	dst = binary.AppendUvarint(dst, uint64(dict.id()))
	dst = binary.AppendUvarint(dst, uint64(n))
	dst = binary.AppendUvarint(dst, uint64(len(head)))
	dst = binary.AppendUvarint(dst, uint64(len(headZ)))
	for k := range n {
		dst = binary.AppendUvarint(dst, uint64(min(fb, len(texts)-k*fb)))
		dst = binary.AppendUvarint(dst, uint64(stored[k]))
	}
	dst = append(dst, headZ...)
	dst = binary.LittleEndian.AppendUint32(dst, frameCRC(dst[start:]))
	off := 0
	for k := range n {
		f := frames[off : off+stored[k]]
		dst = append(dst, f...)
		dst = binary.LittleEndian.AppendUint32(dst, frameCRC(f))
		off += stored[k]
	}
	return dst, nil
}

// parseFramed reads a version-3 value's header and frame table and checks
// the head's checksum (which covers the header and the table).
func parseFramed(first uint64, v []byte) (*framedValue, error) {
	corrupt := func(off int, err error) error {
		return &CorruptionError{Segment: first, Offset: int64(off), Err: err}
	}
	f := &framedValue{first: first, v: v}
	if len(v) < 2 {
		return nil, corrupt(0, fmt.Errorf("%w: segment value of %d bytes", ErrFormat, len(v)))
	}
	f.algo = Compression(v[1])
	f.names, f.words, f.packed = hasNames(v[0]), hasWords(v[0]), v[0] == segmentVersionPacked
	off := 2
	uv := func(what string, max uint64) (int, error) {
		x, n := binary.Uvarint(v[off:])
		if n <= 0 || x > max {
			return 0, corrupt(off, fmt.Errorf("%w: framed segment: %s", ErrFormat, what))
		}
		off += n
		return int(x), nil
	}
	var err error
	var dict, n int
	if f.count, err = uv("record count", 1<<20); err != nil {
		return nil, err
	}
	if f.count == 0 {
		return nil, corrupt(2, fmt.Errorf("%w: framed segment: no records", ErrFormat))
	}
	if dict, err = uv("dictionary", 1<<32-1); err != nil {
		return nil, err
	}
	f.dict = uint32(dict)
	if n, err = uv("frame count", maxFrames); err != nil {
		return nil, err
	}
	if f.head.raw, err = uv("head length", maxRebuilt); err != nil {
		return nil, err
	}
	if f.head.stored, err = uv("stored head length", uint64(len(v))); err != nil {
		return nil, err
	}
	f.frames = make([]frameSpan, n)
	f.starts = make([]uint64, n+1)
	for k := range f.frames {
		if f.frames[k].raw, err = uv("frame length", frameBytes); err != nil {
			return nil, err
		}
		if f.frames[k].stored, err = uv("stored frame length", uint64(len(v))); err != nil {
			return nil, err
		}
		f.starts[k+1] = f.starts[k] + uint64(f.frames[k].raw)
	}
	f.head.off = off
	end := off + f.head.stored
	if end > len(v)-4 {
		return nil, corrupt(off, fmt.Errorf("%w: framed segment: head of %d bytes runs past the value", ErrFormat, f.head.stored))
	}
	if sum, want := binary.LittleEndian.Uint32(v[end:]), frameCRC(v[:end]); sum != want {
		return nil, corrupt(end, fmt.Errorf("%w: segment head (stored %08x, computed %08x)", ErrChecksum, sum, want))
	}
	pos := end + 4
	for k := range f.frames {
		f.frames[k].off = pos
		pos += f.frames[k].stored + 4
		if pos > len(v) {
			return nil, corrupt(f.frames[k].off, fmt.Errorf("%w: framed segment: frame %d runs past the value", ErrFormat, k))
		}
	}
	if pos != len(v) {
		return nil, corrupt(pos, fmt.Errorf("%w: framed segment: %d bytes after the last frame", ErrFormat, len(v)-pos))
	}
	return f, nil
}

// headNames returns the name table f's head refers to: nil for a
// version-3 value, the log's for version 4.
func (c *compressor) headNames(f *framedValue) (*nameTable, error) {
	if !f.names {
		return nil, nil
	}
	if c.names == nil {
		return nil, &CorruptionError{Segment: f.first, Err: fmt.Errorf("%w: framed segment refers to a name table, none is open", ErrFormat)}
	}
	return c.names, nil
}

// frame checks and decompresses text frame k, appending it to dst.
func (c *compressor) frame(f *framedValue, k int, dst []byte) ([]byte, error) {
	s := f.frames[k]
	b := f.v[s.off : s.off+s.stored]
	if sum, want := binary.LittleEndian.Uint32(f.v[s.off+s.stored:]), frameCRC(b); sum != want {
		return dst, &CorruptionError{Segment: f.first, Offset: int64(s.off + s.stored),
			Err: fmt.Errorf("%w: text frame %d (stored %08x, computed %08x)", ErrChecksum, k, sum, want)}
	}
	if !f.words {
		return c.expand(f, s, dst, k)
	}
	codes := framePool.Get().(*[]byte)
	defer framePool.Put(codes)
	var err error
	if *codes, err = c.decompress(f.algo, f.dict, (*codes)[:0], b); err == nil {
		start := len(dst)
		if dst, err = decodeWords(slices.Grow(dst, s.raw), c.words.snap.Load(), *codes, s.raw); err == nil && len(dst)-start != s.raw {
			err = fmt.Errorf("%w: %s is %d bytes, header says %d", ErrFormat, frameName(k), len(dst)-start, s.raw)
		}
	}
	if err != nil {
		return dst, &CorruptionError{Segment: f.first, Offset: int64(s.off), Err: fmt.Errorf("%w: %s: %w", ErrFormat, frameName(k), err)}
	}
	return dst, nil
}

// frameCodes checks version-5 text frame k and appends its tokens,
// decompressed, to dst.
func (c *compressor) frameCodes(f *framedValue, k int, dst []byte) ([]byte, error) {
	s := f.frames[k]
	b := f.v[s.off : s.off+s.stored]
	if sum, want := binary.LittleEndian.Uint32(f.v[s.off+s.stored:]), frameCRC(b); sum != want {
		return dst, &CorruptionError{Segment: f.first, Offset: int64(s.off + s.stored),
			Err: fmt.Errorf("%w: text frame %d (stored %08x, computed %08x)", ErrChecksum, k, sum, want)}
	}
	out, err := c.decompress(f.algo, f.dict, dst, b)
	if err != nil {
		return dst, &CorruptionError{Segment: f.first, Offset: int64(s.off), Err: fmt.Errorf("%w: %s: %w", ErrFormat, frameName(k), err)}
	}
	return out, nil
}

// expand decompresses the frame at s (text frame k, or the head when k
// is negative), appending it to dst.
func (c *compressor) expand(f *framedValue, s frameSpan, dst []byte, k int) ([]byte, error) {
	start := len(dst)
	out, err := c.decompress(f.algo, f.dict, slices.Grow(dst, s.raw), f.v[s.off:s.off+s.stored])
	if err == nil && len(out)-start != s.raw {
		err = fmt.Errorf("%w: %s is %d bytes, header says %d", ErrFormat, frameName(k), len(out)-start, s.raw)
	}
	if err != nil {
		return dst, &CorruptionError{Segment: f.first, Offset: int64(s.off), Err: fmt.Errorf("%w: %s: %w", ErrFormat, frameName(k), err)}
	}
	return out, nil
}

// frameName names text frame k, or the head when k is negative, in errors
// (named only on failure: formatting it for every frame read cost an
// allocation a frame).
func frameName(k int) string {
	if k < 0 {
		return "head"
	}
	return fmt.Sprintf("text frame %d", k)
}

// openFramed decompresses a whole version-3 value and rebuilds its
// records.
func (c *compressor) openFramed(first uint64, v []byte) (*decoded, error) {
	f, err := parseFramed(first, v)
	if err != nil {
		return nil, err
	}
	scratch := colBodyPool.Get().(*[]byte)
	body := slices.Grow((*scratch)[:0], f.head.raw+int(f.starts[len(f.frames)]))
	defer func() {
		*scratch = body[:0]
		colBodyPool.Put(scratch)
	}()
	if body, err = c.expand(f, f.head, body, -1); err != nil {
		return nil, err
	}
	for k := range f.frames {
		if body, err = c.frame(f, k, body); err != nil {
			return nil, err
		}
	}
	names, err := c.headNames(f)
	if err != nil {
		return nil, err
	}
	d, err := parseColumnsPacked(first, f.count, body, names, f.packed)
	if err != nil {
		return nil, &CorruptionError{Segment: first, Offset: int64(f.head.off), Err: err}
	}
	return d, nil
}

// readFramed serves the records ids (ascending, unique, inside the
// segment) of a version-3 value holding count records, decompressing the head and only the text
// frames their texts lie in: fn gets each id's payload (valid during the
// call), or dead for a deleted record, or a *CorruptionError when a frame
// its text lies in is damaged. A damaged head fails the whole call.
func (c *compressor) readFramed(first uint64, v []byte, count uint32, ids []uint64, fn func(id uint64, p []byte, dead bool, err error) error) error {
	f, err := parseFramed(first, v)
	if err != nil {
		return err
	}
	if f.count != int(count) {
		return &CorruptionError{Segment: first, Err: fmt.Errorf("%w: segment holds %d records, summary says %d", ErrFormat, f.count, count)}
	}
	scratch := colBodyPool.Get().(*[]byte)
	head := (*scratch)[:0]
	defer func() {
		*scratch = head[:0]
		colBodyPool.Put(scratch)
	}()
	if head, err = c.expand(f, f.head, head, -1); err != nil {
		return err
	}
	bad := func(err error) error {
		return &CorruptionError{Segment: first, Offset: int64(f.head.off), Err: err}
	}
	names, err := c.headNames(f)
	if err != nil {
		return err
	}
	cur, err := openCursorPacked(head, f.count, f.packed)
	if err != nil {
		return bad(err)
	}
	defer cur.release()
	cur.names = names
	if len(cur.cols[colTexts].b) != 0 {
		return bad(fmt.Errorf("%w: framed segment: head holds %d bytes of texts", ErrFormat, len(cur.cols[colTexts].b)))
	}
	var fr frameReader
	defer fr.release()
	var out []byte
	var r colRecord
	j := 0
	for i := 0; j < len(ids) && i < f.count; i++ {
		id := first + uint64(i)
		if cur.dead(i) {
			if ids[j] == id {
				if err := fn(id, nil, true, nil); err != nil {
					return err
				}
				j++
			}
			continue
		}
		if ids[j] != id {
			if err := cur.skip(); err != nil {
				return bad(err)
			}
			continue
		}
		if err := cur.next(&r); err != nil {
			return bad(err)
		}
		j++
		text, terr := fr.text(c, f, r.textOff, r.textEnd)
		if terr != nil {
			if err := fn(id, nil, false, terr); err != nil {
				return err
			}
			continue
		}
		if out, err = cur.appendRecord(out[:0], &r, text); err != nil {
			return bad(err)
		}
		if err := fn(id, out, false, nil); err != nil {
			return err
		}
	}
	return nil
}

// frameReader holds the text frames a readFramed call decompressed, in
// buffers of framePool (the records handed out are rebuilt copies: the
// frames are not kept past the call). A version-5 frame is decoded only
// as far as the records read need (w: where its decoding stopped), and
// from the token holding the first byte the call asked of it (w.base:
// the frame's bytes before the buffer's first; the tokens before it are
// walked for their lengths, skipWordsTo). A call asks for its records in
// order, so for ascending bytes of a frame.
type frameReader struct {
	k    []int
	b    []*[]byte
	w    []wordResume
	join []byte
}

// wordResume is where the decoding of a version-5 frame stopped: its
// tokens (a framePool buffer; nil once decoded whole), those left, and
// whether the last one decoded was a word.
type wordResume struct {
	codes *[]byte
	rest  []byte
	space bool
	base  int
}

var framePool = sync.Pool{New: func() any { b := make([]byte, 0, frameBytes); return &b }}

// release returns the frames' buffers to framePool.
func (fr *frameReader) release() {
	for _, b := range fr.b {
		framePool.Put(b)
	}
	for _, w := range fr.w {
		if w.codes != nil {
			framePool.Put(w.codes)
		}
	}
	fr.k, fr.b, fr.w = fr.k[:0], fr.b[:0], fr.w[:0]
}

// get returns text frame k from byte base on (base <= from; 0 but for a
// version-5 frame), decoded at least from byte from up to byte need (a
// version-5 frame; others are decoded whole).
func (fr *frameReader) get(c *compressor, f *framedValue, k, from, need int) ([]byte, int, error) {
	for i, kk := range fr.k {
		if kk != k {
			continue
		}
		if w := &fr.w[i]; w.base > from {
			// Bytes before the buffer's: not asked by readFramed, whose
			// records come in order; decoded again from the frame's start.
			fr.drop(i)
			break
		}
		if fr.w[i].codes != nil && fr.w[i].base+len(*fr.b[i]) < need {
			b, err := fr.more(c, f, i, need)
			return b, fr.w[i].base, err
		}
		return *fr.b[i], fr.w[i].base, nil
	}
	buf := framePool.Get().(*[]byte)
	if !f.words {
		b, err := c.frame(f, k, (*buf)[:0])
		if err != nil {
			framePool.Put(buf)
			return nil, 0, err
		}
		*buf = b
		fr.k, fr.b, fr.w = append(fr.k, k), append(fr.b, buf), append(fr.w, wordResume{})
		return b, 0, nil
	}
	codes := framePool.Get().(*[]byte)
	cb, err := c.frameCodes(f, k, (*codes)[:0])
	if err != nil {
		framePool.Put(buf)
		framePool.Put(codes)
		return nil, 0, err
	}
	*codes, *buf = cb, (*buf)[:0]
	w := wordResume{codes: codes, rest: cb}
	if from > 0 {
		if w.base, w.rest, w.space, err = skipWordsTo(c.words.snap.Load(), cb, 0, from, f.frames[k].raw, false); err != nil {
			framePool.Put(buf)
			framePool.Put(codes)
			return nil, 0, fr.bad(f, k, err)
		}
	}
	fr.k, fr.b, fr.w = append(fr.k, k), append(fr.b, buf), append(fr.w, w)
	i := len(fr.k) - 1
	b, err := fr.more(c, f, i, need)
	return b, fr.w[i].base, err
}

// drop returns frame i's buffers to framePool and forgets it.
func (fr *frameReader) drop(i int) {
	framePool.Put(fr.b[i])
	if fr.w[i].codes != nil {
		framePool.Put(fr.w[i].codes)
	}
	fr.k = slices.Delete(fr.k, i, i+1)
	fr.b = slices.Delete(fr.b, i, i+1)
	fr.w = slices.Delete(fr.w, i, i+1)
}

// bad is the error of a version-5 text frame k whose tokens do not
// decode.
func (fr *frameReader) bad(f *framedValue, k int, err error) error {
	return &CorruptionError{Segment: f.first, Offset: int64(f.frames[k].off), Err: fmt.Errorf("%w: %s: %w", ErrFormat, frameName(k), err)}
}

// more decodes version-5 frame i of fr further, up to byte need of the
// frame.
func (fr *frameReader) more(c *compressor, f *framedValue, i, need int) ([]byte, error) {
	w := &fr.w[i]
	k := fr.k[i]
	raw := f.frames[k].raw - w.base
	out, rest, space, err := decodeWordsTo(*fr.b[i], c.words.snap.Load(), w.rest, raw, need-w.base, w.space)
	if err == nil && len(rest) == 0 && len(out) != raw {
		err = fmt.Errorf("%w: %s is %d bytes, header says %d", ErrFormat, frameName(k), w.base+len(out), f.frames[k].raw)
	}
	if err != nil {
		return nil, fr.bad(f, k, err)
	}
	*fr.b[i] = out
	w.rest, w.space = rest, space
	if len(rest) == 0 {
		framePool.Put(w.codes)
		w.codes = nil
	}
	return out, nil
}

// text returns bytes [a, b) of the texts column.
func (fr *frameReader) text(c *compressor, f *framedValue, a, b uint64) ([]byte, error) {
	total := f.starts[len(f.frames)]
	if b > total {
		return nil, &CorruptionError{Segment: f.first, Offset: int64(f.head.off),
			Err: fmt.Errorf("%w: framed segment: text at %d-%d past the texts' %d bytes", ErrFormat, a, b, total)}
	}
	if a == b {
		return nil, nil
	}
	k := sort.Search(len(f.frames), func(k int) bool { return f.starts[k+1] > a })
	fb, base, err := fr.get(c, f, k, int(a-f.starts[k]), int(min(b, f.starts[k+1])-f.starts[k]))
	if err != nil {
		return nil, err
	}
	lo := a - f.starts[k] - uint64(base)
	if b <= f.starts[k+1] {
		return fb[lo : b-f.starts[k]-uint64(base)], nil
	}
	// The text spans frames.
	fr.join = append(fr.join[:0], fb[lo:]...)
	for k++; f.starts[k] < b; k++ {
		if fb, _, err = fr.get(c, f, k, 0, int(min(b, f.starts[k+1])-f.starts[k])); err != nil {
			return nil, err
		}
		fr.join = append(fr.join, fb[:min(uint64(len(fb)), b-f.starts[k])]...)
	}
	return fr.join, nil
}
