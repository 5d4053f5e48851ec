package segment

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync"
)

// Columnar segment bodies (segment version 2). When every live payload of
// a segment is an engine record (codec version 1, every length a minimal
// uvarint), the body stores the records' fields as columns instead of the
// records one after the other: times as deltas, agent, session and role as
// references into per-segment string tables, metadata keys and values
// likewise, and the texts last, together. zstd then compresses each kind
// of bytes next to its own kind (bench TestSegmentLayoutDiag, 32 KiB
// segments, zstd-3: workload records 0.548x of their text in rows, 0.494x
// in columns; Zipf records 0.574x -> 0.516x). Decoding rebuilds every
// payload byte for byte. Any other payload (not a record, a non-minimal
// length) makes the segment a version-1 row body, as before.
//
//	body:
//	+-------------------+---------+-------+--------+----------+-------+------+-----------+-------+
//	| col_len * 7       | deleted | times | agents | sessions | roles | meta | text_lens | texts |
//	| uvarint each      |         |       |        |          |       |      |           |       |
//	+-------------------+---------+-------+--------+----------+-------+------+-----------+-------+
//	col_len[i] is the byte length of column i (deleted .. text_lens); texts
//	run to the end of the body.
//
//	deleted    ceil(count/8) bytes, bit i (LSB first) set: record first+i is deleted
//	times      per live record: zigzag varint, time minus the previous live
//	           record's time (the first: minus 0); time is the record's
//	           8-byte little-endian field read as int64
//	agents,    per live record: a reference into the column's own string
//	sessions,  table (empty at the start of the segment): uvarint 0, then
//	roles      uvarint length and the bytes, appends a new string; k > 0 is
//	           table entry k-1
//	meta       per live record: uvarint n_meta, then per field a reference
//	           (one table shared by keys and values) for the key, uvarint
//	           n_values and a reference per value
//	text_lens  per live record: uvarint byte length of its text
//	texts      the texts of the live records, concatenated in id order
//
// A record is rebuilt as codec.AppendRecord writes it: 0x01, uvarint body
// length, time, agent, session, role, n_meta, fields, text.

// Segment versions. The first byte of every segment value; never change.
const (
	segmentVersionRows    = 1 // slots, then payloads (format.go)
	segmentVersionColumns = 2 // columns (above)
)

// segmentVersionNames is the first byte of a framed segment value (as
// version 3, frames.go) whose head refers to agents, sessions and roles
// by their id in the log's name table (names.go). Stored on disk: never
// change.
const segmentVersionNames = 4

// isFramed reports whether a value of version v is framed (frames.go).
func isFramed(v byte) bool {
	return v == segmentVersionFrames || v == segmentVersionNames || v == segmentVersionWords || v == segmentVersionPacked
}

// hasNames reports whether a value of version v refers to the log's name
// table (versions 4 to 6).
func hasNames(v byte) bool {
	return v == segmentVersionNames || v == segmentVersionWords || v == segmentVersionPacked
}

// hasWords reports whether a value of version v codes its text frames as
// words of the log's vocabulary (versions 5 and 6).
func hasWords(v byte) bool { return v == segmentVersionWords || v == segmentVersionPacked }

const (
	colDeleted = iota
	colTimes
	colAgents
	colSessions
	colRoles
	colMeta
	colTextLens
	colTexts
	nCols
)

// maxRebuilt bounds the records a columnar body rebuilds: a segment holds
// at most SegmentBytes (64 MiB at most) plus one record (MaxRecordBytes,
// 64 MiB at most); a damaged body whose references repeat a long string
// must not make the reader allocate without bound.
const maxRebuilt = 256 << 20

// recordVersion is the codec's record version this layout understands.
const recordVersion = 1

