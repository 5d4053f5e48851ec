package index

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

// Block decoding. Profile lesson (Zipf 200k, common terms, agent filter):
// the filter-driven loop's probes decode nearly every block of a common
// term (a few filter documents fall in each), and the decoder's loop, a
// branch per byte and two range checks per id, was 60% of its seeks.
// Dense terms' gaps and most tfs are one-byte varints: eight of them are
// read as one word, and the ids are checked once a block (gaps of at
// least 1 keep them increasing, so the first and the last bound them).

// oneByteMask tests eight bytes for a varint continuation bit.
const oneByteMask = 0x8080808080808080

// hasZeroByte reports whether any of w's bytes, all below 0x80, is zero.
func hasZeroByte(w uint64) bool {
	return (w-0x0101010101010101)&^w&oneByteMask != 0
}

// decodeDocs decodes len(docs) doc-id gaps from buf into docs, the ids
// following prev; the first gap may be 0 when firstZero is set (block 0
// of a term holding id 0). It returns the bytes read, or -1 when buf is
// damaged: a bad varint, a zero gap elsewhere, an id outside [lo, hi].
func decodeDocs(buf []byte, docs []uint32, prev uint32, firstZero bool, lo, hi uint32) int {
	acc := uint64(prev)
	pos, j, n := 0, 0, len(docs)
	bad := false
	for j < n {
		if j+8 <= n && pos+8 <= len(buf) {
			if w := binary.LittleEndian.Uint64(buf[pos:]); w&oneByteMask == 0 {
				z := w
				if j == 0 && firstZero {
					z |= 1 // the first gap may be 0
				}
				bad = bad || hasZeroByte(z)
				for k := 0; k < 8; k++ {
					acc += (w >> (8 * k)) & 0x7f
					docs[j+k] = uint32(acc)
				}
				j, pos = j+8, pos+8
				continue
			}
		}
		var v uint32
		if pos < len(buf) && buf[pos] < 0x80 {
			v = uint32(buf[pos])
			pos++
		} else {
			var k int
			if v, k = uvarint32(buf[pos:]); k <= 0 {
				return -1
			}
			pos += k
		}
		bad = bad || (v == 0 && (j > 0 || !firstZero))
		acc += uint64(v)
		docs[j] = uint32(acc)
		j++
	}
	if bad || acc > uint64(hi) || (n > 0 && docs[0] < lo) {
		return -1
	}
	return pos
}

// decodeUvarints decodes len(out) varints from buf into out; it returns
// the bytes read, or -1 on a bad varint.
func decodeUvarints(buf []byte, out []uint32) int {
	pos, j, n := 0, 0, len(out)
	for j < n {
		if j+8 <= n && pos+8 <= len(buf) {
			if w := binary.LittleEndian.Uint64(buf[pos:]); w&oneByteMask == 0 {
				for k := 0; k < 8; k++ {
					out[j+k] = uint32(w>>(8*k)) & 0x7f
				}
				j, pos = j+8, pos+8
				continue
			}
		}
		if pos < len(buf) && buf[pos] < 0x80 {
			out[j] = uint32(buf[pos])
			pos++
			j++
			continue
		}
		v, k := uvarint32(buf[pos:])
		if k <= 0 {
			return -1
		}
		out[j] = v
		pos += k
		j++
	}
	return pos
}

// Version 3 blocks store their tfs bit-packed: a width byte w, the bits
// of the block's largest tf-1, then each tf-1 in w bits, least
// significant first, in ceil(n*w/8) bytes. Measured (Zipf 200k, session
// context): 86% of tfs are 1 and most blocks need 0-2 bits a tf, so the
// tfs took 1.67 MB where one varint each took 9.74 MB (27% of the
// index). A tf of 0 (never written: a posting has tf >= 1) wraps to
// 2^32-1 and back, so every uint32 round-trips.

// appendPackedTFs appends tfs in the version 3 form.
func appendPackedTFs(dst []byte, tfs []uint32) []byte {
	var or uint32
	for _, tf := range tfs {
		or |= tf - 1
	}
	w := uint(bits.Len32(or))
	dst = append(dst, byte(w))
	if w == 0 {
		return dst
	}
	var acc uint64
	var nb uint
	for _, tf := range tfs {
		acc |= uint64(tf-1) << nb
		nb += w
		for nb >= 8 {
			dst = append(dst, byte(acc))
			acc >>= 8
			nb -= 8
		}
	}
	if nb > 0 {
		dst = append(dst, byte(acc))
	}
	return dst
}

