package index

import (
	"encoding/binary"
	"math"
)

// blockSize is the number of postings per block. Never change: it is part of
// the segment file format (block metadata is per 128 postings).
const blockSize = 128

// endDoc marks an exhausted iterator. Ids must be < endDoc.
const endDoc = math.MaxUint32

// blockMeta summarises one block of a term's postings: the last doc id in it
// and the (max tf, min doc length) pair from which a block-max BM25 upper
// bound is computed at query time (BM25 grows with tf and shrinks with doc
// length, so score(maxTF, minDL) bounds every posting in the block whatever
// the global avgdl is).
type blockMeta struct {
	last  uint32
	off   uint32 // sealed: offset of the block data from the term's data start
	maxTF uint32
	minDL uint32
}

// blockMetaSize is the on-disk size of a blockMeta. Never change.
const blockMetaSize = 16

// corners bound a block's postings more tightly than (maxTF, minDL): every
// posting (tf, dl) of the block lies under corner a (tf <= a.tf and dl >=
// a.dl) or under corner b. a is the block's max tf with the least length
// among the postings holding it; b is the max tf of the postings shorter
// than a.dl, with the block's min length. A block whose (tf, dl) frontier
// has at most two points is bounded exactly (BM25's real block maximum);
// (maxTF, minDL) alone mixes the max tf of one posting with the min length
// of another. Version 2 segments store them (blockMetaV2); version 1
// segments and the mutable segment have a == b == (maxTF, minDL).
type corners struct{ a, b tfdl }

// bound is the block's BM25 upper bound for a term of weight w.
func (c corners) bound(sc *scorer, w float64) float64 {
	return max(sc.score(w, c.a.tf, c.a.dl), sc.score(w, c.b.tf, c.b.dl))
}

// boundTF bounds the score of a posting of the block whose tf is known
// (its length is not): a posting with tf above b.tf lies under a.
func (c corners) boundTF(sc *scorer, w float64, tf uint32) float64 {
	if tf > c.b.tf {
		return sc.score(w, tf, c.a.dl)
	}
	return sc.score(w, tf, c.b.dl)
}

// blockCorners computes the corners of one block's postings (tfs[j],
// dls[j]). The lengths come as a slice, read once by the caller: profile
// lesson (Zipf ingest), a closure reading them was called twice a posting
// while sealing.
func blockCorners(tfs, dls []uint32) corners {
	var c corners
	c.a.dl, c.b.dl = ^uint32(0), ^uint32(0)
	dls = dls[:len(tfs)]
	for j, tf := range tfs {
		d := dls[j]
		c.b.dl = min(c.b.dl, d)
		if tf > c.a.tf || (tf == c.a.tf && d < c.a.dl) {
			c.a = tfdl{tf, d}
		}
	}
	for j, tf := range tfs {
		if dls[j] < c.a.dl {
			c.b.tf = max(c.b.tf, tf)
		}
	}
	return c
}

// Version 2 block metas hold the corners in 16-bit fields: a tf of
// cornerSat or more is stored as cornerSat and read as the largest uint32
// (so the bound still holds), a length as min(length, cornerSat) (a lower
// bound). Never change.
const cornerSat = 0xffff

func putCorner16(b []byte, v uint32) { binary.LittleEndian.PutUint16(b, uint16(min(v, cornerSat))) }

func cornerTF16(b []byte) uint32 {
	if v := binary.LittleEndian.Uint16(b); v < cornerSat {
		return uint32(v)
	}
	return ^uint32(0)
}

// termInfo is what a segment knows about one term without decoding it.
type termInfo struct {
	df    uint32
	maxTF uint32 // over the whole term: the term-level upper bound
	minDL uint32
	mem   *memTerm // mutable segment
	arena *postArena
	data  []byte // sealed segment: block metas followed by block data
	v1    bool   // data is a version 1 segment's
	v3    bool   // data is a version 3, 4 or 5 segment's: packed tfs
	pg    bool   // data is a version 4 or 5 segment's: packed gaps
	v4    bool   // data is a version 4 segment's: lengths in the blocks
	// single: a version 3 term of one block, which has no block meta
	// (data is the block); c and last are the block's corners and last doc.
	single bool
	c      corners
	last   uint32
	lo, hi uint32 // sealed segment id range: decoded ids are checked against it
}

