package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// checkDecodeError asserts the contract every Decoder error keeps: a
// *DecodeError wrapping a sentinel, with an offset inside the input.
func checkDecodeError(t *testing.T, err error, inputLen int) *DecodeError {
	t.Helper()
	var de *DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("error %v (%T) is not a *DecodeError", err, err)
	}
	if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
		t.Fatalf("error %v wraps no codec sentinel", err)
	}
	if de.Offset < 0 || de.Offset > inputLen {
		t.Fatalf("error offset %d outside input of %d bytes: %v", de.Offset, inputLen, err)
	}
	if !strings.HasPrefix(err.Error(), "lazymem: codec: ") {
		t.Fatalf("message %q lacks the package prefix", err)
	}
	return de
}

// recordFromFuzz builds a valid record from fuzzer strings: meta is lines of
// key=v1,v2; keys are deduplicated and sorted as callers must.
func recordFromFuzz(tm int64, agent, session, role, text, meta string) Record {
	r := Record{Time: tm, Agent: agent, Session: session, Role: role, Text: text}
	seen := map[string]bool{}
	for _, line := range strings.Split(meta, "\n") {
		k, vals, _ := strings.Cut(line, "=")
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		var vs []string
		if vals != "" {
			vs = strings.Split(vals, ",")
		}
		r.Meta = append(r.Meta, Field{Key: k, Values: vs})
	}
	slices.SortFunc(r.Meta, func(a, b Field) int { return strings.Compare(a.Key, b.Key) })
	return r
}

func FuzzDecodeRecord(f *testing.F) {
	for _, g := range goldenRecords {
		f.Add(AppendRecord(nil, &g.r), g.r.Time, g.r.Agent, g.r.Session, g.r.Role, g.r.Text, "kind=decision\ntags=a,b")
	}
	two := AppendRecord(AppendRecord(nil, &goldenRecords[1].r), &goldenRecords[2].r)
	f.Add(two, int64(-5), "", "", "", "", "")
	f.Add([]byte{1, 0x80, 0x00}, int64(0), "a", "s", "r", "t", "=x\nk=")
	f.Add([]byte{0}, int64(1)<<62, "\xff", "", "", "", "b=1\na=2")
	f.Fuzz(func(t *testing.T, data []byte, tm int64, agent, session, role, text, meta string) {
		// 1. Arbitrary bytes: never panic; success means canonical bytes.
		var r Record
		tail, err := DecodeRecord(data, &r)
		if err != nil {
			checkDecodeError(t, err, len(data))
			if len(tail) != len(data) {
				t.Fatal("tail is not src on error")
			}
		} else {
			used := data[:len(data)-len(tail)]
			if err := r.Validate(); err != nil {
				t.Fatalf("decoded an invalid record: %v", err)
			}
			if re := AppendRecord(nil, &r); !bytes.Equal(re, used) {
				t.Fatalf("re-encoding differs:\n in  %x\n out %x", used, re)
			}
			if RecordSize(&r) != len(used) {
				t.Fatalf("RecordSize %d, used %d", RecordSize(&r), len(used))
			}
			if st, err := skipRecord(data); err != nil || len(st) != len(tail) {
				t.Fatalf("skipRecord disagrees: %v", err)
			}
			// Decoding into a record full of other data (the reuse path)
			// gives the same result as into a fresh one.
			dirty := recordFromFuzz(tm, agent, session, role, text, meta)
			dirty.Meta = append(dirty.Meta, Field{Key: "~", Values: []string{"x", "y", "z"}})
			if _, err := DecodeRecord(data, &dirty); err != nil || !recordEqual(&dirty, &r) {
				t.Fatalf("reuse decode differs: %v\n%v\n%v", err, &dirty, &r)
			}
		}

		// 2. Valid records round-trip, alone and in a stream.
		want := recordFromFuzz(tm, agent, session, role, text, meta)
		if err := want.Validate(); err != nil {
			t.Fatal(err)
		}
		enc := AppendRecord([]byte("x"), &want)[1:]
		if len(enc) != RecordSize(&want) {
			t.Fatalf("encoded %d bytes, RecordSize %d", len(enc), RecordSize(&want))
		}
		enc = append(enc, data...)
		var got Record
		tail, err = DecodeRecord(enc, &r) // r holds leftovers from step 1
		if err != nil || !bytes.Equal(tail, data) || !recordEqual(&r, &want) {
			t.Fatalf("round trip: err %v\n got %v\nwant %v", err, &r, &want)
		}
		if _, err := DecodeRecord(enc, &got); err != nil || !recordEqual(&got, &want) {
			t.Fatalf("round trip into fresh record: %v", err)
		}
	})
}

