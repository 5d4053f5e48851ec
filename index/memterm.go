package index

import (
	"math/bits"
	"slices"
)

// The mutable segment's postings: memTerms in a slab, their postings in a
// pointer-free arena (the build side; postings.go reads them).

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