// colEncoder builds columnar bodies; its buffers and tables are reused
// seal after seal (under Log.sealMu).
type colEncoder struct {
	cols   [nCols][]byte
	tables [4]map[string]uint64 // agents, sessions, roles, meta
	// names, when set, is the log's name table: agents, sessions and
	// roles are then references into it (version 4); pending are the
	// names the body uses that the table does not hold yet.
	names        *nameTable
	pending      []pendingName
	pendingIDs   map[string]uint64
	pendingBytes int
	lastSess     []uint64 // per agent (its index in tables[0]): 1 + its last session's index in tables[1], 0 none
	// The live records' times and text lengths, for a version-6 head's
	// packed columns (packed.go), and those columns.
	times                   []int64
	lens                    []uint64
	packedTimes, packedLens []byte
}

// encode appends the columnar body of payloads (nil = deleted) to dst;
// ok is false when a live payload is not a record this layout rebuilds
// exactly, and dst is then returned unchanged.
func (e *colEncoder) encode(dst []byte, payloads [][]byte) ([]byte, bool) {
	for i := range e.cols {
		e.cols[i] = e.cols[i][:0]
	}
	for i := range e.tables {
		if e.tables[i] == nil {
			e.tables[i] = make(map[string]uint64)
		}
		clear(e.tables[i])
	}
	e.pending = e.pending[:0]
	if e.pendingIDs == nil {
		e.pendingIDs = map[string]uint64{}
	}
	clear(e.pendingIDs)
	e.pendingBytes = 0
	e.lastSess = e.lastSess[:0]
	e.times, e.lens = e.times[:0], e.lens[:0]
	del := e.cols[colDeleted]
	for range (len(payloads) + 7) / 8 {
		del = append(del, 0)
	}
	e.cols[colDeleted] = del
	var prev int64
	for i, p := range payloads {
		if p == nil {
			del[i/8] |= 1 << (i % 8)
			continue
		}
		var ok bool
		if prev, ok = e.record(p, prev); !ok {
			return dst, false
		}
	}
	return e.appendBody(dst, false), true
}

// appendBody appends the body encode built last, with the times and
// text_lens columns of a version-6 head (packed.go) if packed.
func (e *colEncoder) appendBody(dst []byte, packed bool) []byte {
	cols := e.cols
	if packed {
		e.packedTimes = appendTimesColumn(e.packedTimes[:0], e.times)
		e.packedLens = appendLensColumn(e.packedLens[:0], e.lens)
		cols[colTimes], cols[colTextLens] = e.packedTimes, e.packedLens
	}
	for i := colDeleted; i < colTexts; i++ {
		dst = binary.AppendUvarint(dst, uint64(len(cols[i])))
	}
	for i := range cols {
		dst = append(dst, cols[i]...)
	}
	return dst
}

// record adds payload p to the columns; prev is the previous live record's
// time. ok is false when p is not a record with minimal lengths.
func (e *colEncoder) record(p []byte, prev int64) (t int64, ok bool) {
	r := rawReader{b: p}
	if r.byte() != recordVersion {
		return 0, false
	}
	n := r.uvarint()
	if !r.ok || n != uint64(len(p)-r.off) {
		return 0, false
	}
	tb := r.bytes(8)
	if !r.ok {
		return 0, false
	}
	t = int64(binary.LittleEndian.Uint64(tb))
	e.cols[colTimes] = binary.AppendVarint(e.cols[colTimes], t-prev)
	e.times = append(e.times, t)
	if e.names != nil {
		e.namesOf(r.str(), r.str(), r.str())
	} else {
		e.ref(colAgents, 0, r.str())
		e.ref(colSessions, 1, r.str())
		e.ref(colRoles, 2, r.str())
	}
	nm := r.uvarint()
	e.cols[colMeta] = binary.AppendUvarint(e.cols[colMeta], nm)
	ref := e.ref
	if e.names != nil {
		ref = e.metaRef
	}
	for i := uint64(0); i < nm && r.ok; i++ {
		ref(colMeta, 3, r.str())
		nv := r.uvarint()
		e.cols[colMeta] = binary.AppendUvarint(e.cols[colMeta], nv)
		for j := uint64(0); j < nv && r.ok; j++ {
			ref(colMeta, 3, r.str())
		}
	}
	text := r.str()
	if !r.ok || r.off != len(p) {
		return 0, false
	}
	e.cols[colTextLens] = binary.AppendUvarint(e.cols[colTextLens], uint64(len(text)))
	e.lens = append(e.lens, uint64(len(text)))
	e.cols[colTexts] = append(e.cols[colTexts], text...)
	return t, true
}

