package codec

import (
	"encoding/binary"
	"fmt"
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

// AppendChecksum appends the CRC32-C of b to dst, little-endian. b may alias
// dst (dst = AppendChecksum(dst, dst[start:]) seals the block that starts
// at start): the sum is computed before dst grows.
//
// This is the one checksummed framing of lazymem's files: a log segment
// value, an index segment's footer and the index MANIFEST are each
// payload | CRC32-C(payload) (the index segment then ends with its magic).
func AppendChecksum(dst, b []byte) []byte {
	return binary.LittleEndian.AppendUint32(dst, Checksum(b))
}

// DecodeChecksummed reads a block laid out as payload | CRC32-C(payload)
// | tail, whose payload is the first n bytes of b, and returns the payload
// and what follows the checksum. Fewer than n+ChecksumSize bytes is
// ErrTruncated; a wrong sum is ErrChecksum, at the offset of the stored
// sum, with the stored and computed sums in the message.
func DecodeChecksummed(b []byte, n int) (payload, tail []byte, err error) {
	if n < 0 || len(b)-ChecksumSize < n {
		return nil, nil, decodeErr("checksummed block", 0, ErrTruncated)
	}
	stored, sum := binary.LittleEndian.Uint32(b[n:]), Checksum(b[:n])
	if stored != sum {
		return nil, nil, decodeErr(fmt.Sprintf("checksum (stored %08x, computed %08x)", stored, sum), n, ErrChecksum)
	}
	return b[:n], b[n+ChecksumSize:], nil
}

// VerifyChecksum checks a block laid out as payload | CRC32-C(payload),
// the checksum last, and returns the payload: DecodeChecksummed with no
// tail.
func VerifyChecksum(b []byte) (payload []byte, err error) {
	if len(b) < ChecksumSize {
		return nil, decodeErr("checksum", 0, ErrTruncated)
	}
	payload, _, err = DecodeChecksummed(b, len(b)-ChecksumSize)
	return payload, err
}
