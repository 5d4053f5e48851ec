package codec

import (
	"encoding/binary"
	"math"
)

// Decoder reads a sequence of values from a byte slice with a sticky error,
// in the style of Prometheus tsdb/encoding.Decbuf: once a read fails, every
// later read returns a zero value and Err reports the first failure, so a
// caller decodes a whole structure and checks the error once.
//
// The error is a *DecodeError naming the current label (see Label) and the
// offset, from the start of the slice given to NewDecoder or Reset, at which
// the failing value starts. Reads never panic, whatever the input.
//
// A Decoder is a small value: declare it on the stack and reuse it with Reset.
type Decoder struct {
	b    []byte
	off  int
	err  error
	what string
}

// NewDecoder returns a Decoder reading b from its first byte.
func NewDecoder(b []byte) Decoder { return Decoder{b: b} }

// Reset makes d read b from its first byte and clears the error and label.
func (d *Decoder) Reset(b []byte) { *d = Decoder{b: b} }

// Label names what the next reads decode ("segment header", "posting count");
// the name appears in the error of a failed read. It costs nothing on success.
func (d *Decoder) Label(what string) { d.what = what }

// Err is the first error met, or nil.
func (d *Decoder) Err() error { return d.err }

// Offset is the number of bytes consumed so far.
func (d *Decoder) Offset() int { return d.off }

// Len is the number of bytes left to read (0 after an error).
func (d *Decoder) Len() int {
	if d.err != nil {
		return 0
	}
	return len(d.b) - d.off
}

// Rest returns the unread bytes without consuming them (nil after an error).
func (d *Decoder) Rest() []byte {
	if d.err != nil {
		return nil
	}
	return d.b[d.off:]
}

// Fail records err (a sentinel such as ErrCorrupt) at the current offset,
// unless an error is already recorded. Callers use it for semantic checks
// ("count larger than the input", "keys out of order") so that those errors
// carry the same label and offset as the mechanical ones.
func (d *Decoder) Fail(err error) { d.failAt(d.off, err) }

func (d *Decoder) failAt(off int, err error) {
	if d.err == nil {
		what := d.what
		if what == "" {
			what = "value"
		}
		d.err = decodeErr(what, off, err)
	}
}

// need reports whether n more bytes are available, recording ErrTruncated if not.
func (d *Decoder) need(n int) bool {
	if d.err != nil {
		return false
	}
	if n < 0 {
		d.failAt(d.off, ErrCorrupt)
		return false
	}
	if n > len(d.b)-d.off {
		d.failAt(d.off, ErrTruncated)
		return false
	}
	return true
}

// Byte reads one byte.
func (d *Decoder) Byte() byte {
	if !d.need(1) {
		return 0
	}
	c := d.b[d.off]
	d.off++
	return c
}

// Uint32 reads a little-endian fixed 32-bit integer.
func (d *Decoder) Uint32() uint32 {
	if !d.need(4) {
		return 0
	}
	v := binary.LittleEndian.Uint32(d.b[d.off:])
	d.off += 4
	return v
}

// Uint64 reads a little-endian fixed 64-bit integer.
func (d *Decoder) Uint64() uint64 {
	if !d.need(8) {
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b[d.off:])
	d.off += 8
	return v
}

// Int64 reads a little-endian fixed 64-bit two's complement integer.
func (d *Decoder) Int64() int64 { return int64(d.Uint64()) }

// Float32 reads a little-endian IEEE 754 float32, bits preserved.
func (d *Decoder) Float32() float32 { return math.Float32frombits(d.Uint32()) }

// Uvarint reads a minimal LEB128 varint (see decodeUvarint).
func (d *Decoder) Uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n, err := uvarint(d.b[d.off:])
	if err != nil {
		d.failAt(d.off, err)
		return 0
	}
	d.off += n
	return v
}

// Varint reads a minimal zig-zag varint.
func (d *Decoder) Varint() int64 { return unzigzag(d.Uvarint()) }

// Count reads a uvarint that announces how many items of at least minSize
// bytes each follow, and fails with ErrCorrupt when the rest of the input
// cannot hold that many. Decoders use it before allocating for the items, so
// a corrupt count never makes them allocate more than the input's size.
func (d *Decoder) Count(minSize int) int {
	start := d.off
	n := d.Uvarint()
	if d.err != nil {
		return 0
	}
	if minSize < 1 {
		minSize = 1
	}
	if n > uint64(len(d.b)-d.off)/uint64(minSize) {
		d.failAt(start, ErrCorrupt)
		return 0
	}
	return int(n)
}

// Bytes reads n bytes and returns them aliased to the input (no copy).
// A negative n is ErrCorrupt; n beyond the input is ErrTruncated.
func (d *Decoder) Bytes(n int) []byte {
	if !d.need(n) {
		return nil
	}
	b := d.b[d.off : d.off+n : d.off+n]
	d.off += n
	return b
}

// Skip consumes n bytes.
func (d *Decoder) Skip(n int) {
	if d.need(n) {
		d.off += n
	}
}

// UvarintBytes reads a uvarint length then that many bytes, aliased to the input.
func (d *Decoder) UvarintBytes() []byte {
	start := d.off
	n := d.Uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)-d.off) {
		d.failAt(start, ErrTruncated)
		return nil
	}
	return d.Bytes(int(n))
}

// String reads a uvarint length then that many bytes, copied into a new string.
// (It consumes input: do not hand a *Decoder to fmt, which would call it as a
// fmt.Stringer.)
func (d *Decoder) String() string { return string(d.UvarintBytes()) }

// stringReuse is String that returns old, without allocating, when the bytes
// read equal it: decoding a run of records with the same agent or session
// then allocates nothing for those fields.
func (d *Decoder) stringReuse(old string) string {
	b := d.UvarintBytes()
	if string(b) == old { // compiled to a comparison, no allocation
		return old
	}
	return string(b)
}