// packedTFsLen returns the bytes a packed block of n tfs of width w takes.
func packedTFsLen(n int, w uint) int { return 1 + (n*int(w)+7)/8 }

// decodePackedTFs decodes len(out) tfs written by appendPackedTFs; it
// returns the bytes read, or -1 when buf is damaged (a width above 32, too
// few bytes). Where eight bytes remain past a value's first byte it reads
// them as one word (w <= 32 bits plus a shift of at most 7 fit in it).
func decodePackedTFs(buf []byte, out []uint32) int { return decodePackedBase(buf, out, 1) }

// packedTF returns the j-th tf of a block packed by appendPackedTFs
// holding n tfs, without decoding the others; ok is false when buf is
// damaged (decodePackedTFs then reports it).
func packedTF(buf []byte, n, j int) (uint32, bool) {
	if len(buf) == 0 || buf[0] > 32 || j >= n {
		return 0, false
	}
	w := uint(buf[0])
	if w == 0 {
		return 1, true
	}
	if packedTFsLen(n, w) > len(buf) {
		return 0, false
	}
	data := buf[1:packedTFsLen(n, w)]
	bit := uint(j) * w
	if int(bit>>3)+8 <= len(data) {
		return uint32(binary.LittleEndian.Uint64(data[bit>>3:])>>(bit&7)&(uint64(1)<<w-1)) + 1, true
	}
	x, from := tailWord(data)
	return uint32(x>>(bit-from)&(uint64(1)<<w-1)) + 1, true
}

// Version 4 blocks store every column bit-packed: the doc gaps, the tfs
// (as version 3) and the documents' lengths, so scoring a block reads its
// lengths from the block, in order, and not from the length column at
// random. appendPackedBase packs v-base of each value in w bits (w the
// bits of the largest) after a width byte; the caller writes base.
func appendPackedBase(dst []byte, vals []uint32, base uint32) []byte {
	var or uint32
	for _, v := range vals {
		or |= v - base
	}
	w := uint(bits.Len32(or))
	dst = append(dst, byte(w))
	if w == 0 {
		return dst
	}
	var acc uint64
	var nb uint
	for _, v := range vals {
		acc |= uint64(v-base) << nb
		nb += w
		for nb >= 8 {
			dst = append(dst, byte(acc))
			acc >>= 8
			nb -= 8
		}
	}
	if nb > 0 {
		dst = append(dst, byte(acc))
	}
	return dst
}

// decodePackedBase decodes len(out) values written by appendPackedBase
// with base; it returns the bytes read, or -1 when buf is damaged (a
// width above 32, too few bytes). Each value is one unaligned word read,
// a shift and a mask: no branch on the data.
func decodePackedBase(buf []byte, out []uint32, base uint32) int {
	if len(buf) == 0 {
		return -1
	}
	w := uint(buf[0])
	if w > 32 {
		return -1
	}
	n := len(out)
	size := packedTFsLen(n, w)
	if size > len(buf) {
		return -1
	}
	if w == 0 {
		for j := range out {
			out[j] = base
		}
		return 1
	}
	unpack(buf[1:size], out, w, base)
	return size
}

// unpack reads len(out) values of w bits (1 <= w <= 32) from data, each
// plus base. Where eight bytes remain past a group's first byte they are
// read as one word holding eight values (w <= 7), four (w <= 14), two
// (w <= 28) or one: no branch on the data. Profile lesson (Zipf 200k,
// common/agent, version 4): one word read a value made the filter-driven
// probes' block decoding 20% slower than version 3's one-byte varints
// read eight a word.
func unpack(data []byte, out []uint32, w uint, base uint32) {
	if unpackAt(unpackTier, data, out, w, base) {
		return
	}
	unpackGo(data, out, w, base)
}

