package index

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
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

// memTerm holds the postings of one term in the mutable segment, as
// (doc, tf) pairs, the first two in the memTerm itself and the others in
// chunks of the segment's postArena, the block metadata maintained as
// documents are appended. memTerms live in a chunked slab (memSeg.slab)
// and their postings in pointer-free arena pages, so adding a posting
// never allocates per term or copies a growing slice, and the GC does not
// scan the postings.
//
// Chunk sizes (in pairs) follow the posting count: 2, 4, 8, 16, 32, 64
// after the two inline postings (together block 0's 128 postings), then 128
// per chunk, so every block after the first is exactly one chunk, whose
// arena address is kept in its blockMeta.off (block 0's off is the address
// of its first chunk). Each chunk is followed by one word: the address of
// the next chunk (used to walk block 0).
//
// A memTerm is 64 bytes, one cache line of a slab chunk (slab chunks are
// large allocations, so line-aligned): at 56 bytes, three terms in eight
// straddled two lines in the fields a posting reads (tail, n, first), a
// second cold miss in the serial insert. Profile lesson (Zipf corpus,
// session context): a rare term's postings each cost a cold miss on the
// term and another on its last chunk (to write the posting, or the link to
// a new chunk); most terms of a segment have one or two postings (a rare
// word and the context its successor inherits), which the inline pairs
// hold without touching the arena.
//
// A memTerm holds no pointer, so the slab's chunks are not scanned by the
// collector: the metadata of blocks 1.. (off = the block's chunk address)
// lives in the arena's directories (arenaHalf.dirs), named by dir. Lesson
// (docs/benchmarks/ingest-context.md, sixth pass): with a slice header in
// each memTerm the collector scanned the whole slab, 7 MB a mutable
// segment of the Zipf corpus, at every cycle.
type memTerm struct {
	tail  uint32    // arena address of the current chunk
	n     uint32    // postings (df)
	first blockMeta // block 0
	inl   [2][2]uint32
	// dir is 0 while the term has one block, else 1 + the index of its
	// directory in its half's dirs << 1 | the half.
	dir uint32
	_   [20]byte // to the line's end
}

// memInline is the number of postings a memTerm holds itself.
const memInline = 2

func (t *memTerm) df() int { return int(t.n) }

// block returns the metadata of block bi; the term's blocks after the
// first are in a's directories.
func (t *memTerm) block(a *postArena, bi int) *blockMeta {
	if bi == 0 {
		return &t.first
	}
	d := t.dir - 1
	return &a.half[d&1].dirs[d>>1][bi-1]
}

// addBlock appends the metadata of a new block after the first, in half h
// of a.
func (t *memTerm) addBlock(a *postArena, h int, m blockMeta) {
	if t.dir == 0 {
		p := &a.half[h]
		p.dirs = append(p.dirs, nil)
		t.dir = uint32(len(p.dirs)-1)<<1 | uint32(h) + 1
	}
	d := t.dir - 1
	dir := &a.half[d&1].dirs[d>>1]
	*dir = append(*dir, m)
}

func (t *memTerm) nBlocks() int {
	return (t.df() + blockSize - 1) / blockSize
}

// chunkStart returns the index of the first posting of the chunk holding
// posting i (at least memInline), and that chunk's size in pairs.
func chunkStart(i uint32) (start, size uint32) {
	if i >= blockSize {
		return i - i%blockSize, blockSize
	}
	s := uint32(1) << (bits.Len32(i) - 1)
	return s, s
}

// add appends a posting; the term's chunks are in half h of a (the same
// for every call on t).
func (t *memTerm) add(a *postArena, h int, doc, tf, dl uint32) {
	n := t.n
	if n < memInline {
		t.inl[n] = [2]uint32{doc, tf}
	} else {
		start, size := chunkStart(n)
		if start == n { // new chunk
			addr := a.alloc(h, 2*size+1)
			if n == memInline {
				t.first.off = addr
			} else {
				_, psize := chunkStart(n - 1)
				a.word(t.tail + 2*psize)[0] = addr
			}
			t.tail = addr
		}
		w := a.word(t.tail + 2*(n-start))
		w[0], w[1] = doc, tf
	}
	switch {
	case n == 0:
		t.first = blockMeta{last: doc, maxTF: tf, minDL: dl}
	case n%blockSize == 0:
		t.addBlock(a, h, blockMeta{last: doc, off: t.tail, maxTF: tf, minDL: dl})
	default:
		b := t.block(a, int(n/blockSize))
		b.last = doc
		b.maxTF = max(b.maxTF, tf)
		b.minDL = min(b.minDL, dl)
	}
	t.n++
}

