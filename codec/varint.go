package codec

import (
	"encoding/binary"
	"math/bits"
)

// AppendUvarint appends the LEB128 encoding of v (7 bits a byte, low group
// first, high bit set on every byte but the last) and returns the extended
// buffer.
func AppendUvarint(dst []byte, v uint64) []byte { return binary.AppendUvarint(dst, v) }

// UvarintLen is the number of bytes AppendUvarint writes for v.
func UvarintLen(v uint64) int {
	// 1 byte per started group of 7 bits; v|1 makes 0 take one byte.
	return (bits.Len64(v|1) + 6) / 7
}

// decodeUvarint reads one uvarint from the front of src and returns it with
// the rest of src. It fails with ErrTruncated when src ends inside the varint
// and with ErrCorrupt when the varint overflows 64 bits or is not minimal
// (a redundant trailing zero group): every value has exactly one encoding,
// so a decoded record re-encodes to the same bytes.
func decodeUvarint(src []byte) (v uint64, tail []byte, err error) {
	v, n, e := uvarint(src)
	if e != nil {
		return 0, src, decodeErr("uvarint", 0, e)
	}
	return v, src[n:], nil
}

// unzigzag undoes the zig-zag mapping of signed varints (Decoder.Varint).
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// uvarint is the allocation-free core: it returns a bare sentinel so that hot
// loops decide themselves whether to build a DecodeError.
func uvarint(src []byte) (uint64, int, error) {
	// Fast path: one byte, the common case for lengths and counts.
	if len(src) > 0 && src[0] < 0x80 {
		return uint64(src[0]), 1, nil
	}
	// Two bytes: lengths 128..16383, most posting deltas.
	if len(src) > 1 && src[1] < 0x80 {
		if src[1] == 0 {
			return 0, 0, ErrCorrupt // non-minimal
		}
		return uint64(src[0]&0x7f) | uint64(src[1])<<7, 2, nil
	}
	v, n := binary.Uvarint(src)
	switch {
	case n == 0:
		return 0, 0, ErrTruncated
	case n < 0:
		return 0, 0, ErrCorrupt
	case src[n-1] == 0: // n > 1 here: a minimal encoding never ends in a zero group
		return 0, 0, ErrCorrupt
	}
	return v, n, nil
}