// corners0 returns the corners of the term's first block (for a term of
// one block, the term's own).
func (ti *termInfo) corners0() corners {
	if ti.single {
		return ti.c
	}
	if ti.mem != nil || ti.v1 {
		c := tfdl{ti.maxTF, ti.minDL}
		return corners{c, c}
	}
	return decodeCorners(ti.data)
}

// decodeCorners reads the corners of a version 2 block meta.
func decodeCorners(m []byte) corners {
	m = m[8:blockMetaSize]
	return corners{
		a: tfdl{cornerTF16(m), uint32(binary.LittleEndian.Uint16(m[2:]))},
		b: tfdl{cornerTF16(m[4:]), uint32(binary.LittleEndian.Uint16(m[6:]))},
	}
}

// postingsIter iterates over one term's postings in one segment, in increasing
// doc order. It is a concrete type so scoring loops make no interface call
// per posting; a postingsIter value is reusable (reset) so steady-state queries
// do not allocate. Usage: for p.Next() { p.At(), p.TF() }; Seek(d) moves to
// the first doc >= d. Err reports decoding errors (a sealed segment is
// checksummed on load, so it is nil unless memory was damaged).
type postingsIter struct {
	mem     *memTerm
	arena   *postArena
	data    []byte
	v1      bool // data is a version 1 segment's: metas hold (maxTF, minDL) only
	v3      bool // data is a version 3, 4 or 5 segment's: packed tfs
	pg      bool // data is a version 4 or 5 segment's: packed gaps
	v4      bool // data is a version 4 segment's: lengths in the blocks
	single  bool // a version 3 term of one block: no meta, c and last hold it
	c       corners
	last    uint32
	nBlocks int
	df      int
	lo, hi  uint32

	bi      int // current block
	decoded int // block whose docs/tfs are loaded, -1 none
	docs    []uint32
	tfs     []uint32
	i       int // position in docs, -1 before the first Next
	cur     uint32
	err     error
	// tfData is the undecoded tf section of the loaded sealed block; tfs
	// holds its values once TF has asked for one (tfDone). A probe that
	// misses, or a block skipped after its docs were read, never decodes
	// its tfs: half of a block's varints.
	tfData []byte
	tfDone bool
	// lens holds the loaded version 4 block's lengths once blockLens has
	// asked for them (lensDone).
	lens     []uint32
	lensDone bool

	docBuf [blockSize]uint32
	tfBuf  [blockSize]uint32
	lenBuf [blockSize]uint32
}

func (p *postingsIter) reset(ti *termInfo) {
	p.mem, p.arena, p.data, p.df, p.lo, p.hi, p.v1 = ti.mem, ti.arena, ti.data, int(ti.df), ti.lo, ti.hi, ti.v1
	p.v3, p.pg, p.v4, p.single, p.c, p.last = ti.v3, ti.pg, ti.v4, ti.single, ti.c, ti.last
	p.lens, p.lensDone = nil, false
	p.nBlocks = (p.df + blockSize - 1) / blockSize
	p.bi, p.decoded, p.docs, p.tfs, p.i, p.cur, p.err = 0, -1, nil, nil, -1, 0, nil
	p.tfData, p.tfDone = nil, false
	if p.df == 0 {
		p.cur = endDoc
		p.bi = p.nBlocks
	}
}

// meta returns the metadata of block bi.
func (p *postingsIter) meta(bi int) blockMeta {
	if p.mem != nil {
		return *p.mem.block(p.arena, bi)
	}
	if p.single {
		return blockMeta{last: p.last, maxTF: p.c.a.tf, minDL: p.c.b.dl}
	}
	b := p.data[bi*blockMetaSize:]
	m := blockMeta{
		last: binary.LittleEndian.Uint32(b),
		off:  binary.LittleEndian.Uint32(b[4:]),
	}
	if p.v1 {
		m.maxTF, m.minDL = binary.LittleEndian.Uint32(b[8:]), binary.LittleEndian.Uint32(b[12:])
	} else {
		m.maxTF, m.minDL = cornerTF16(b[8:]), uint32(binary.LittleEndian.Uint16(b[14:]))
	}
	return m
}