// fuzzVecs checks a vector reader on arbitrary bytes: never panic; a clean
// end means the bytes re-encode exactly; an error names the offset of the
// bad vector's header, and everything before it re-encodes exactly.
func fuzzVecs[T Elem](t *testing.T, data []byte, dim uint8, sameDim, oneByte bool,
	newReader func(r interface{ Read([]byte) (int, error) }, o VecOptions) *VecReader[T],
	appendVec func([]byte, []T) []byte) {
	opts := VecOptions{Dim: int(dim) % 8, SameDim: sameDim, MaxDim: 4096, BufferSize: 16}
	// The high bit of dim selects the portable decoding path (fuzz workers run
	// one input at a time, so the package variable is safe to flip here).
	portableVecDecode = dim&0x80 != 0
	defer func() { portableVecDecode = false }()
	var src interface{ Read([]byte) (int, error) } = bytes.NewReader(data)
	if oneByte {
		src = iotest.OneByteReader(src) // streaming must not depend on read sizes
	}
	r := newReader(src, opts)
	var re []byte
	first := -1
	for r.Next() {
		v := r.Vec()
		if len(v) < 1 || len(v) > opts.MaxDim || (opts.Dim > 0 && len(v) != opts.Dim) {
			t.Fatalf("vector %d has dimension %d, options %+v", r.Count()-1, len(v), opts)
		}
		if first < 0 {
			first = len(v)
		} else if sameDim && opts.Dim == 0 && len(v) != first {
			t.Fatalf("SameDim let dimension %d follow %d", len(v), first)
		}
		if int(r.Offset()) != len(re) {
			t.Fatalf("Offset %d, want %d", r.Offset(), len(re))
		}
		re = appendVec(re, v)
	}
	if err := r.Err(); err != nil {
		de := checkDecodeError(t, err, len(data))
		if de.Offset != len(re) || int(r.Offset()) != de.Offset {
			t.Fatalf("error at offset %d, but %d bytes were good: %v", de.Offset, len(re), err)
		}
		if !bytes.Equal(re, data[:len(re)]) {
			t.Fatal("good prefix does not re-encode")
		}
		return
	}
	if !bytes.Equal(re, data) {
		t.Fatalf("clean read does not re-encode to the input (%d vs %d bytes)", len(re), len(data))
	}
}

func vecSeeds(f *testing.F, good ...[]byte) {
	for _, g := range good {
		f.Add(g, uint8(0), false, false)
		f.Add(g, uint8(3), true, true)
		f.Add(g, uint8(0x80), false, false)
		f.Add(g[:len(g)-1], uint8(0), false, true)
	}
	f.Add([]byte{}, uint8(0), false, false)
	f.Add(binary.LittleEndian.AppendUint32(nil, 0xffffffff), uint8(0), false, false)
	f.Add(binary.LittleEndian.AppendUint32(nil, 1<<30), uint8(0), false, false)
}

func FuzzFvecs(f *testing.F) {
	vecSeeds(f, AppendFvec(AppendFvec(nil, []float32{1, -2, 3.5}), []float32{0.25}),
		AppendFvec(nil, []float32{1, 2, 3}))
	f.Fuzz(func(t *testing.T, data []byte, dim uint8, sameDim, oneByte bool) {
		fuzzVecs(t, data, dim, sameDim, oneByte,
			func(r interface{ Read([]byte) (int, error) }, o VecOptions) *VecReader[float32] {
				return NewFvecsReader(r, o)
			}, AppendFvec)
	})
}

func FuzzIvecs(f *testing.F) {
	vecSeeds(f, AppendIvec(AppendIvec(nil, []int32{1, -2, 3}), []int32{7}))
	f.Fuzz(func(t *testing.T, data []byte, dim uint8, sameDim, oneByte bool) {
		fuzzVecs(t, data, dim, sameDim, oneByte,
			func(r interface{ Read([]byte) (int, error) }, o VecOptions) *VecReader[int32] {
				return NewIvecsReader(r, o)
			}, AppendIvec)
	})
}

func FuzzBvecs(f *testing.F) {
	vecSeeds(f, AppendBvec(AppendBvec(nil, []uint8{1, 2, 3}), []uint8{255}))
	f.Fuzz(func(t *testing.T, data []byte, dim uint8, sameDim, oneByte bool) {
		fuzzVecs(t, data, dim, sameDim, oneByte,
			func(r interface{ Read([]byte) (int, error) }, o VecOptions) *VecReader[uint8] {
				return NewBvecsReader(r, o)
			}, AppendBvec)
	})
}

