package codec

import "slices"

// appendDeltaUint64s appends vs as a delta list: the count, the first value,
// then each value minus the one before, all as uvarints.
//
// vs should be sorted ascending (record ids, posting lists): then every delta
// is small and most take one byte. Deltas are computed modulo 2^64, so an
// unsorted or repeating list still round-trips exactly; it only costs up to
// 10 bytes per out-of-order value. No input is an error.
func appendDeltaUint64s(dst []byte, vs []uint64) []byte {
	dst = AppendUvarint(dst, uint64(len(vs)))
	var prev uint64
	for _, v := range vs {
		dst = AppendUvarint(dst, v-prev)
		prev = v
	}
	return dst
}

// deltaUint64sSize is the exact number of bytes appendDeltaUint64s appends for vs.
func deltaUint64sSize(vs []uint64) int {
	n := UvarintLen(uint64(len(vs)))
	var prev uint64
	for _, v := range vs {
		n += UvarintLen(v - prev)
		prev = v
	}
	return n
}

// decodeDeltaUint64s decodes a delta list from the front of src, appends its
// values to dst (pass buf[:0] to reuse a buffer) and returns the extended
// slice and the bytes after the list. A count larger than the rest of src
// could hold is ErrCorrupt before anything is allocated; a list cut short is
// ErrTruncated. Offsets in errors are relative to the start of src.
func decodeDeltaUint64s(src []byte, dst []uint64) (vs []uint64, tail []byte, err error) {
	d := NewDecoder(src)
	d.Label("delta list count")
	n := d.Count(1)
	if d.err != nil {
		return dst, src, d.err
	}
	dst = slices.Grow(dst, n)
	d.Label("delta list value")
	var prev uint64
	for range n {
		// Inlined d.Uvarint: this loop runs once per posting.
		v, k, e := uvarint(d.b[d.off:])
		if e != nil {
			d.failAt(d.off, e)
			return dst, src, d.err
		}
		d.off += k
		prev += v
		dst = append(dst, prev)
	}
	return dst, src[d.off:], nil
}
