package codec

import (
	"encoding/binary"
	"hash/crc32"
)

// ChecksumSize is the size of an appended checksum: CRC32-C, little-endian.
// NEVER CHANGE: checksums are stored on disk.
const ChecksumSize = 4

// castagnoli is CRC32-C: hardware-accelerated on amd64 (SSE4.2) and arm64,
// and better at detecting burst errors than the IEEE polynomial.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum is the CRC32-C of b.
func Checksum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// UpdateChecksum extends crc, a Checksum of earlier bytes, with b, for data
// that is written in pieces.
func UpdateChecksum(crc uint32, b []byte) uint32 { return crc32.Update(crc, castagnoli, b) }

// AppendChecksum appends the CRC32-C of b to dst, little-endian. b may alias
// dst (dst = AppendChecksum(dst, dst[start:]) seals a block): the sum is
// computed before dst grows.
func AppendChecksum(dst, b []byte) []byte {
	return binary.LittleEndian.AppendUint32(dst, Checksum(b))
}

// VerifyChecksum checks a block laid out as payload | CRC32-C(payload) and
// returns the payload. A block shorter than ChecksumSize is ErrTruncated; a
// wrong sum is ErrChecksum, with the offset of the stored sum.
func VerifyChecksum(b []byte) (payload []byte, err error) {
	if len(b) < ChecksumSize {
		return nil, decodeErr("checksum", 0, ErrTruncated)
	}
	n := len(b) - ChecksumSize
	if Checksum(b[:n]) != binary.LittleEndian.Uint32(b[n:]) {
		return nil, decodeErr("checksum", n, ErrChecksum)
	}
	return b[:n], nil
}
