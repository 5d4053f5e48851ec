package codec

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestUvarintTable(t *testing.T) {
	for _, tc := range []struct {
		v    uint64
		wire []byte
	}{
		{0, []byte{0x00}},
		{1, []byte{0x01}},
		{127, []byte{0x7f}},
		{128, []byte{0x80, 0x01}},
		{300, []byte{0xac, 0x02}},
		{1<<14 - 1, []byte{0xff, 0x7f}},
		{1 << 14, []byte{0x80, 0x80, 0x01}},
		{math.MaxUint64, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
	} {
		got := AppendUvarint([]byte{0xaa}, tc.v)
		if !slices.Equal(got[1:], tc.wire) || got[0] != 0xaa {
			t.Errorf("AppendUvarint(%d) = %x, want %x", tc.v, got[1:], tc.wire)
		}
		if UvarintLen(tc.v) != len(tc.wire) {
			t.Errorf("UvarintLen(%d) = %d, want %d", tc.v, UvarintLen(tc.v), len(tc.wire))
		}
		v, tail, err := decodeUvarint(append(slices.Clone(tc.wire), 0x55))
		if err != nil || v != tc.v || !slices.Equal(tail, []byte{0x55}) {
			t.Errorf("decodeUvarint(%x) = %d, %x, %v", tc.wire, v, tail, err)
		}
		// Every strict prefix is truncated.
		for n := range len(tc.wire) {
			if _, _, err := decodeUvarint(tc.wire[:n]); !errors.Is(err, ErrTruncated) {
				t.Errorf("decodeUvarint(%x) err %v, want ErrTruncated", tc.wire[:n], err)
			}
		}
	}
}

func TestUvarintLenMatchesStdlib(t *testing.T) {
	for shift := range 64 {
		for _, v := range []uint64{1<<shift - 1, 1 << shift, 1<<shift + 1} {
			if got, want := UvarintLen(v), len(binary.AppendUvarint(nil, v)); got != want {
				t.Fatalf("UvarintLen(%d) = %d, want %d", v, got, want)
			}
		}
	}
}

func TestUvarintMalformed(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrTruncated},
		{"open continuation", []byte{0x80}, ErrTruncated},
		{"non-minimal zero", []byte{0x80, 0x00}, ErrCorrupt},
		{"non-minimal one", []byte{0x81, 0x80, 0x00}, ErrCorrupt},
		{"overflow 10th byte", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, ErrCorrupt},
		{"eleven bytes", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, ErrCorrupt},
	} {
		_, tail, err := decodeUvarint(tc.b)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err %v, want %v", tc.name, err, tc.want)
		}
		if len(tail) != len(tc.b) {
			t.Errorf("%s: tail is not src on error", tc.name)
		}
	}
}

// TestVarint: the Decoder's signed varints are the stdlib's zig-zag.
func TestVarint(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, -64, 64, -65, math.MaxInt64, math.MinInt64, 1767225600_123456789} {
		b := binary.AppendVarint(nil, v)
		d := NewDecoder(b)
		if got := d.Varint(); d.Err() != nil || got != v || d.Len() != 0 {
			t.Errorf("Decoder.Varint(%x) = %d, %v, want %d", b, got, d.Err(), v)
		}
	}
	d := NewDecoder([]byte{0x80})
	if d.Varint(); !errors.Is(d.Err(), ErrTruncated) {
		t.Errorf("err %v", d.Err())
	}
}