// ref appends to column c a reference to s in table k.
func (e *colEncoder) ref(c, k int, s []byte) {
	col := e.cols[c]
	if i, ok := e.tables[k][string(s)]; ok {
		e.cols[c] = binary.AppendUvarint(col, i+1)
		return
	}
	e.tables[k][string(s)] = uint64(len(e.tables[k]))
	col = binary.AppendUvarint(col, 0)
	col = binary.AppendUvarint(col, uint64(len(s)))
	e.cols[c] = append(col, s...)
}

// rawReader reads a record's bytes; ok turns false at the first length
// that runs past the end or is not a minimal uvarint (which the rebuilt
// record would not reproduce).
type rawReader struct {
	b   []byte
	off int
	ok  bool
}

func (r *rawReader) byte() byte {
	if r.off >= len(r.b) {
		r.ok = false
		return 0
	}
	r.ok = true
	r.off++
	return r.b[r.off-1]
}

func (r *rawReader) uvarint() uint64 {
	if !r.ok {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 || n != uvarintLen(v) {
		r.ok = false
		return 0
	}
	r.off += n
	return v
}

func (r *rawReader) bytes(n uint64) []byte {
	if !r.ok || n > uint64(len(r.b)-r.off) {
		r.ok = false
		return nil
	}
	s := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return s
}

func (r *rawReader) str() []byte { return r.bytes(r.uvarint()) }

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// colReader reads one column of a body being decoded.
type colReader struct {
	b   []byte
	off int
	err error
}

func (c *colReader) fail(what string) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: columnar body: %s at column offset %d", ErrFormat, what, c.off)
	}
}

func (c *colReader) uvarint(what string) uint64 {
	if c.err != nil {
		return 0
	}
	v, n := binary.Uvarint(c.b[c.off:])
	if n <= 0 {
		c.fail(what)
		return 0
	}
	c.off += n
	return v
}

func (c *colReader) varint(what string) int64 {
	if c.err != nil {
		return 0
	}
	v, n := binary.Varint(c.b[c.off:])
	if n <= 0 {
		c.fail(what)
		return 0
	}
	c.off += n
	return v
}

func (c *colReader) bytes(n uint64, what string) []byte {
	if c.err != nil {
		return nil
	}
	if n > uint64(len(c.b)-c.off) {
		c.fail(what)
		return nil
	}
	s := c.b[c.off : c.off+int(n)]
	c.off += int(n)
	return s
}

// span is a string of a column: c.b[off:end]. Tables hold spans, not
// slices: no pointers for the collector to scan or write barriers to run
// (profile: a tenth of the rebuild was write barriers).
type span struct{ off, end uint32 }

// ref reads a reference into table, adding a new string to it, and
// returns the string's span.
func (c *colReader) ref(table *[]span, what string) span {
	k := c.uvarint(what)
	if c.err != nil {
		return span{}
	}
	if k == 0 {
		n := c.uvarint(what)
		if c.bytes(n, what); c.err != nil {
			return span{}
		}
		s := span{uint32(c.off - int(n)), uint32(c.off)}
		*table = append(*table, s)
		return s
	}
	if k > uint64(len(*table)) {
		c.fail(what)
		return span{}
	}
	return (*table)[k-1]
}

func (c *colReader) at(s span) []byte { return c.b[s.off:s.end] }

// parseColumns rebuilds the records of a columnar body (version 2, or a
// framed value's head and texts; names is the log's name table for a
// version-4 head, else nil). The result owns a new buffer: body is not
// referenced.
func parseColumns(first uint64, count int, body []byte, names *nameTable) (*decoded, error) {
	return parseColumnsPacked(first, count, body, names, false)
}