// unpackGo is unpack's Go loops (every platform; the kernels' reference).
func unpackGo(data []byte, out []uint32, w uint, base uint32) {
	mask := uint64(1)<<w - 1
	bit := uint(0)
	j, n := 0, len(out)
	last := len(data) - 8 // the last byte offset a word can be read from
	switch {
	case w <= 7:
		w2, w3, w4 := 2*w, 3*w, 4*w
		for ; j+8 <= n && int(bit>>3) <= last; j += 8 {
			x := binary.LittleEndian.Uint64(data[bit>>3:]) >> (bit & 7)
			y := x >> w4
			o := out[j : j+8 : j+8]
			o[0] = uint32(x&mask) + base
			o[1] = uint32(x>>w&mask) + base
			o[2] = uint32(x>>w2&mask) + base
			o[3] = uint32(x>>w3&mask) + base
			o[4] = uint32(y&mask) + base
			o[5] = uint32(y>>w&mask) + base
			o[6] = uint32(y>>w2&mask) + base
			o[7] = uint32(y>>w3&mask) + base
			bit += 8 * w
		}
	case w <= 14:
		w2, w3 := 2*w, 3*w
		for ; j+4 <= n && int(bit>>3) <= last; j += 4 {
			x := binary.LittleEndian.Uint64(data[bit>>3:]) >> (bit & 7)
			o := out[j : j+4 : j+4]
			o[0] = uint32(x&mask) + base
			o[1] = uint32(x>>w&mask) + base
			o[2] = uint32(x>>w2&mask) + base
			o[3] = uint32(x>>w3&mask) + base
			bit += 4 * w
		}
	case w <= 28:
		for ; j+2 <= n && int(bit>>3) <= last; j += 2 {
			x := binary.LittleEndian.Uint64(data[bit>>3:]) >> (bit & 7)
			out[j] = uint32(x&mask) + base
			out[j+1] = uint32(x>>w&mask) + base
			bit += 2 * w
		}
	}
	for ; j < n && int(bit>>3) <= last; j++ {
		out[j] = uint32(binary.LittleEndian.Uint64(data[bit>>3:])>>(bit&7)&mask) + base
		bit += w
	}
	if j < n { // the last values, from one word: the data's last 8 bytes
		x, from := tailWord(data)
		for ; j < n; j++ {
			out[j] = uint32(x>>(bit-from)&mask) + base
			bit += w
		}
	}
}

// tailWord returns the last 8 bytes of data as a word (data padded with
// zeros when shorter) and the bit offset in data of its first bit. Profile
// lesson (Zipf 200k, common/agent, version 4): the last values of a block
// were each copied into a padded word, a call and a stalled load a value,
// a third of the gap decoding.
func tailWord(data []byte) (uint64, uint) {
	if len(data) >= 8 {
		return binary.LittleEndian.Uint64(data[len(data)-8:]), uint(len(data)-8) * 8
	}
	var tmp [8]byte
	copy(tmp[:], data)
	return binary.LittleEndian.Uint64(tmp[:]), 0
}

// unpackGaps is unpack for a block's doc gaps (stored less one): each
// value is the running sum acc of the gaps so far, in the same pass
// (a separate prefix-sum pass over the block cost a tenth of the
// decoding); it returns the last sum.
func unpackGaps(data []byte, out []uint32, w uint, acc uint64) uint64 {
	if last, ok := unpackGapsAt(unpackTier, data, out, w, acc); ok {
		return last
	}
	return unpackGapsGo(data, out, w, acc)
}

