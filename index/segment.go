package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/lazymem/lazymem/codec"
)

// Segment file constants. Never change: they define the on-disk format
// drawn in doc.go and docs/format/index.md.
const (
	segMagic       = "LZMIDX01" // first 8 bytes of a segment file
	segVersion     = 5          // written; versions 1 to 4 are still read
	segVersion5    = 5          // bit-packed gaps, no lengths in the blocks
	segVersion4    = 4          // bit-packed gaps and lengths in every block
	segVersion3    = 3          // bit-packed tfs, one-block terms without a block meta
	segVersion2    = 2          // block metas with corners
	segVersion1    = 1          // block metas without corners
	segHeaderSize  = 32
	segFooterSize  = 8*8 + 8
	segFooterMagic = 0x4c5a4d46 // "LZMF"
	termEntrySize  = 28         // see entry
	strLenNext     = 0xffff     // version 3 strLen: the next entry's strOff less this one's
)

// fieldSet holds bitmap postings: key -> value -> ids.
type fieldSet map[string]map[string]*roaring.Bitmap

// add puts id in the posting of key=val. A new key or value is cloned: the
// map keeps it for the life of the index, and the caller's string may be a
// slice of something much larger (lazymemd's decoder takes every field of
// a request from one string of the whole body).
func (fs fieldSet) add(key, val string, id uint32) {
	m := fs[key]
	if m == nil {
		m = make(map[string]*roaring.Bitmap)
		fs[strings.Clone(key)] = m
	}
	b := m[val]
	if b == nil {
		b = roaring.New()
		m[strings.Clone(val)] = b
	}
	b.Add(id)
}

// segment is one id range [lo, hi] of the index. The mutable segment has mut
// set; a sealed segment is an encoded file image held in buf (read whole
// from disk, or kept in memory when the index has no directory).
type segment struct {
	num     uint64 // file number; 0 for the mutable segment
	lo, hi  uint32 // id range, inclusive; hi < lo when empty
	nDocs   uint32
	sumLen  uint64
	present *roaring.Bitmap

	mut *memSeg

	buf  []byte
	v1   bool   // a version 1 file: block metas without corners
	v3   bool   // a version 3, 4 or 5 file: packed tfs, one-block terms in their entries
	pg   bool   // a version 4 or 5 file: packed gaps
	v4   bool   // a version 4 file: each block also holds its lengths
	lens []byte // (hi-lo+1) x u32
	// lens8 is the length column in one byte a document, built at open
	// (not stored): a length of lens8Escape or more reads lens instead.
	// Scoring reads a length per candidate in an order the cache cannot
	// guess; a quarter of the bytes keeps more of them in cache. Profile
	// lesson (Zipf 1M, 8 segments, mid-frequency terms, no filter): the
	// length reads were a quarter of the search.
	lens8  []uint8
	times  []byte // (hi-lo+1) x i64
	fields []byte
	strs   []byte
	table  []byte
	posts  []byte
	nTerms int
	dict   termDict // term -> table index, built by openSegment

	// deletions that fall in this segment (tombstones not yet merged away)
	nDeleted uint32
	delLen   uint64
	delMu    sync.Mutex
	delDF    map[string]uint32 // per term: postings of deleted docs (lazy)

	boundMu sync.Mutex
	bounds  map[string][]tfdl // sealed: per term, Pareto frontier of the blocks' corners
}

type tfdl struct{ tf, dl uint32 }

// frontier returns the blocks' corners that no other corner dominates
// (higher or equal tf with lower or equal length). The term's upper bound
// is the best BM25 score over them: as tight as the max of the block
// bounds, at the cost of a handful of evaluations. Cached per term for
// sealed segments; computed afresh for the mutable one, into buf[:0] (the
// searcher's, so that a query allocates none). p is scratch.
func (s *segment) frontier(t string, ti *termInfo, p *postingsIter, buf []tfdl) []tfdl {
	if s.mut == nil {
		s.boundMu.Lock()
		defer s.boundMu.Unlock()
		if f, ok := s.bounds[t]; ok {
			return f
		}
	}
	p.reset(ti)
	// Built corner by corner, no sort: a new process computes every
	// query term's frontier in every sealed segment on its first recalls,
	// and sorting the corners took 0.13 s of index.Search's 0.32 s of CPU
	// in 300 cold 1M recalls (docs/benchmarks/cold.md).
	var out []tfdl
	if s.mut != nil {
		out = buf[:0]
	}
	for bi := 0; bi < p.nBlocks; bi++ {
		c, _ := p.corners(bi)
		out = addFrontier(out, c.a)
		if c.b != c.a {
			out = addFrontier(out, c.b)
		}
	}
	if s.mut == nil {
		if s.bounds == nil {
			s.bounds = make(map[string][]tfdl)
		}
		s.bounds[strings.Clone(t)] = out
	}
	return out
}