// parseColumnsPacked is parseColumns for a body whose head is version 6's
// if packed.
func parseColumnsPacked(first uint64, count int, body []byte, names *nameTable, packed bool) (*decoded, error) {
	cur, err := openCursorPacked(body, count, packed)
	if err != nil {
		return nil, err
	}
	cur.names = names
	defer cur.release()
	texts := cur.cols[colTexts].b
	d := &decoded{first: first, offs: make([]uint32, count+1), dead: make([]bool, count)}
	// The rebuilt records are the texts plus about a dozen bytes of
	// lengths and time per record, plus the fields the tables share.
	out := make([]byte, 0, len(body)+16*count+len(cur.cols[colMeta].b))
	var r colRecord
	for i := 0; i < count; i++ {
		d.offs[i] = uint32(len(out))
		if cur.dead(i) {
			d.dead[i] = true
			continue
		}
		if err := cur.next(&r); err != nil {
			return nil, err
		}
		if r.textEnd > uint64(len(texts)) {
			return nil, fmt.Errorf("%w: columnar body: text of record %d runs past the texts", ErrFormat, i)
		}
		if out, err = cur.appendRecord(out, &r, texts[r.textOff:r.textEnd]); err != nil {
			return nil, err
		}
	}
	if err := cur.finish(uint64(len(texts))); err != nil {
		return nil, err
	}
	d.offs[count] = uint32(len(out))
	d.body = out
	return d, nil
}

// colCursor walks the records of a columnar body in id order: next
// decodes a live record's fields, appendRecord rebuilds it around its
// text, which the caller finds (in the body, or in a text frame).
type colCursor struct {
	cols  [nCols]colReader
	names *nameTable // a version-4 head's: agents, sessions and roles are name ids
	del   []byte
	sc    *colScratch
	t     int64  // the previous live record's time
	text  uint64 // where the next live record's text starts in the texts
	// packed: a version-6 head; the times and text lengths are in sc,
	// live is the next live record's index in them.
	packed bool
	live   int
}

// colRecord is one record's fields as next decoded them; the metadata
// parts are in the cursor's scratch until the next call.
type colRecord struct {
	t                    int64
	agent, session, role []byte
	nm                   uint64
	metaSize             int
	textOff, textEnd     uint64
}

// openCursor reads the column lengths of body and checks the deletion
// bitmap; the texts column is what follows the others (empty in a framed
// segment's head). The caller releases the cursor.
func openCursor(body []byte, count int) (*colCursor, error) {
	return openCursorPacked(body, count, false)
}

// openCursorPacked is openCursor for a head whose times and text_lens
// columns are version 6's (packed.go) if packed: they are decoded whole
// here, into the cursor's scratch.
func openCursorPacked(body []byte, count int, packed bool) (*colCursor, error) {
	hdr := colReader{b: body}
	off := uint64(0)
	var lens [nCols - 1]uint64
	for i := range lens {
		lens[i] = hdr.uvarint("column length")
		off += lens[i]
	}
	if hdr.err != nil {
		return nil, hdr.err
	}
	if off > uint64(len(body)-hdr.off) {
		return nil, fmt.Errorf("%w: columnar body: columns of %d bytes in a body of %d", ErrFormat, off, len(body)-hdr.off)
	}
	c := cursorPool.Get().(*colCursor)
	*c = colCursor{sc: c.sc}
	pos := hdr.off
	for i := range lens {
		c.cols[i] = colReader{b: body[pos : pos+int(lens[i])]}
		pos += int(lens[i])
	}
	c.cols[colTexts] = colReader{b: body[pos:]}
	c.del = c.cols[colDeleted].b
	c.cols[colDeleted].off = len(c.del) // read whole, by index
	if len(c.del) != (count+7)/8 {
		cursorPool.Put(c)
		return nil, fmt.Errorf("%w: columnar body: deletion bitmap of %d bytes for %d records", ErrFormat, len(c.del), count)
	}
	c.sc.reset()
	if packed {
		live := count
		for i, b := range c.del {
			if i == len(c.del)-1 && count%8 != 0 {
				b &= 1<<(count%8) - 1 // bits past count mean nothing
			}
			live -= bits.OnesCount8(b)
		}
		var err error
		if c.sc.times, err = decodeTimesColumn(c.cols[colTimes].b, live, c.sc.times); err == nil {
			c.sc.lens, err = decodeLensColumn(c.cols[colTextLens].b, live, c.sc.lens)
		}
		if err != nil {
			cursorPool.Put(c)
			return nil, err
		}
		c.packed = true
		c.cols[colTimes].off, c.cols[colTextLens].off = len(c.cols[colTimes].b), len(c.cols[colTextLens].b)
	}
	return c, nil
}

