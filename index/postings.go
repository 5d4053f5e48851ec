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

// memTerm holds the postings of one term in the mutable segment: (doc, tf)
// pairs interleaved in one array, the block metadata maintained as
// documents are appended. Most terms of a mutable segment have a handful of
// postings: the first block's metadata lives inline and memTerms live in
// one slab (memSeg.slab), so a new term costs one small allocation (its
// pairs) instead of four, and the GC has fewer objects to scan.
type memTerm struct {
	post   []uint32    // doc0, tf0, doc1, tf1, ...
	first  blockMeta   // block 0
	blocks []blockMeta // blocks 1..
}

func (t *memTerm) df() int { return len(t.post) / 2 }

// block returns the metadata of block bi.
func (t *memTerm) block(bi int) *blockMeta {
	if bi == 0 {
		return &t.first
	}
	return &t.blocks[bi-1]
}

func (t *memTerm) nBlocks() int {
	return (t.df() + blockSize - 1) / blockSize
}

func (t *memTerm) add(doc, tf, dl uint32) {
	switch n := t.df(); {
	case n == 0:
		t.first = blockMeta{last: doc, maxTF: tf, minDL: dl}
	case n%blockSize == 0:
		t.blocks = append(t.blocks, blockMeta{last: doc, maxTF: tf, minDL: dl})
	default:
		b := t.block(n / blockSize)
		b.last = doc
		b.maxTF = max(b.maxTF, tf)
		b.minDL = min(b.minDL, dl)
	}
	t.post = append(t.post, doc, tf)
}

// termInfo is what a segment knows about one term without decoding it.
type termInfo struct {
	df     uint32
	maxTF  uint32 // over the whole term: the term-level upper bound
	minDL  uint32
	mem    *memTerm // mutable segment
	data   []byte   // sealed segment: block metas followed by block data
	lo, hi uint32   // sealed segment id range: decoded ids are checked against it
}

// Postings iterates over one term's postings in one segment, in increasing
// doc order. It is a concrete type so scoring loops make no interface call
// per posting; a Postings value is reusable (reset) so steady-state queries
// do not allocate. Usage: for p.Next() { p.At(), p.TF() }; Seek(d) moves to
// the first doc >= d. Err reports decoding errors (a sealed segment is
// checksummed on load, so it is nil unless memory was damaged).
type Postings struct {
	mem     *memTerm
	data    []byte
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

	docBuf [blockSize]uint32
	tfBuf  [blockSize]uint32
}

func (p *Postings) reset(ti *termInfo) {
	p.mem, p.data, p.df, p.lo, p.hi = ti.mem, ti.data, int(ti.df), ti.lo, ti.hi
	p.nBlocks = (p.df + blockSize - 1) / blockSize
	p.bi, p.decoded, p.docs, p.tfs, p.i, p.cur, p.err = 0, -1, nil, nil, -1, 0, nil
	if p.df == 0 {
		p.cur = endDoc
		p.bi = p.nBlocks
	}
}

// meta returns the metadata of block bi.
func (p *Postings) meta(bi int) blockMeta {
	if p.mem != nil {
		return *p.mem.block(bi)
	}
	b := p.data[bi*blockMetaSize:]
	return blockMeta{
		last:  binary.LittleEndian.Uint32(b),
		off:   binary.LittleEndian.Uint32(b[4:]),
		maxTF: binary.LittleEndian.Uint32(b[8:]),
		minDL: binary.LittleEndian.Uint32(b[12:]),
	}
}

func (p *Postings) blockLast(bi int) uint32 {
	if p.mem != nil {
		return p.mem.block(bi).last
	}
	return binary.LittleEndian.Uint32(p.data[bi*blockMetaSize:])
}

// load makes block bi current, positioned at its first posting.
func (p *Postings) load(bi int) {
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
		pairs := p.mem.post[2*bi*blockSize : 2*(bi*blockSize+n)]
		for j := range n {
			p.docBuf[j], p.tfBuf[j] = pairs[2*j], pairs[2*j+1]
		}
		p.docs, p.tfs = p.docBuf[:n], p.tfBuf[:n]
		p.cur = p.docs[0]
		return
	}
	var prev uint32
	if bi > 0 {
		prev = p.blockLast(bi - 1)
	}
	off := p.nBlocks*blockMetaSize + int(binary.LittleEndian.Uint32(p.data[bi*blockMetaSize+4:]))
	if off > len(p.data) {
		p.fail()
		return
	}
	buf := p.data[off:]
	docs, tfs := p.docBuf[:n], p.tfBuf[:n]
	pos := 0
	for j := range docs {
		v, k := uvarint32(buf[pos:])
		if k <= 0 {
			p.fail()
			return
		}
		pos += k
		if (j > 0 || bi > 0) && v == 0 {
			p.fail() // ids must increase
			return
		}
		prev += v
		if prev < p.lo || prev > p.hi {
			p.fail()
			return
		}
		docs[j] = prev
	}
	if docs[n-1] != p.blockLast(bi) {
		p.fail()
		return
	}
	for j := range tfs {
		v, k := uvarint32(buf[pos:])
		if k <= 0 {
			p.fail()
			return
		}
		pos += k
		tfs[j] = v
	}
	p.docs, p.tfs = docs, tfs
	p.cur = docs[0]
}

func (p *Postings) fail() {
	p.err = ErrCorrupt
	p.cur = endDoc
	p.bi = p.nBlocks
	p.docs, p.tfs = nil, nil
	p.decoded = -1
}

// Next advances to the next posting and reports whether there is one.
func (p *Postings) Next() bool {
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

// Seek advances to the first posting >= d (never backwards) and reports
// whether there is one.
func (p *Postings) Seek(d uint32) bool {
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
	// binary search inside the block (the block's last doc is >= d)
	lo, hi := p.i, len(p.docs)-1
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if p.docs[m] < d {
			lo = m + 1
		} else {
			hi = m
		}
	}
	p.i = lo
	p.cur = p.docs[lo]
	return true
}

// shallow moves the block cursor (without decoding) to the block that may
// contain d and returns its metadata; ok is false past the last block.
// A later Seek(d' >= d) continues from there.
func (p *Postings) shallow(d uint32) (blockMeta, bool) {
	if p.i >= 0 && p.decoded == p.bi && p.bi < p.nBlocks && p.cur >= d && p.cur != endDoc {
		return p.meta(p.bi), true
	}
	bi := p.bi
	for bi < p.nBlocks && p.blockLast(bi) < d {
		bi++
	}
	if bi >= p.nBlocks {
		return blockMeta{}, false
	}
	if bi != p.bi {
		p.bi = bi
		p.i = -1 // not positioned: the next Seek loads the block
	}
	return p.meta(bi), true
}

// shallowBlock is shallow without reading the metadata: it returns the
// index of the block that may contain d, or -1 past the last block.
func (p *Postings) shallowBlock(d uint32) int {
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
func (p *Postings) At() uint32 { return p.cur }

// TF returns the term frequency of the current posting.
func (p *Postings) TF() uint32 { return p.tfs[p.i] }

// Err returns the first decoding error.
func (p *Postings) Err() error { return p.err }

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