// addFrontier adds c to the Pareto frontier f (the pairs no other
// dominates: higher or equal tf with lower or equal length; by tf
// descending, so by length descending too) and returns it. A frontier
// holds a pair per distinct tf at most, a handful.
func addFrontier(f []tfdl, c tfdl) []tfdl {
	i := 0 // the first pair of tf <= c.tf
	for i < len(f) && f[i].tf > c.tf {
		i++
	}
	j := i // the pairs of tf >= c.tf are f[:j]; the last has the least length
	if j < len(f) && f[j].tf == c.tf {
		j++
	}
	if j > 0 && f[j-1].dl <= c.dl {
		return f // dominated (or present)
	}
	k := i // c dominates f[i:k]: tf <= c.tf and length >= c.dl
	for k < len(f) && f[k].dl >= c.dl {
		k++
	}
	return slices.Insert(slices.Delete(f, i, k), i, c)
}

type memSeg struct {
	terms  termTable // term -> index in slab
	slab   memSlab
	arena  postArena
	lens   []uint32
	times  []int64
	fields fieldSet
}

// memSlab stores memTerms in fixed-size chunks: no per-term allocation,
// and growing it never copies (or moves) the terms already there.
type memSlab struct {
	chunks [][]memTerm
	n      int32
}

const slabChunk = 1024

func (s *memSlab) at(k int32) *memTerm { return &s.chunks[k/slabChunk][k%slabChunk] }

// alloc returns the index of a new zero memTerm.
func (s *memSlab) alloc() int32 {
	if s.n%slabChunk == 0 {
		s.chunks = append(s.chunks, make([]memTerm, slabChunk))
	}
	s.n++
	return s.n - 1
}

// newMutable returns an empty mutable segment starting at id lo. hint
// pre-sizes its term dictionary and per-doc arrays (the previous mutable
// segment's sizes: segments fill alike, and growing a ~100k-entry map by
// rehashing showed in the profile).
func newMutable(lo uint32, hint memHint) *segment {
	return &segment{lo: lo, hi: lo - 1, present: roaring.New(), mut: &memSeg{
		terms: newTermTable(hint.terms), fields: make(fieldSet),
		lens: make([]uint32, 0, hint.docs), times: make([]int64, 0, hint.docs)}}
}

// memHint sizes a new mutable segment.
type memHint struct{ terms, docs int }

func (s *segment) empty() bool { return s.nDocs == 0 }

func (s *segment) docLen(id uint32) uint32 {
	if s.mut != nil {
		return s.mut.lens[id-s.lo]
	}
	if v := s.lens8[id-s.lo]; v < lens8Escape {
		return uint32(v)
	}
	return binary.LittleEndian.Uint32(s.lens[(id-s.lo)*4:])
}

// lens8Escape marks a length lens8 does not hold.
const lens8Escape = 0xff

func (s *segment) docTime(id uint32) int64 {
	if s.mut != nil {
		return s.mut.times[id-s.lo]
	}
	return int64(binary.LittleEndian.Uint64(s.times[(id-s.lo)*8:]))
}

// term looks a term up; ok is false when the segment does not hold it.
func (s *segment) term(t string, ti *termInfo) bool {
	if s.mut != nil {
		j, ok := s.mut.terms.find(t, termHash(t))
		if !ok {
			return false
		}
		mt := s.mut.slab.at(j)
		*ti = termInfo{df: uint32(mt.df()), mem: mt, arena: &s.mut.arena, maxTF: 0, minDL: ^uint32(0)}
		for bi := range mt.nBlocks() {
			b := mt.block(&s.mut.arena, bi)
			ti.maxTF = max(ti.maxTF, b.maxTF)
			ti.minDL = min(ti.minDL, b.minDL)
		}
		return true
	}
	i := s.dict.find(s, t)
	if i < 0 {
		return false
	}
	s.entry(i, ti)
	return true
}

