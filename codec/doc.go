// Package codec holds lazymem's binary encodings: the record encoding of the
// append-only log, the CRC32-C checksum framing of every checksummed block
// on disk, and streaming readers and writers of the .fvecs/.ivecs/.bvecs
// vector files (with internal varint, delta-list and sticky-error decoding
// helpers).
//
// # Record encoding, version 1
//
// A record is self-delimiting: a version byte, the body length, the body.
// Integers marked uvarint are LEB128 (7 bits a byte, least significant group
// first) and must be minimal; "str" is a uvarint byte length then the bytes.
//
//	record:
//	+---------+---------------------+------------------------------------+
//	| version | body_len            | body (body_len bytes)              |
//	| 1 byte  | uvarint             |                                    |
//	| = 0x01  |                     |                                    |
//	+---------+---------------------+------------------------------------+
//
//	body:
//	+----------+-------+---------+------+--------+-----------------+------+
//	| time     | agent | session | role | n_meta | field * n_meta  | text |
//	| int64 LE | str   | str     | str  | uvarint|                 | str  |
//	| 8 bytes  |       |         |      |        |                 |      |
//	+----------+-------+---------+------+--------+-----------------+------+
//
//	field (sorted by key; keys unique and non-empty):
//	+-----+----------+--------------------+
//	| key | n_values | value * n_values   |
//	| str | uvarint  | str                |
//	+-----+----------+--------------------+
//
//	str:
//	+---------+-------------+
//	| len     | bytes       |
//	| uvarint | len bytes   |
//	+---------+-------------+
//
// time is unix nanoseconds, two's complement: a fixed 8 bytes is shorter than
// a varint for present-day timestamps (about 1.8e18 needs 61 bits, 9 varint
// bytes). text comes last so that a reader that wants only the metadata can
// stop before it. The body length lets a reader step over a record without
// decoding it, and lets DecodeRecord tell a short read (ErrTruncated: the
// input ends before body_len bytes) from a damaged record (ErrCorrupt: the
// fields do not fill the body exactly).
//
// The encoding is canonical: minimal varints, sorted unique keys and an exact
// body length mean a decoded record re-encodes to exactly the bytes it came
// from. The fuzz target FuzzDecodeRecord checks that property.
//
// Records carry no checksum of their own: the segment layer packs many of
// them into a block and checksums the block (AppendChecksum,
// VerifyChecksum). The same framing, payload | CRC32-C(payload), seals the
// index's segment files and MANIFEST (DecodeChecksummed when bytes follow
// the sum): this package is its one home.
//
// The wire constants (version 1, the layout above, ChecksumSize) never
// change; a new layout takes a new version byte and the Decoder keeps the old
// branch. Version 0 is reserved so that zeroed bytes never decode as a record.
//
// # Delta lists
//
//	+---------+---------+---------------------------+
//	| count   | first   | delta * (count-1)         |
//	| uvarint | uvarint | uvarint, v[i]-v[i-1]      |
//	+---------+---------+---------------------------+
//
// Deltas are taken modulo 2^64: sorted input is compact, any input round-trips.
// The varint, delta and sticky-Decoder helpers are unexported: nothing
// outside this package calls them (the index encodes its postings itself).
//
// # Vector files
//
// .fvecs, .ivecs and .bvecs (the TEXMEX corpus formats) are a concatenation of
// vectors, each an int32 little-endian dimension d then d values:
//
//	+-----------+----------------------------------------------+
//	| d         | d values                                     |
//	| int32 LE  | float32 LE (.fvecs), int32 LE (.ivecs),      |
//	| 4 bytes   | uint8 (.bvecs)                               |
//	+-----------+----------------------------------------------+
//
// VecReader streams them one vector at a time; a bad dimension or a vector cut
// short is a *DecodeError with the vector's index and byte offset.
//
// docs/format/record.md and docs/format/vecs.md carry the same drawings.
package codec