// corners returns the bound corners of block bi and its last doc.
func (p *postingsIter) corners(bi int) (corners, uint32) {
	if p.single {
		return p.c, p.last
	}
	if p.mem != nil || p.v1 {
		m := p.meta(bi)
		c := tfdl{m.maxTF, m.minDL}
		return corners{c, c}, m.last
	}
	b := p.data[bi*blockMetaSize:]
	return decodeCorners(b), binary.LittleEndian.Uint32(b)
}

func (p *postingsIter) blockLast(bi int) uint32 {
	if p.mem != nil {
		return p.mem.block(p.arena, bi).last
	}
	if p.single {
		return p.last
	}
	return binary.LittleEndian.Uint32(p.data[bi*blockMetaSize:])
}

// load makes block bi current, positioned at its first posting.
func (p *postingsIter) load(bi int) {
	p.bi = bi
	p.i = 0
	if p.decoded == bi {
		p.cur = p.docs[0]
		return
	}
	p.decoded = bi
	n := blockSize
	if bi == p.nBlocks-1 {
		n = p.df - bi*blockSize
	}
	if p.mem != nil {
		p.mem.loadBlock(p.arena, bi, n, p.docBuf[:n], p.tfBuf[:n])
		p.docs, p.tfs, p.tfDone = p.docBuf[:n], p.tfBuf[:n], true
		p.cur = p.docs[0]
		return
	}
	var prev uint32
	if bi > 0 {
		prev = p.blockLast(bi - 1)
	}
	off := 0
	if !p.single {
		off = p.nBlocks*blockMetaSize + int(binary.LittleEndian.Uint32(p.data[bi*blockMetaSize+4:]))
	}
	if off > len(p.data) {
		p.fail()
		return
	}
	buf := p.data[off:]
	docs, tfs := p.docBuf[:n], p.tfBuf[:n]
	var pos int
	if p.pg {
		pos = decodeDocsV4(buf, docs, prev, bi == 0, p.lo, p.hi)
	} else {
		pos = decodeDocs(buf, docs, prev, bi == 0, p.lo, p.hi)
	}
	if pos < 0 {
		p.fail()
		return
	}
	if docs[n-1] != p.blockLast(bi) {
		p.fail()
		return
	}
	p.docs, p.tfs = docs, tfs
	p.tfData, p.tfDone = buf[pos:], false
	p.lens, p.lensDone = nil, false
	p.cur = docs[0]
}

// blockLens returns the lengths of the loaded block's documents, nil
// unless the segment is version 4 (the caller reads the length column).
// A damaged section (only possible in memory: files are checksummed) sets
// Err and reads as zeros.
func (p *postingsIter) blockLens() []uint32 {
	if !p.v4 || p.mem != nil {
		return nil
	}
	if !p.lensDone {
		p.lensDone = true
		n := len(p.docs)
		p.lens = p.lenBuf[:n]
		t := p.tfData
		if len(t) == 0 || t[0] > 32 || packedTFsLen(n, uint(t[0])) > len(t) ||
			decodeLensV4(t[packedTFsLen(n, uint(t[0])):], p.lens) < 0 {
			clear(p.lens)
			p.err = ErrCorrupt
		}
	}
	return p.lens
}

// decodeTFs decodes the loaded sealed block's tfs. A damaged tf section
// (only possible in memory: files are checksummed) sets Err and reads as
// zeros, which score nothing; the search reports the error.
func (p *postingsIter) decodeTFs() {
	p.tfDone = true
	if p.v3 {
		if decodePackedTFs(p.tfData, p.tfs) < 0 {
			clear(p.tfs)
			p.err = ErrCorrupt
		}
		return
	}
	if decodeUvarints(p.tfData, p.tfs) < 0 {
		clear(p.tfs)
		p.err = ErrCorrupt
	}
}

func (p *postingsIter) fail() {
	p.err = ErrCorrupt
	p.cur = endDoc
	p.bi = p.nBlocks
	p.docs, p.tfs, p.lens = nil, nil, nil
	p.decoded = -1
}

// Next advances to the next posting and reports whether there is one.
func (p *postingsIter) Next() bool {
	if p.cur == endDoc && p.i >= 0 {
		return false
	}
	if p.i >= 0 && p.i+1 < len(p.docs) && p.decoded == p.bi {
		p.i++
		p.cur = p.docs[p.i]
		return true
	}
	nb := p.bi
	if p.i >= 0 {
		nb++
	}
	if nb >= p.nBlocks {
		p.cur, p.i = endDoc, 0
		return false
	}
	p.load(nb)
	return p.cur != endDoc
}