func (s *segment) termAt(i int) []byte {
	e := s.table[i*termEntrySize:]
	off := binary.LittleEndian.Uint32(e)
	if s.v3 {
		n := uint32(binary.LittleEndian.Uint16(e[26:]))
		if n == strLenNext {
			return s.strs[off:strEnd(s.table, i+1, len(s.strs))]
		}
		return s.strs[off : off+n]
	}
	n := binary.LittleEndian.Uint32(e[4:])
	return s.strs[off : off+n]
}

// strEnd is where the string of the term before entry i ends in a version
// 3 table: entry i's strOff, or the strings' end after the last entry.
func strEnd(table []byte, i, nStrs int) uint32 {
	if (i+1)*termEntrySize > len(table) {
		return uint32(nStrs)
	}
	return binary.LittleEndian.Uint32(table[i*termEntrySize:])
}

// entry reads term i's table entry. Versions 1 and 2:
//
//	strOff u32 | strLen u32 | df u32 | maxTF u32 | minDL u32 | postOff u64
//
// Version 3 (a term of one block has no block meta; its entry holds the
// block's corners and last doc):
//
//	strOff u32 | df u32 | last u32 | bound (8) | postOff u48 | strLen u16
//
// bound is the corners aTF, aDL, bTF, minDL u16 for a term of at most
// blockSize postings, else maxTF u32, minDL u32.
func (s *segment) entry(i int, ti *termInfo) {
	e := s.table[i*termEntrySize:]
	if s.v3 {
		*ti = termInfo{df: binary.LittleEndian.Uint32(e[4:]), v3: true, pg: s.pg, v4: s.v4}
		if ti.df <= blockSize {
			ti.single = true
			ti.last = binary.LittleEndian.Uint32(e[8:])
			ti.c = decodeCorners(e[4:])
			ti.maxTF, ti.minDL = ti.c.a.tf, ti.c.b.dl
		} else {
			ti.maxTF, ti.minDL = binary.LittleEndian.Uint32(e[12:]), binary.LittleEndian.Uint32(e[16:])
		}
		ti.data = s.posts[postOffV3(e):]
		ti.lo, ti.hi = s.lo, s.hi
		return
	}
	*ti = termInfo{
		df:    binary.LittleEndian.Uint32(e[8:]),
		maxTF: binary.LittleEndian.Uint32(e[12:]),
		minDL: binary.LittleEndian.Uint32(e[16:]),
	}
	off := binary.LittleEndian.Uint64(e[20:])
	ti.data = s.posts[off:]
	ti.lo, ti.hi, ti.v1 = s.lo, s.hi, s.v1
}

func postOffV3(e []byte) uint64 {
	return uint64(binary.LittleEndian.Uint32(e[20:])) | uint64(binary.LittleEndian.Uint16(e[24:]))<<32
}

// deletedDF returns how many postings of term t in s belong to deleted
// documents, so df stays exact before merges drop them.
func (s *segment) deletedDF(t string, ti *termInfo, tomb *roaring.Bitmap, p *postingsIter) uint32 {
	if s.nDeleted == 0 {
		return 0
	}
	s.delMu.Lock()
	defer s.delMu.Unlock()
	if n, ok := s.delDF[t]; ok {
		return n
	}
	var n uint32
	p.reset(ti)
	for p.Next() {
		if tomb.Contains(p.At()) {
			n++
		}
	}
	if s.delDF == nil {
		s.delDF = make(map[string]uint32)
	}
	s.delDF[t] = n
	return n
}

var errShort = errors.New("truncated")

