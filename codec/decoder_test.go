package codec

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

func TestDecoderSequence(t *testing.T) {
	var b []byte
	b = append(b, 7)
	b = binary.LittleEndian.AppendUint32(b, 0xdeadbeef)
	b = binary.LittleEndian.AppendUint64(b, math.MaxUint64-1)
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(-1.5))
	b = AppendUvarint(b, 300)
	b = binary.AppendVarint(b, -3)
	b = append(AppendUvarint(b, 5), "hello"...)
	b = AppendUvarint(b, 2) // count of 2-byte items
	b = append(b, "abcd"...)

	d := NewDecoder(b)
	if d.Byte() != 7 || d.Uint32() != 0xdeadbeef || d.Uint64() != math.MaxUint64-1 ||
		d.Float32() != -1.5 || d.Uvarint() != 300 || d.Varint() != -3 || d.String() != "hello" {
		t.Fatalf("wrong values, err %v", d.Err())
	}
	if string(d.Rest()) != "\x02abcd" {
		t.Fatalf("Rest = %q", d.Rest())
	}
	if n := d.Count(2); n != 2 || string(d.Bytes(2)) != "ab" {
		t.Fatalf("count %d err %v", n, d.Err())
	}
	d.Skip(2)
	if d.Err() != nil || d.Len() != 0 || d.Offset() != len(b) {
		t.Fatalf("err %v len %d off %d", d.Err(), d.Len(), d.Offset())
	}
	// Sticky: the first failure wins, later reads return zeros.
	d.Label("after end")
	if d.Byte() != 0 {
		t.Fatal("read past end returned data")
	}
	first := d.Err()
	d.Label("later")
	_ = d.Uvarint()
	_ = d.Bytes(1)
	d.Fail(ErrCorrupt)
	var de *DecodeError
	if !errors.As(d.Err(), &de) || d.Err() != first || de.What != "after end" || de.Offset != len(b) || !errors.Is(first, ErrTruncated) {
		t.Fatalf("sticky error broken: %v", d.Err())
	}
	if d.Rest() != nil || d.Len() != 0 {
		t.Fatal("Rest/Len after error")
	}
	d.Reset(b[:1])
	if d.Err() != nil || d.Byte() != 7 {
		t.Fatal("Reset did not clear")
	}
}

func TestDecoderBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
		read func(d *Decoder)
		want error
		off  int
	}{
		{"negative Bytes", []byte{1, 2}, func(d *Decoder) { d.Bytes(-1) }, ErrCorrupt, 0},
		{"Bytes past end", []byte{1, 2}, func(d *Decoder) { d.Byte(); d.Bytes(2) }, ErrTruncated, 1},
		{"Uint32 short", []byte{1, 2, 3}, func(d *Decoder) { d.Uint32() }, ErrTruncated, 0},
		{"Uint64 short", make([]byte, 7), func(d *Decoder) { d.Uint64() }, ErrTruncated, 0},
		{"UvarintBytes length past end", []byte{0, 5, 'a'}, func(d *Decoder) { d.Byte(); d.UvarintBytes() }, ErrTruncated, 1},
		{"UvarintBytes huge length", append([]byte{}, AppendUvarint(nil, math.MaxUint64)...), func(d *Decoder) { d.UvarintBytes() }, ErrTruncated, 0},
		{"Count beyond input", []byte{9, 0, 0}, func(d *Decoder) { d.Count(1) }, ErrCorrupt, 0},
		{"Count with min size", []byte{2, 0, 0, 0}, func(d *Decoder) { d.Count(2) }, ErrCorrupt, 0},
		{"non-minimal uvarint", []byte{0x80, 0x00}, func(d *Decoder) { d.Uvarint() }, ErrCorrupt, 0},
		{"Fail", []byte{1}, func(d *Decoder) { d.Byte(); d.Fail(ErrCorrupt) }, ErrCorrupt, 1},
	} {
		d := NewDecoder(tc.b)
		d.Label(tc.name)
		tc.read(&d)
		var de *DecodeError
		if !errors.Is(d.Err(), tc.want) || !errors.As(d.Err(), &de) || de.Offset != tc.off || de.What != tc.name {
			t.Errorf("%s: err %v, want %v at %d", tc.name, d.Err(), tc.want, tc.off)
		}
	}
	d := NewDecoder([]byte{2, 0, 0, 0, 0})
	if d.Count(2) != 2 || d.Err() != nil {
		t.Errorf("Count(2) of 2 items in 4 bytes failed: %v", d.Err())
	}
	d = NewDecoder(nil)
	d.Byte()
	if de := d.Err().(*DecodeError); de.What != "value" {
		t.Errorf("unlabelled What %q", de.What)
	}
}