func FuzzDeltaUint64s(f *testing.F) {
	f.Add(appendDeltaUint64s(nil, []uint64{1, 2, 3, 1000, 1 << 40}), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, true)
	f.Add(appendDeltaUint64s(nil, nil), []byte{}, false)
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f}, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, false)
	f.Fuzz(func(t *testing.T, data, vals []byte, sorted bool) {
		// Arbitrary bytes: never panic; success is canonical.
		got, tail, err := decodeDeltaUint64s(data, nil)
		if err != nil {
			checkDecodeError(t, err, len(data))
			if len(tail) != len(data) {
				t.Fatal("tail is not src on error")
			}
		} else if re := appendDeltaUint64s(nil, got); !bytes.Equal(re, data[:len(data)-len(tail)]) {
			t.Fatalf("re-encoding differs: %x vs %x", re, data[:len(data)-len(tail)])
		}
		// Any list round-trips; sorted lists take at most 10 bytes a value
		// and 1 when deltas are small.
		var vs []uint64
		for len(vals) >= 8 {
			vs = append(vs, binary.LittleEndian.Uint64(vals))
			vals = vals[8:]
		}
		for _, b := range vals {
			vs = append(vs, uint64(b))
		}
		if sorted {
			slices.Sort(vs)
		}
		enc := appendDeltaUint64s(nil, vs)
		if len(enc) != deltaUint64sSize(vs) {
			t.Fatalf("size %d, deltaUint64sSize %d", len(enc), deltaUint64sSize(vs))
		}
		dec, tail, err := decodeDeltaUint64s(append(enc, data...), []uint64{})
		if err != nil || !slices.Equal(dec, vs) || !bytes.Equal(tail, data) {
			t.Fatalf("round trip: %v %v -> %v", err, vs, dec)
		}
	})
}

// FuzzDecoder drives a Decoder with a program of reads over arbitrary bytes
// and checks it against a simple reference: values match encoding/binary,
// offsets only grow and stay in bounds, the first error sticks.
func FuzzDecoder(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, []byte{0, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(AppendUvarint(append(AppendUvarint(nil, 3), "abc"...), 1<<35), []byte{7, 4, 4})
	f.Add([]byte{0x80, 0x00, 0xff}, []byte{4, 5, 8, 9})
	f.Fuzz(func(t *testing.T, data, prog []byte) {
		d := NewDecoder(data)
		var firstErr error
		for i, op := range prog {
			off, err0 := d.Offset(), d.Err()
			rest := data[off:]
			okBefore := err0 == nil
			switch op % 10 {
			case 0:
				v := d.Byte()
				if okBefore && d.Err() == nil && v != rest[0] {
					t.Fatal("Byte")
				}
			case 1:
				v := d.Uint32()
				if okBefore && d.Err() == nil && v != binary.LittleEndian.Uint32(rest) {
					t.Fatal("Uint32")
				}
			case 2:
				v := d.Uint64()
				if okBefore && d.Err() == nil && v != binary.LittleEndian.Uint64(rest) {
					t.Fatal("Uint64")
				}
			case 3:
				v := d.Float32()
				if okBefore && d.Err() == nil && v != v && binary.LittleEndian.Uint32(rest)&0x7f800000 != 0x7f800000 {
					t.Fatal("Float32 NaN from non-NaN bits")
				}
			case 4:
				v := d.Uvarint()
				want, n := binary.Uvarint(rest)
				if okBefore && d.Err() == nil && (v != want || n != d.Offset()-off) {
					t.Fatalf("Uvarint %d/%d, binary.Uvarint %d/%d", v, d.Offset()-off, want, n)
				}
				if okBefore && d.Err() == nil && n > 1 && rest[n-1] == 0 {
					t.Fatal("accepted a non-minimal uvarint")
				}
			case 5:
				v := d.Varint()
				want, n := binary.Varint(rest)
				if okBefore && d.Err() == nil && (v != want || n != d.Offset()-off) {
					t.Fatal("Varint")
				}
			case 6:
				n := int(prog[(i+1)%len(prog)]) - 8 // includes negative lengths
				b := d.Bytes(n)
				if okBefore && d.Err() == nil && !bytes.Equal(b, rest[:n]) {
					t.Fatal("Bytes")
				}
			case 7:
				b := d.UvarintBytes()
				if okBefore && d.Err() == nil {
					n, k := binary.Uvarint(rest)
					if !bytes.Equal(b, rest[k:k+int(n)]) {
						t.Fatal("UvarintBytes")
					}
				}
			case 8:
				n := d.Count(int(op>>4) + 1)
				if okBefore && d.Err() == nil && n*(int(op>>4)+1) > d.Len() {
					t.Fatalf("Count %d of size %d with %d bytes left", n, int(op>>4)+1, d.Len())
				}
			case 9:
				_ = d.String()
			}
			if d.Offset() < off || d.Offset() > len(data) {
				t.Fatalf("offset went from %d to %d (len %d)", off, d.Offset(), len(data))
			}
			if err0 != nil && (d.Err() != err0 || d.Offset() != off) {
				t.Fatal("error not sticky or offset moved after error")
			}
			if d.Err() != nil && firstErr == nil {
				firstErr = d.Err()
				checkDecodeError(t, firstErr, len(data))
			}
		}
		if firstErr == nil && d.Len() != len(data)-d.Offset() {
			t.Fatal("Len inconsistent")
		}
	})
}