// loadBlock copies block bi (n postings) into docs and tfs.
func (t *memTerm) loadBlock(a *postArena, bi, n int, docs, tfs []uint32) {
	if bi > 0 {
		c := a.word(t.block(a, bi).off)[:2*n]
		for j := range n {
			docs[j], tfs[j] = c[2*j], c[2*j+1]
		}
		return
	}
	i := min(n, memInline)
	for j := range i {
		docs[j], tfs[j] = t.inl[j][0], t.inl[j][1]
	}
	addr := t.first.off
	for i < n {
		_, size := chunkStart(uint32(i))
		c := a.word(addr)[:2*size+1]
		k := min(int(size), n-i)
		for j := range k {
			docs[i+j], tfs[i+j] = c[2*j], c[2*j+1]
		}
		i += k
		addr = c[2*size]
	}
}

// appendPostings appends all of the term's postings to docs and tfs.
func (t *memTerm) appendPostings(a *postArena, docs, tfs []uint32) ([]uint32, []uint32) {
	for bi := range t.nBlocks() {
		n := min(blockSize, t.df()-bi*blockSize)
		lo := len(docs)
		docs, tfs = slices.Grow(docs, n)[:lo+n], slices.Grow(tfs, n)[:lo+n]
		t.loadBlock(a, bi, n, docs[lo:], tfs[lo:])
	}
	return docs, tfs
}

// postArena holds the mutable segment's postings in pointer-free pages,
// in two halves: the terms of even slots keep their postings in one, those
// of odd slots in the other, so that insert fills the two on two
// goroutines (each half is touched by one). An address is
// page<<arenaShift | offset, the page number's low bit naming the half; a
// chunk never straddles pages.
type postArena struct {
	half [2]arenaHalf
}

type arenaHalf struct {
	pages [][]uint32
	used  uint32 // words used in the last page
	// dirs holds the metadata of the blocks after the first of the terms
	// of this half that have more than one (memTerm.dir).
	dirs [][]blockMeta
}

const (
	arenaShift = 18 // 1 MiB pages; 2^14 pages (2^13 a half) address 64 GiB of postings
	arenaPage  = 1 << arenaShift
)

// alloc returns the address of words new words in half h (0 or 1).
func (a *postArena) alloc(h int, words uint32) uint32 {
	p := &a.half[h]
	if len(p.pages) == 0 || p.used+words > arenaPage {
		p.pages = append(p.pages, make([]uint32, arenaPage))
		p.used = 0
	}
	page := uint32(len(p.pages)-1)<<1 | uint32(h)
	addr := page<<arenaShift | p.used
	p.used += words
	return addr
}

// word returns the arena from addr to the end of its page.
func (a *postArena) word(addr uint32) []uint32 {
	page := addr >> arenaShift
	return a.half[page&1].pages[page>>1][addr&(arenaPage-1):]
}

// termInfo is what a segment knows about one term without decoding it.
type termInfo struct {
	df     uint32
	maxTF  uint32 // over the whole term: the term-level upper bound
	minDL  uint32
	mem    *memTerm // mutable segment
	arena  *postArena
	data   []byte // sealed segment: block metas followed by block data
	v1     bool   // data is a version 1 segment's
	lo, hi uint32 // sealed segment id range: decoded ids are checked against it
}

// corners0 returns the corners of the term's first block (for a term of
// one block, the term's own).
func (ti *termInfo) corners0() corners {
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

	docBuf [blockSize]uint32
	tfBuf  [blockSize]uint32
}

func (p *postingsIter) reset(ti *termInfo) {
	p.mem, p.arena, p.data, p.df, p.lo, p.hi, p.v1 = ti.mem, ti.arena, ti.data, int(ti.df), ti.lo, ti.hi, ti.v1
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
	off := p.nBlocks*blockMetaSize + int(binary.LittleEndian.Uint32(p.data[bi*blockMetaSize+4:]))
	if off > len(p.data) {
		p.fail()
		return
	}
	buf := p.data[off:]
	docs, tfs := p.docBuf[:n], p.tfBuf[:n]
	pos := decodeDocs(buf, docs, prev, bi == 0, p.lo, p.hi)
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
	p.cur = docs[0]
}

// decodeTFs decodes the loaded sealed block's tfs. A damaged tf section
// (only possible in memory: files are checksummed) sets Err and reads as
// zeros, which score nothing; the search reports the error.
func (p *postingsIter) decodeTFs() {
	p.tfDone = true
	if decodeUvarints(p.tfData, p.tfs) < 0 {
		clear(p.tfs)
		p.err = ErrCorrupt
	}
}

func (p *postingsIter) fail() {
	p.err = ErrCorrupt
	p.cur = endDoc
	p.bi = p.nBlocks
	p.docs, p.tfs = nil, nil
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
	b, n := p.i, len(docs)-p.i
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
