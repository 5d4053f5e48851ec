package index

import "encoding/binary"

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
