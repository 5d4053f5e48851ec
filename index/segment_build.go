package index

import (
	"encoding/binary"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/lazymem/lazymem/codec"
)

// segBuilder accumulates one sealed segment image.
type segBuilder struct {
	lo, hi  uint32
	lens    []uint32
	times   []int64
	present *roaring.Bitmap
	nDocs   uint32
	sumLen  uint64
	fields  fieldSet

	strs  []byte
	table []byte
	posts []byte
	nTerm int
	dls   [blockSize]uint32 // addTerm's scratch: a block's lengths
	ver   uint32            // the version to write; 0: segWriteVersion
}

// segWriteVersion is the version flushes and merges write. Tests set it
// to 2 to make the version 2 files a store may still hold.
var segWriteVersion uint32 = segVersion

// addTerm appends one term's postings (terms must come in sorted order).
func (b *segBuilder) addTerm(t string, docs, tfs []uint32) {
	if len(docs) == 0 {
		return
	}
	v3 := b.version() >= segVersion3
	v4 := b.version() == segVersion4
	v5 := b.version() >= segVersion5
	start := len(b.posts)
	nb := (len(docs) + blockSize - 1) / blockSize
	metaStart := start
	nMeta := nb
	if v3 && nb == 1 {
		nMeta = 0 // the term entry holds the one block's meta
	}
	// metas are all written below; reserve room for them and ~3 bytes a
	// posting without a temporary slice
	b.posts = slices.Grow(b.posts, nMeta*blockMetaSize+3*len(docs))
	b.posts = b.posts[:start+nMeta*blockMetaSize]
	dataStart := len(b.posts)
	var prev uint32
	maxTF, minDL := uint32(0), ^uint32(0)
	var c corners
	for bi := 0; bi < nb; bi++ {
		lo := bi * blockSize
		hi := min(lo+blockSize, len(docs))
		off := uint32(len(b.posts) - dataStart)
		dls := b.dls[:hi-lo]
		for j, d := range docs[lo:hi] {
			dls[j] = b.lens[d-b.lo]
		}
		switch {
		case v5:
			b.posts = appendBlockV5(b.posts, docs[lo:hi], tfs[lo:hi], prev)
			prev = docs[hi-1]
		case v4:
			b.posts = appendBlockV4(b.posts, docs[lo:hi], tfs[lo:hi], dls, prev)
			prev = docs[hi-1]
		case v3:
			for j := lo; j < hi; j++ {
				b.posts = binary.AppendUvarint(b.posts, uint64(docs[j]-prev))
				prev = docs[j]
			}
			b.posts = appendPackedTFs(b.posts, tfs[lo:hi])
		default:
			for j := lo; j < hi; j++ {
				b.posts = binary.AppendUvarint(b.posts, uint64(docs[j]-prev))
				prev = docs[j]
			}
			for j := lo; j < hi; j++ {
				b.posts = binary.AppendUvarint(b.posts, uint64(tfs[j]))
			}
		}
		c = blockCorners(tfs[lo:hi], dls)
		maxTF, minDL = max(maxTF, c.a.tf), min(minDL, c.b.dl)
		if nMeta == 0 {
			break
		}
		mb := b.posts[metaStart+bi*blockMetaSize:]
		binary.LittleEndian.PutUint32(mb, docs[hi-1])
		binary.LittleEndian.PutUint32(mb[4:], off)
		putCorners(mb[8:], c)
	}
	var e [termEntrySize]byte
	if v3 {
		putEntryV3(e[:], len(b.strs), t, docs[len(docs)-1], uint32(len(docs)), start)
		if nMeta == 0 {
			putCorners(e[12:], c)
		} else {
			binary.LittleEndian.PutUint32(e[12:], maxTF)
			binary.LittleEndian.PutUint32(e[16:], minDL)
		}
	} else {
		binary.LittleEndian.PutUint32(e[0:], uint32(len(b.strs)))
		binary.LittleEndian.PutUint32(e[4:], uint32(len(t)))
		binary.LittleEndian.PutUint32(e[8:], uint32(len(docs)))
		binary.LittleEndian.PutUint32(e[12:], maxTF)
		binary.LittleEndian.PutUint32(e[16:], minDL)
		binary.LittleEndian.PutUint64(e[20:], uint64(start))
	}
	b.table = append(b.table, e[:]...)
	b.strs = append(b.strs, t...)
	b.nTerm++
}

// addEncoded adds term t with its postings as a version 5 segment encoded
// them (data, as addTerm wrote it) and that segment's entry e, whose
// offsets into the strings and the postings are set to b's.
func (b *segBuilder) addEncoded(t []byte, e, data []byte) {
	start := len(b.posts)
	b.posts = append(b.posts, data...)
	var ne [termEntrySize]byte
	copy(ne[:], e)
	binary.LittleEndian.PutUint32(ne[0:], uint32(len(b.strs)))
	binary.LittleEndian.PutUint32(ne[20:], uint32(start))
	binary.LittleEndian.PutUint16(ne[24:], uint16(start>>32))
	b.table = append(b.table, ne[:]...)
	b.strs = append(b.strs, t...)
	b.nTerm++
}