// seekNear is how many postings ahead of the current one Seek scans
// before it searches the block.
const seekNear = 8

// Seek advances to the first posting >= d (never backwards) and reports
// whether there is one.
func (p *postingsIter) Seek(d uint32) bool {
	if p.i >= 0 && p.cur >= d {
		return p.cur != endDoc
	}
	// skip whole blocks using the block metadata
	bi := p.bi
	for bi < p.nBlocks && p.blockLast(bi) < d {
		bi++
	}
	if bi >= p.nBlocks {
		p.bi, p.cur, p.i = p.nBlocks, endDoc, 0
		return false
	}
	if bi != p.bi || p.decoded != bi || p.i < 0 {
		p.load(bi)
		if p.cur == endDoc {
			return false
		}
	}
	// Binary search inside the block (its last doc is >= d), branch-free
	// (the halving step compiles to a conditional move): the probes of a
	// filter-driven or non-essential seek land anywhere in the block, so
	// a branch per step mispredicts half the time. Profile lesson (agent
	// filter, mid and common terms, 200k records): Seek was 56% of
	// filterDriven.
	docs := p.docs
	b := p.i
	if e := b + seekNear; e < len(docs) && docs[e] >= d {
		// The target is among the next seekNear postings: count those
		// below d, compares that do not wait on each other (each step of
		// the binary search below waits on the last one's load).
		// Profile lesson (Zipf 200k, common/agent, filter-driven): the
		// search's compare line was 780 ms of Seek's 2.81 s, most seeks
		// landing a few postings ahead.
		w := docs[b:e:e]
		c := 0
		for _, v := range w {
			c -= int((int64(v) - int64(d)) >> 63)
		}
		b += c
		p.i = b
		p.cur = docs[b]
		return true
	}
	n := len(docs) - b
	for n > 1 {
		half := n >> 1
		// -1 when docs[b+half] < d, else 0 (ids fit in 32 bits)
		lt := int((int64(docs[b+half]) - int64(d)) >> 63)
		b += half & lt
		n -= half
	}
	if docs[b] < d {
		b++
	}
	p.i = b
	p.cur = docs[b]
	return true
}

// shallowBlock is shallow without reading the metadata: it returns the
// index of the block that may contain d, or -1 past the last block.
func (p *postingsIter) shallowBlock(d uint32) int {
	if p.i >= 0 && p.decoded == p.bi && p.bi < p.nBlocks && p.cur >= d && p.cur != endDoc {
		return p.bi
	}
	bi := p.bi
	for bi < p.nBlocks && p.blockLast(bi) < d {
		bi++
	}
	if bi >= p.nBlocks {
		return -1
	}
	if bi != p.bi {
		p.bi = bi
		p.i = -1
	}
	return bi
}

// At returns the current doc id (endDoc when exhausted).
func (p *postingsIter) At() uint32 { return p.cur }

// TF returns the term frequency of the current posting.
func (p *postingsIter) TF() uint32 {
	if !p.tfDone {
		p.decodeTFs()
	}
	return p.tfs[p.i]
}

// ProbeTF is TF for a probe (a seek that lands on one posting of a
// block): a version 3 block's tf is read alone, the block's other tfs
// left packed. Profile lesson (Zipf 200k, common/agent): the
// filter-driven loop's probes decoded a block's 128 tfs for one or two
// of them, a fifth of its time.
func (p *postingsIter) ProbeTF() uint32 {
	if !p.tfDone && p.v3 {
		if tf, ok := packedTF(p.tfData, len(p.docs), p.i); ok {
			return tf
		}
	}
	return p.TF()
}

// Err returns the first decoding error.
func (p *postingsIter) Err() error { return p.err }

func uvarint32(b []byte) (uint32, int) {
	var x uint32
	var s uint
	for i := 0; i < len(b) && i < 5; i++ {
		c := b[i]
		if c < 0x80 {
			if i == 4 && c > 0xf {
				return 0, -1
			}
			return x | uint32(c)<<s, i + 1
		}
		x |= uint32(c&0x7f) << s
		s += 7
	}
	return 0, 0
}
