package segment

import (
	"encoding/binary"
	"fmt"
)

// Key prefixes inside the Pebble keyspace. Stored on disk: never change.
const (
	prefixTail    = 'r'       // r<id:8 BE>         -> raw payload of an unsealed record
	prefixSegment = 's'       // s<firstID:8 BE>    -> sealed segment value (see doc.go)
	prefixSegMeta = 'x'       // x<firstID:8 BE>    -> segment summary: count, raw bytes, stored bytes
	prefixDeleted = 'd'       // d<id:8 BE>         -> tombstone of a deleted record not yet compacted
	prefixDict    = 'y'       // y<id:8 BE>         -> zstd dictionary | crc32c (dict.go)
	prefixDictIDs = 'z'       // z<id:8 BE>         -> ids of the records whose text dictionary id holds | crc32c (dict.go)
	prefixName    = 'n'       // n<id:8 BE>         -> agent, session or role name | crc32c (names.go)
	prefixWords   = 'w'       // w<firstID:8 BE>    -> words of the log's vocabulary | crc32c (words.go)
	keyNext       = "mnext"   // next id to assign, 8 BE; written with every append group
	keySealed     = "msealed" // ids below it are sealed or dropped, 8 BE; written with every seal
)

func makeKey(prefix byte, id uint64) []byte {
	var k [9]byte
	k[0] = prefix
	binary.BigEndian.PutUint64(k[1:], id)
	return k[:]
}

func keyID(k []byte) (uint64, bool) {
	if len(k) != 9 {
		return 0, false
	}
	return binary.BigEndian.Uint64(k[1:]), true
}

// segMeta is the in-memory summary of one sealed segment.
type segMeta struct {
	first  uint64 // first record id
	count  uint32 // ids first .. first+count-1
	raw    uint32 // raw payload bytes (live records)
	stored uint32 // bytes of the stored segment value
	dead   uint32 // records deleted inside the segment
}

func (m *segMeta) end() uint64 { return m.first + uint64(m.count) }

// decodedSize estimates decoded.size() of the segment before reading it.
func (m *segMeta) decodedSize() int64 {
	return int64(m.raw) + 5*int64(m.count) + 68
}

func appendSegMeta(dst []byte, m *segMeta) []byte {
	dst = binary.AppendUvarint(dst, uint64(m.count))
	dst = binary.AppendUvarint(dst, uint64(m.raw))
	dst = binary.AppendUvarint(dst, uint64(m.stored))
	dst = binary.AppendUvarint(dst, uint64(m.dead))
	return dst
}

func decodeSegMeta(first uint64, b []byte) (segMeta, error) {
	m := segMeta{first: first}
	var vals [4]uint64
	off := 0
	for i := range vals {
		v, n := binary.Uvarint(b[off:])
		if n <= 0 || v > 1<<32-1 {
			return m, &CorruptionError{Segment: first, Offset: int64(off), Err: fmt.Errorf("%w: segment summary field %d", ErrFormat, i)}
		}
		vals[i] = v
		off += n
	}
	m.count, m.raw, m.stored, m.dead = uint32(vals[0]), uint32(vals[1]), uint32(vals[2]), uint32(vals[3])
	if m.count == 0 {
		return m, &CorruptionError{Segment: first, Err: fmt.Errorf("%w: empty segment summary", ErrFormat)}
	}
	return m, nil
}

// decoded is a decompressed segment: payload i is body[offs[i]:offs[i+1]],
// and a nil-length slot with dead[i] set is a deleted record.
type decoded struct {
	first uint64
	body  []byte
	offs  []uint32
	dead  []bool
}

func (d *decoded) size() int64 {
	return int64(len(d.body) + 4*len(d.offs) + len(d.dead) + 64)
}

// get returns the payload of id, which must lie inside the segment.
func (d *decoded) get(id uint64) ([]byte, bool) {
	i := id - d.first
	if d.dead[i] {
		return nil, false
	}
	return d.body[d.offs[i]:d.offs[i+1]], true
}

// encodeBody lays out the uncompressed body of a segment:
//
//	uvarint slot[count]   slot = 0 for a deleted record, len(payload)+1 otherwise
//	payload bytes, concatenated in id order
func encodeBody(dst []byte, payloads [][]byte) []byte {
	for _, p := range payloads {
		if p == nil {
			dst = binary.AppendUvarint(dst, 0)
		} else {
			dst = binary.AppendUvarint(dst, uint64(len(p))+1)
		}
	}
	for _, p := range payloads {
		dst = append(dst, p...)
	}
	return dst
}

// parseBody splits a decompressed body into its records.
func parseBody(first uint64, count int, body []byte) (*decoded, error) {
	d := &decoded{first: first, offs: make([]uint32, count+1), dead: make([]bool, count)}
	lens := make([]uint32, count)
	off := 0
	var total uint64
	for i := 0; i < count; i++ {
		v, n := binary.Uvarint(body[off:])
		if n <= 0 {
			return nil, fmt.Errorf("%w: slot %d of %d at body offset %d", ErrFormat, i, count, off)
		}
		off += n
		if v == 0 {
			d.dead[i] = true
		} else {
			lens[i] = uint32(v - 1)
			total += v - 1
		}
	}
	if uint64(len(body)-off) != total {
		return nil, fmt.Errorf("%w: body holds %d payload bytes, slots say %d", ErrFormat, len(body)-off, total)
	}
	d.body = body[off:]
	pos := uint32(0)
	for i := 0; i < count; i++ {
		d.offs[i] = pos
		pos += lens[i]
	}
	d.offs[count] = pos
	return d, nil
}