// release returns the cursor, with its scratch, to cursorPool.
func (c *colCursor) release() { cursorPool.Put(c) }

// dead reports whether record i of the segment is deleted.
func (c *colCursor) dead(i int) bool { return c.del[i/8]&(1<<(i%8)) != 0 }

// next decodes the next live record's fields into r.
func (c *colCursor) next(r *colRecord) error { return c.advance(r, false) }

// skip walks past the next live record, as next but without its names
// and metadata: a read walks a head's records before its own for their
// text lengths and the segment's name tables (nameRef).
func (c *colCursor) skip() error {
	var r colRecord
	return c.advance(&r, true)
}

func (c *colCursor) advance(r *colRecord, lazy bool) error {
	cols, sc := &c.cols, c.sc
	var n uint64
	if c.packed {
		if c.live >= len(sc.times) {
			return fmt.Errorf("%w: packed head: more live records than times", ErrFormat)
		}
		c.t, n = sc.times[c.live], sc.lens[c.live]
		c.live++
	} else {
		c.t += cols[colTimes].varint("time")
	}
	r.t = c.t
	switch {
	case c.names == nil:
		r.agent = cols[colAgents].at(cols[colAgents].ref(&sc.agents, "agent"))
		r.session = cols[colSessions].at(cols[colSessions].ref(&sc.sessions, "session"))
		r.role = cols[colRoles].at(cols[colRoles].ref(&sc.roles, "role"))
		c.metaSpans(r)
	case lazy:
		c.namesOf(r, true)
		c.skipMeta()
	default:
		c.namesOf(r, false)
		c.metaOf(r)
	}
	if !c.packed {
		n = cols[colTextLens].uvarint("text length")
	}
	for i := range cols {
		if cols[i].err != nil {
			return cols[i].err
		}
	}
	if n > maxRebuilt {
		return fmt.Errorf("%w: columnar body: text of %d bytes", ErrFormat, n)
	}
	r.textOff, r.textEnd = c.text, c.text+n
	c.text = r.textEnd
	return nil
}

// metaSpans reads a record's metadata from a head whose strings are in
// its meta column (versions 2 and 3).
func (c *colCursor) metaSpans(r *colRecord) {
	mc, sc := &c.cols[colMeta], c.sc
	nm := mc.uvarint("meta count")
	// The record's metadata: keys[f] has nvs[f] values, vals flat.
	keys, vals, nvs := sc.keys[:0], sc.vals[:0], sc.nvs[:0]
	metaSize := uvarintLen(nm)
	for f := uint64(0); f < nm && mc.err == nil; f++ {
		k := mc.ref(&sc.meta, "meta key")
		nv := mc.uvarint("meta value count")
		keys, nvs = append(keys, k), append(nvs, nv)
		metaSize += spanLen(k) + uvarintLen(nv)
		for v := uint64(0); v < nv && mc.err == nil; v++ {
			s := mc.ref(&sc.meta, "meta value")
			vals = append(vals, s)
			metaSize += spanLen(s)
		}
	}
	sc.keys, sc.vals, sc.nvs = keys, vals, nvs
	r.nm, r.metaSize = nm, metaSize
}