// putEntryV3 writes a version 3 term entry's fields but its bound.
func putEntryV3(e []byte, strOff int, t string, last, df uint32, postOff int) {
	binary.LittleEndian.PutUint32(e[0:], uint32(strOff))
	binary.LittleEndian.PutUint32(e[4:], df)
	binary.LittleEndian.PutUint32(e[8:], last)
	binary.LittleEndian.PutUint32(e[20:], uint32(postOff))
	binary.LittleEndian.PutUint16(e[24:], uint16(postOff>>32))
	binary.LittleEndian.PutUint16(e[26:], uint16(min(len(t), strLenNext)))
}

// putCorners writes c as a version 2 block meta holds it (8 bytes).
func putCorners(b []byte, c corners) {
	putCorner16(b, c.a.tf)
	putCorner16(b[2:], c.a.dl)
	putCorner16(b[4:], c.b.tf)
	putCorner16(b[6:], c.b.dl)
}

// version is the format version the builder writes.
func (b *segBuilder) version() uint32 {
	if b.ver != 0 {
		return b.ver
	}
	return segWriteVersion
}

// finish assembles the file image.
func (b *segBuilder) finish() ([]byte, error) {
	n := int(b.hi - b.lo + 1)
	b.present.RunOptimize()
	// The image's exact size, so that it is built in one allocation: a
	// merge's image is the whole index's at 1M documents, and growing it
	// copied ~100 MB once more (the profile of a compaction's purge:
	// growslice and memmove 1.6 of its 2.2 s in finish).
	size := segHeaderSize + int(b.present.GetSerializedSizeInBytes()) + n*12 + fieldsSize(b.fields) +
		len(b.strs) + len(b.table) + len(b.posts) + 8*8 + codec.ChecksumSize + 4
	out := make([]byte, 0, size)
	out = append(out, segMagic...)
	out = binary.LittleEndian.AppendUint32(out, b.version())
	out = binary.LittleEndian.AppendUint32(out, 0)
	out = binary.LittleEndian.AppendUint32(out, b.lo)
	out = binary.LittleEndian.AppendUint32(out, b.hi)
	out = binary.LittleEndian.AppendUint32(out, b.nDocs)
	out = binary.LittleEndian.AppendUint32(out, 0)
	var offs [8]uint64
	offs[0] = uint64(len(out))
	pb, err := b.present.ToBytes()
	if err != nil {
		return nil, err
	}
	out = append(out, pb...)
	offs[1] = uint64(len(out))
	for _, l := range b.lens {
		out = binary.LittleEndian.AppendUint32(out, l)
	}
	offs[2] = uint64(len(out))
	for _, t := range b.times {
		out = binary.LittleEndian.AppendUint64(out, uint64(t))
	}
	offs[3] = uint64(len(out))
	if out, err = appendFields(out, b.fields); err != nil {
		return nil, err
	}
	offs[4] = uint64(len(out))
	out = append(out, b.strs...)
	offs[5] = uint64(len(out))
	out = append(out, b.table...)
	offs[6] = uint64(len(out))
	out = append(out, b.posts...)
	offs[7] = b.sumLen
	for _, o := range offs {
		out = binary.LittleEndian.AppendUint64(out, o)
	}
	out = codec.AppendChecksum(out, out)
	out = binary.LittleEndian.AppendUint32(out, segFooterMagic)
	return out, nil
}

// fieldsSize is the length appendFields gives fs (its bitmaps run-optimized).
func fieldsSize(fs fieldSet) int {
	n := 4
	for k, vals := range fs {
		n += 4 + len(k) + 4
		for v, bm := range vals {
			if !bm.IsEmpty() {
				bm.RunOptimize()
				n += 4 + len(v) + 4 + int(bm.GetSerializedSizeInBytes())
			}
		}
	}
	return n
}

func appendFields(out []byte, fs fieldSet) ([]byte, error) {
	keys := make([]string, 0, len(fs))
	for k := range fs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(keys)))
	for _, k := range keys {
		vals := make([]string, 0, len(fs[k]))
		for v, bm := range fs[k] {
			if !bm.IsEmpty() {
				vals = append(vals, v)
			}
		}
		slices.Sort(vals)
		out = appendStr(out, k)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(vals)))
		for _, v := range vals {
			out = appendStr(out, v)
			bm := fs[k][v]
			bm.RunOptimize()
			bb, err := bm.ToBytes()
			if err != nil {
				return nil, err
			}
			out = binary.LittleEndian.AppendUint32(out, uint32(len(bb)))
			out = append(out, bb...)
		}
	}
	return out, nil
}

func appendStr(out []byte, s string) []byte {
	out = binary.LittleEndian.AppendUint32(out, uint32(len(s)))
	return append(out, s...)
}