// openSegment validates and indexes a file image without copying it.
func openSegment(name string, num uint64, buf []byte) (*segment, error) {
	bad := func(off int, err error) (*segment, error) {
		return nil, &CorruptionError{File: name, Offset: int64(off), Err: err}
	}
	if len(buf) < segHeaderSize+segFooterSize || string(buf[:8]) != segMagic {
		return bad(0, fmt.Errorf("bad magic or size (%d bytes, %q)", len(buf), buf[:min(8, len(buf))]))
	}
	v := binary.LittleEndian.Uint32(buf[8:])
	if v < segVersion1 || v > segVersion5 {
		return bad(8, fmt.Errorf("unknown version %d", v))
	}
	ft := len(buf) - segFooterSize
	if binary.LittleEndian.Uint32(buf[len(buf)-4:]) != segFooterMagic {
		return bad(len(buf)-4, errors.New("bad footer magic"))
	}
	if _, _, err := codec.DecodeChecksummed(buf, len(buf)-8); err != nil {
		return bad(len(buf)-8, err)
	}
	s := &segment{num: num, buf: buf, v1: v == segVersion1, v3: v >= segVersion3, pg: v >= segVersion4, v4: v == segVersion4}
	s.lo = binary.LittleEndian.Uint32(buf[16:])
	s.hi = binary.LittleEndian.Uint32(buf[20:])
	s.nDocs = binary.LittleEndian.Uint32(buf[24:])
	var offs [8]uint64
	for i := range offs {
		offs[i] = binary.LittleEndian.Uint64(buf[ft+8*i:])
	}
	s.sumLen = offs[7]
	if s.hi < s.lo {
		return bad(16, errors.New("empty id range"))
	}
	n := uint64(s.hi-s.lo) + 1
	prev := uint64(segHeaderSize)
	for i := 0; i < 7; i++ {
		if offs[i] < prev || offs[i] > uint64(ft) {
			return bad(ft+8*i, errors.New("section offset out of order"))
		}
		prev = offs[i]
	}
	if offs[2]-offs[1] != 4*n || offs[3]-offs[2] != 8*n {
		return bad(int(offs[1]), errors.New("column size mismatch"))
	}
	var err error
	if s.present, err = readBitmap(buf[offs[0]:offs[1]]); err != nil {
		return bad(int(offs[0]), err)
	}
	// Check the count first (cheap: container headers), then every id: a
	// damaged bitmap must not send a reader outside the columns, nor make
	// this loop run over billions of ids.
	if s.present.GetCardinality() != uint64(s.nDocs) {
		return bad(int(offs[0]), errors.New("doc count mismatch"))
	}
	var nIDs uint64
	var last int64 = -1
	it := s.present.ManyIterator()
	var ids [256]uint32
	for k := it.NextMany(ids[:]); k > 0; k = it.NextMany(ids[:]) {
		for _, id := range ids[:k] {
			if id < s.lo || id > s.hi || int64(id) <= last {
				return bad(int(offs[0]), errors.New("ids outside the segment range"))
			}
			last = int64(id)
		}
		nIDs += uint64(k)
	}
	if nIDs != uint64(s.nDocs) {
		return bad(int(offs[0]), errors.New("doc count mismatch"))
	}
	s.lens = buf[offs[1]:offs[2]]
	s.lens8 = make([]uint8, n)
	for i := range s.lens8 {
		s.lens8[i] = uint8(min(binary.LittleEndian.Uint32(s.lens[4*i:]), lens8Escape))
	}
	s.times = buf[offs[2]:offs[3]]
	s.fields = buf[offs[3]:offs[4]]
	s.strs = buf[offs[4]:offs[5]]
	s.table = buf[offs[5]:offs[6]]
	s.posts = buf[offs[6]:ft]
	if len(s.table)%termEntrySize != 0 {
		return bad(int(offs[5]), errors.New("term table size"))
	}
	s.nTerms = len(s.table) / termEntrySize
	// Validate the term table so lookups never index out of range, and
	// hash it.
	s.dict = newTermDict(s.nTerms)
	var prevTerm []byte
	for i := 0; i < s.nTerms; i++ {
		e := s.table[i*termEntrySize:]
		so, sl := uint64(binary.LittleEndian.Uint32(e)), uint64(binary.LittleEndian.Uint32(e[4:]))
		df := uint64(binary.LittleEndian.Uint32(e[8:]))
		var po, need uint64
		if s.v3 {
			df, po = uint64(binary.LittleEndian.Uint32(e[4:])), postOffV3(e)
			if sl = uint64(binary.LittleEndian.Uint16(e[26:])); sl == strLenNext {
				end := uint64(strEnd(s.table, i+1, len(s.strs)))
				if end < so {
					return bad(int(offs[5])+i*termEntrySize, errors.New("term strings out of order"))
				}
				sl = end - so
			}
			if df > blockSize {
				need = ((df + blockSize - 1) / blockSize) * blockMetaSize
			} else if s.v4 {
				need = 5 // a gap, the widths of the gaps, tfs and lengths, a base
			} else if s.pg {
				need = 3 // a gap, the widths of the gaps and tfs
			} else {
				need = df + 1 // a varint a doc and the tfs' width byte at least
			}
		} else {
			po = binary.LittleEndian.Uint64(e[20:])
			need = ((df + blockSize - 1) / blockSize) * blockMetaSize
		}
		if so+sl > uint64(len(s.strs)) || df == 0 || po+need > uint64(len(s.posts)) || po > uint64(len(s.posts)) {
			return bad(int(offs[5])+i*termEntrySize, errors.New("term entry out of range"))
		}
		t := s.strs[so : so+sl]
		if i > 0 && bytes.Compare(prevTerm, t) >= 0 {
			return bad(int(offs[5])+i*termEntrySize, errors.New("terms not sorted"))
		}
		prevTerm = t
		s.dict.insert(maphash.Bytes(dictSeed, t), i)
	}
	return s, nil
}