// appendRecord appends the record r, whose text is text, as
// codec.AppendRecord writes it.
func (c *colCursor) appendRecord(out []byte, r *colRecord, text []byte) ([]byte, error) {
	bodyLen := 8 + strLen(r.agent) + strLen(r.session) + strLen(r.role) + r.metaSize + strLen(text)
	if len(out)+1+uvarintLen(uint64(bodyLen))+bodyLen > maxRebuilt {
		return nil, fmt.Errorf("%w: columnar body: records exceed %d bytes", ErrFormat, maxRebuilt)
	}
	out = append(out, recordVersion)
	out = binary.AppendUvarint(out, uint64(bodyLen))
	out = binary.LittleEndian.AppendUint64(out, uint64(r.t))
	out = appendStr(out, r.agent)
	out = appendStr(out, r.session)
	out = appendStr(out, r.role)
	out = binary.AppendUvarint(out, r.nm)
	mc, sc := &c.cols[colMeta], c.sc
	v := 0
	if c.names != nil {
		for f, k := range sc.mKeys {
			out = appendStr(out, k)
			out = binary.AppendUvarint(out, sc.nvs[f])
			for _, s := range sc.mVals[v : v+int(sc.nvs[f])] {
				out = appendStr(out, s)
			}
			v += int(sc.nvs[f])
		}
		return appendStr(out, text), nil
	}
	for f, k := range sc.keys {
		out = appendStr(out, mc.at(k))
		out = binary.AppendUvarint(out, sc.nvs[f])
		for _, s := range sc.vals[v : v+int(sc.nvs[f])] {
			out = appendStr(out, mc.at(s))
		}
		v += int(sc.nvs[f])
	}
	return appendStr(out, text), nil
}

// finish checks that every column was read to its end once the last
// record is decoded, and that the texts, textsLen bytes, were.
func (c *colCursor) finish(textsLen uint64) error {
	for i := range colTexts {
		if c.cols[i].off != len(c.cols[i].b) {
			return fmt.Errorf("%w: columnar body: column %d has %d bytes after the last record", ErrFormat, i, len(c.cols[i].b)-c.cols[i].off)
		}
	}
	if c.text != textsLen {
		return fmt.Errorf("%w: columnar body: texts of %d bytes, lengths say %d", ErrFormat, textsLen, c.text)
	}
	return nil
}

// colScratch is parseColumns' reused tables and metadata parts.
type colScratch struct {
	agents, sessions, roles, meta, keys, vals []span
	nvs                                       []uint64
	nAgents, nSessions, nRoles, nMeta         headTable // a version-4 head's names
	mKeys, mVals                              [][]byte  // a version-4 record's metadata (keys, nvs and flat values)
	lastSess                                  []int     // per agent (its index in nAgents): its last session's index in nSessions, -1 none
	times                                     []int64   // a version-6 head's live records' times
	lens                                      []uint64  // and text lengths
}

func (s *colScratch) reset() {
	s.agents, s.sessions, s.roles, s.meta = s.agents[:0], s.sessions[:0], s.roles[:0], s.meta[:0]
	s.keys, s.vals, s.nvs = s.keys[:0], s.vals[:0], s.nvs[:0]
	s.nAgents.reset()
	s.nSessions.reset()
	s.nRoles.reset()
	s.nMeta.reset()
	clear(s.mKeys[:cap(s.mKeys)])
	clear(s.mVals[:cap(s.mVals)])
	s.mKeys, s.mVals = s.mKeys[:0], s.mVals[:0]
	s.lastSess = s.lastSess[:0]
}

// cursorPool holds cursors with their scratch: a cold read opens one per
// segment it reads.
var cursorPool = sync.Pool{New: func() any { return &colCursor{sc: new(colScratch)} }}

func spanLen(s span) int { return uvarintLen(uint64(s.end-s.off)) + int(s.end-s.off) }

func strLen(s []byte) int { return uvarintLen(uint64(len(s))) + len(s) }

func appendStr(dst, s []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}