// unpackGapsGo is unpackGaps's Go loops (every platform; the kernels'
// reference).
func unpackGapsGo(data []byte, out []uint32, w uint, acc uint64) uint64 {
	mask := uint64(1)<<w - 1
	bit := uint(0)
	j, n := 0, len(out)
	last := len(data) - 8
	switch {
	case w == 0:
		for ; j < n; j++ {
			acc++
			out[j] = uint32(acc)
		}
		return acc
	case w <= 7:
		// the shifts are independent of each other and of acc: only
		// the adds chain
		w2, w3, w4 := 2*w, 3*w, 4*w
		for ; j+8 <= n && int(bit>>3) <= last; j += 8 {
			x := binary.LittleEndian.Uint64(data[bit>>3:]) >> (bit & 7)
			y := x >> w4
			g0, g1, g2, g3 := x&mask+1, x>>w&mask+1, x>>w2&mask+1, x>>w3&mask+1
			g4, g5, g6, g7 := y&mask+1, y>>w&mask+1, y>>w2&mask+1, y>>w3&mask+1
			o := out[j : j+8 : j+8]
			acc += g0
			o[0] = uint32(acc)
			acc += g1
			o[1] = uint32(acc)
			acc += g2
			o[2] = uint32(acc)
			acc += g3
			o[3] = uint32(acc)
			acc += g4
			o[4] = uint32(acc)
			acc += g5
			o[5] = uint32(acc)
			acc += g6
			o[6] = uint32(acc)
			acc += g7
			o[7] = uint32(acc)
			bit += 8 * w
		}
	case w <= 14:
		w2, w3 := 2*w, 3*w
		for ; j+4 <= n && int(bit>>3) <= last; j += 4 {
			x := binary.LittleEndian.Uint64(data[bit>>3:]) >> (bit & 7)
			g0, g1, g2, g3 := x&mask+1, x>>w&mask+1, x>>w2&mask+1, x>>w3&mask+1
			o := out[j : j+4 : j+4]
			acc += g0
			o[0] = uint32(acc)
			acc += g1
			o[1] = uint32(acc)
			acc += g2
			o[2] = uint32(acc)
			acc += g3
			o[3] = uint32(acc)
			bit += 4 * w
		}
	}
	for ; j < n && int(bit>>3) <= last; j++ {
		acc += binary.LittleEndian.Uint64(data[bit>>3:])>>(bit&7)&mask + 1
		out[j] = uint32(acc)
		bit += w
	}
	if j < n {
		x, from := tailWord(data)
		for ; j < n; j++ {
			acc += x>>(bit-from)&mask + 1
			out[j] = uint32(acc)
			bit += w
		}
	}
	return acc
}

// decodeDocsV4 decodes a version 4 block's doc ids into docs: the first
// id's gap from prev as a uvarint (0 only in block 0, firstZero), then
// len(docs)-1 gaps less one packed by appendPackedBase (base 1, so every
// later gap is at least 1 by construction). It returns the bytes read, or
// -1 when buf is damaged or an id falls outside [lo, hi].
func decodeDocsV4(buf []byte, docs []uint32, prev uint32, firstZero bool, lo, hi uint32) int {
	g, pos := uvarint32(buf)
	if pos <= 0 || (g == 0 && !firstZero) {
		return -1
	}
	acc := uint64(prev) + uint64(g)
	docs[0] = uint32(acc)
	if acc < uint64(lo) || acc > uint64(hi) || pos >= len(buf) || buf[pos] > 32 {
		return -1
	}
	w := uint(buf[pos])
	size := packedTFsLen(len(docs)-1, w)
	if pos+size > len(buf) {
		return -1
	}
	if acc = unpackGaps(buf[pos+1:pos+size], docs[1:], w, acc); acc > uint64(hi) {
		return -1
	}
	return pos + size
}

// appendBlockV5 appends one version 5 block: the doc ids (the first as a
// gap from prev, the others' gaps less one packed) and the tfs; no
// lengths (scoring reads them from the one-byte length column). Measured
// (Zipf 200k, session context): version 4's lengths in the blocks took
// ~7.8 bits a posting, 9.5 MB of 33.9.
func appendBlockV5(dst []byte, docs, tfs []uint32, prev uint32) []byte {
	dst = binary.AppendUvarint(dst, uint64(docs[0]-prev))
	var gaps [blockSize]uint32
	for j := 1; j < len(docs); j++ {
		gaps[j-1] = docs[j] - docs[j-1]
	}
	dst = appendPackedBase(dst, gaps[:len(docs)-1], 1)
	return appendPackedTFs(dst, tfs)
}

// appendBlockV4 appends one version 4 block: a version 5 block, then the
// lengths (their least as a uvarint, then each less it, packed).
func appendBlockV4(dst []byte, docs, tfs, dls []uint32, prev uint32) []byte {
	dst = appendBlockV5(dst, docs, tfs, prev)
	base := slices.Min(dls)
	dst = binary.AppendUvarint(dst, uint64(base))
	return appendPackedBase(dst, dls, base)
}

// decodeLensV4 decodes the lengths section of a version 4 block holding
// len(out) postings (it follows the tfs); it returns the bytes read or -1.
func decodeLensV4(buf []byte, out []uint32) int {
	base, pos := uvarint32(buf)
	if pos <= 0 {
		return -1
	}
	k := decodePackedBase(buf[pos:], out, base)
	if k < 0 {
		return -1
	}
	return pos + k
}