// forEachField decodes the field section of a sealed segment.
func (s *segment) forEachField(fn func(key, val string, bm *roaring.Bitmap) error) error {
	return s.walkFields(nil, fn)
}

// walkFields is forEachField that also tells onKey (unless nil) each key's
// number of values before them, so that a caller can size a map once.
func (s *segment) walkFields(onKey func(key string, n int), fn func(key, val string, bm *roaring.Bitmap) error) error {
	if s.mut != nil {
		for k, m := range s.mut.fields {
			for v, bm := range m {
				if err := fn(k, v, bm); err != nil {
					return err
				}
			}
		}
		return nil
	}
	b := s.fields
	pos := 0
	u32 := func() (uint32, bool) {
		if pos+4 > len(b) {
			return 0, false
		}
		v := binary.LittleEndian.Uint32(b[pos:])
		pos += 4
		return v, true
	}
	str := func() (string, bool) {
		n, ok := u32()
		if !ok || pos+int(n) > len(b) {
			return "", false
		}
		v := string(b[pos : pos+int(n)])
		pos += int(n)
		return v, true
	}
	corrupt := func() error { return &CorruptionError{File: segName(s.num), Offset: int64(pos), Err: errShort} }
	nk, ok := u32()
	if !ok {
		return corrupt()
	}
	for ; nk > 0; nk-- {
		k, ok := str()
		if !ok {
			return corrupt()
		}
		nv, ok := u32()
		if !ok {
			return corrupt()
		}
		if onKey != nil {
			onKey(k, int(min(nv, uint32(len(b)-pos)/8))) // a damaged count must not size a huge map
		}
		for ; nv > 0; nv-- {
			v, ok := str()
			if !ok {
				return corrupt()
			}
			n, ok := u32()
			if !ok || pos+int(n) > len(b) {
				return corrupt()
			}
			bm, err := readBitmap(b[pos : pos+int(n)])
			if err != nil {
				return &CorruptionError{File: segName(s.num), Offset: int64(pos), Err: err}
			}
			pos += int(n)
			if bm.AndCardinality(s.present) != bm.GetCardinality() {
				return &CorruptionError{File: segName(s.num), Offset: int64(pos), Err: errors.New("field ids outside the segment")}
			}
			if err := fn(k, v, bm); err != nil {
				return err
			}
		}
	}
	return nil
}

func segName(num uint64) string { return fmt.Sprintf("%06d.lzi", num) }

// readBitmap decodes a roaring bitmap into memory it owns. The roaring
// decoder trusts its input and may panic on damaged bytes; a checksummed
// file only reaches it when damaged in memory or crafted, so the panic is
// turned into an error rather than crashing the process.
func readBitmap(b []byte) (bm *roaring.Bitmap, err error) {
	defer func() {
		if r := recover(); r != nil {
			bm, err = nil, fmt.Errorf("bad bitmap: %v", r)
		}
	}()
	// FromBuffer does not allocate per container (containers view b), so a
	// damaged header cannot make it allocate gigabytes; the size check
	// rejects trailing or missing bytes; Clone then copies into owned memory.
	view := roaring.New()
	if _, err := view.FromBuffer(b); err != nil {
		return nil, err
	}
	if view.GetSerializedSizeInBytes() != uint64(len(b)) {
		return nil, errors.New("bitmap size mismatch")
	}
	bm = view.Clone()
	// Touch every container so damage shows up here, not in a reader.
	_ = bm.GetCardinality()
	if !bm.IsEmpty() {
		_, _ = bm.Minimum(), bm.Maximum()
	}
	return bm, nil
}