func TestDeltaUint64s(t *testing.T) {
	for _, tc := range []struct {
		name string
		vs   []uint64
		size int
	}{
		{"empty", nil, 1},
		{"one", []uint64{5}, 2},
		{"dense ids", []uint64{1000, 1001, 1002, 1003}, 1 + 2 + 3},
		{"repeats", []uint64{7, 7, 7}, 4},
		{"max", []uint64{0, math.MaxUint64}, 1 + 1 + 10},
		{"unsorted round-trips", []uint64{10, 3, math.MaxUint64, 0}, -1},
	} {
		b := appendDeltaUint64s([]byte{0xee}, tc.vs)[1:]
		if len(b) != deltaUint64sSize(tc.vs) {
			t.Errorf("%s: size %d, deltaUint64sSize %d", tc.name, len(b), deltaUint64sSize(tc.vs))
		}
		if tc.size >= 0 && len(b) != tc.size {
			t.Errorf("%s: encoded %d bytes, want %d", tc.name, len(b), tc.size)
		}
		got, tail, err := decodeDeltaUint64s(append(b, 0x42), []uint64{99})
		if err != nil || !slices.Equal(got[1:], tc.vs) || got[0] != 99 || !slices.Equal(tail, []byte{0x42}) {
			t.Errorf("%s: decode = %v, %x, %v", tc.name, got, tail, err)
		}
		for n := range len(b) {
			if _, _, err := decodeDeltaUint64s(b[:n], nil); !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s: prefix %d err %v", tc.name, n, err)
			}
		}
	}
	// A count that the input cannot hold is rejected before allocating.
	huge := AppendUvarint(nil, 1<<40)
	allocs := testing.AllocsPerRun(10, func() {
		if _, _, err := decodeDeltaUint64s(huge, nil); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("err %v", err)
		}
	})
	if allocs > 1 { // the error value itself
		t.Fatalf("huge count allocated %.0f times", allocs)
	}
}

func TestChecksum(t *testing.T) {
	// Known CRC32-C vector (RFC 3720 B.4: 32 bytes of zeros).
	if got := Checksum(make([]byte, 32)); got != 0x8a9136aa {
		t.Fatalf("Checksum(zeros) = %#x, want 0x8a9136aa", got)
	}
	if got := Checksum([]byte("123456789")); got != 0xe3069283 {
		t.Fatalf("Checksum(123456789) = %#x, want 0xe3069283", got)
	}
	block := []byte("header:")
	block = append(block, "payload"...)
	block = AppendChecksum(block, block[7:]) // aliasing dst is allowed
	payload, err := VerifyChecksum(block[7:])
	if err != nil || string(payload) != "payload" {
		t.Fatalf("VerifyChecksum = %q, %v", payload, err)
	}
	for i := range len(block) - 7 {
		bad := slices.Clone(block[7:])
		bad[i] ^= 0x10
		_, err := VerifyChecksum(bad)
		var de *DecodeError
		if !errors.Is(err, ErrChecksum) || !errors.Is(err, ErrCorrupt) || !errors.As(err, &de) || de.Offset != len(bad)-ChecksumSize {
			t.Fatalf("flip at %d: err %v", i, err)
		}
	}
	if _, err := VerifyChecksum([]byte{1, 2, 3}); !errors.Is(err, ErrTruncated) {
		t.Fatalf("short block err %v", err)
	}
}

// TestDecodeChecksummed: payload | CRC32-C | tail, the framing of the
// index segment footer (the tail is its magic). The stored bytes are the
// little-endian CRC32-C of the payload alone.
func TestDecodeChecksummed(t *testing.T) {
	b := AppendChecksum([]byte("123456789"), []byte("123456789"))
	if got := b[9:]; string(got) != "\x83\x92\x06\xe3" {
		t.Fatalf("framed checksum bytes %x, want 839206e3", got)
	}
	b = append(b, "TAIL"...)
	payload, tail, err := DecodeChecksummed(b, 9)
	if err != nil || string(payload) != "123456789" || string(tail) != "TAIL" {
		t.Fatalf("DecodeChecksummed = %q, %q, %v", payload, tail, err)
	}
	for _, n := range []int{-1, len(b) - ChecksumSize + 1, len(b)} {
		if _, _, err := DecodeChecksummed(b, n); !errors.Is(err, ErrTruncated) {
			t.Fatalf("n=%d: err %v, want ErrTruncated", n, err)
		}
	}
	bad := slices.Clone(b)
	bad[3] ^= 1
	_, _, err = DecodeChecksummed(bad, 9)
	var de *DecodeError
	if !errors.Is(err, ErrChecksum) || !errors.As(err, &de) || de.Offset != 9 {
		t.Fatalf("flipped payload: err %v", err)
	}
	if !strings.Contains(err.Error(), "stored e3069283") {
		t.Fatalf("error %q does not name the stored sum", err)
	}
}
