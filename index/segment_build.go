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
}

// addTerm appends one term's postings (terms must come in sorted order).
func (b *segBuilder) addTerm(t string, docs, tfs []uint32) {
	if len(docs) == 0 {
		return
	}
	start := len(b.posts)
	nb := (len(docs) + blockSize - 1) / blockSize
	metaStart := start
	// metas are all written below; reserve room for them and ~3 bytes a
	// posting without a temporary slice
	b.posts = slices.Grow(b.posts, nb*blockMetaSize+3*len(docs))
	b.posts = b.posts[:start+nb*blockMetaSize]
	dataStart := len(b.posts)
	var prev uint32
	maxTF, minDL := uint32(0), ^uint32(0)
	for bi := 0; bi < nb; bi++ {
		lo := bi * blockSize
		hi := min(lo+blockSize, len(docs))
		off := uint32(len(b.posts) - dataStart)
		for j := lo; j < hi; j++ {
			b.posts = binary.AppendUvarint(b.posts, uint64(docs[j]-prev))
			prev = docs[j]
		}
		for j := lo; j < hi; j++ {
			b.posts = binary.AppendUvarint(b.posts, uint64(tfs[j]))
		}
		dls := b.dls[:hi-lo]
		for j, d := range docs[lo:hi] {
			dls[j] = b.lens[d-b.lo]
		}
		c := blockCorners(tfs[lo:hi], dls)
		mb := b.posts[metaStart+bi*blockMetaSize:]
		binary.LittleEndian.PutUint32(mb, docs[hi-1])
		binary.LittleEndian.PutUint32(mb[4:], off)
		putCorner16(mb[8:], c.a.tf)
		putCorner16(mb[10:], c.a.dl)
		putCorner16(mb[12:], c.b.tf)
		putCorner16(mb[14:], c.b.dl)
		maxTF, minDL = max(maxTF, c.a.tf), min(minDL, c.b.dl)
	}
	var e [termEntrySize]byte
	binary.LittleEndian.PutUint32(e[0:], uint32(len(b.strs)))
	binary.LittleEndian.PutUint32(e[4:], uint32(len(t)))
	binary.LittleEndian.PutUint32(e[8:], uint32(len(docs)))
	binary.LittleEndian.PutUint32(e[12:], maxTF)
	binary.LittleEndian.PutUint32(e[16:], minDL)
	binary.LittleEndian.PutUint64(e[20:], uint64(start))
	b.table = append(b.table, e[:]...)
	b.strs = append(b.strs, t...)
	b.nTerm++
}

// finish assembles the file image.
func (b *segBuilder) finish() ([]byte, error) {
	n := int(b.hi - b.lo + 1)
	out := make([]byte, 0, segHeaderSize+len(b.posts)+len(b.table)+len(b.strs)+n*12+1024)
	out = append(out, segMagic...)
	out = binary.LittleEndian.AppendUint32(out, segVersion)
	out = binary.LittleEndian.AppendUint32(out, 0)
	out = binary.LittleEndian.AppendUint32(out, b.lo)
	out = binary.LittleEndian.AppendUint32(out, b.hi)
	out = binary.LittleEndian.AppendUint32(out, b.nDocs)
	out = binary.LittleEndian.AppendUint32(out, 0)
	var offs [8]uint64
	b.present.RunOptimize()
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
