package index

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// refDecodeDocs is the reference block decoder: one varint at a time,
// every id checked.
func refDecodeDocs(buf []byte, docs []uint32, prev uint32, firstZero bool, lo, hi uint32) int {
	pos := 0
	acc := uint64(prev)
	for j := range docs {
		v, k := uvarint32(buf[pos:])
		if k <= 0 || (v == 0 && (j > 0 || !firstZero)) {
			return -1
		}
		pos += k
		acc += uint64(v)
		if acc < uint64(lo) || acc > uint64(hi) {
			return -1
		}
		docs[j] = uint32(acc)
	}
	return pos
}

func refDecodeUvarints(buf []byte, out []uint32) int {
	pos := 0
	for j := range out {
		v, k := uvarint32(buf[pos:])
		if k <= 0 {
			return -1
		}
		out[j], pos = v, pos+k
	}
	return pos
}

// checkDecoders runs both decoders against their references on buf.
func checkDecoders(t *testing.T, buf []byte, n int, prev uint32, firstZero bool, lo, hi uint32) {
	t.Helper()
	got, want := make([]uint32, n), make([]uint32, n)
	g := decodeDocs(buf, got, prev, firstZero, lo, hi)
	w := refDecodeDocs(buf, want, prev, firstZero, lo, hi)
	if g != w {
		t.Fatalf("decodeDocs(%x, n=%d, prev=%d, zero=%v, [%d,%d]) = %d, reference %d", buf, n, prev, firstZero, lo, hi, g, w)
	}
	if g >= 0 {
		for j := range got {
			if got[j] != want[j] {
				t.Fatalf("decodeDocs: id %d = %d, reference %d", j, got[j], want[j])
			}
		}
	}
	g = decodeUvarints(buf, got)
	if w = refDecodeUvarints(buf, want); g != w {
		t.Fatalf("decodeUvarints(%x, n=%d) = %d, reference %d", buf, n, g, w)
	}
	if g >= 0 {
		for j := range got {
			if got[j] != want[j] {
				t.Fatalf("decodeUvarints: value %d = %d, reference %d", j, got[j], want[j])
			}
		}
	}
}

// TestDecodeBlocks checks the word-at-a-time decoders against the
// one-varint-at-a-time references: blocks of one-byte gaps (the fast
// path), mixed lengths, zero gaps, ids at and past the range's ends, and
// damaged bytes.
func TestDecodeBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for round := 0; round < 20000; round++ {
		n := 1 + rng.IntN(blockSize)
		var buf []byte
		for j := 0; j < n; j++ {
			var v uint64
			switch rng.IntN(8) {
			case 0:
				v = uint64(rng.IntN(1 << 20))
			case 1:
				v = 0
			default:
				v = 1 + uint64(rng.IntN(127))
			}
			if rng.IntN(4) == 0 && j > 0 {
				v = 1 + uint64(rng.IntN(127)) // long runs of one byte
			}
			buf = binary.AppendUvarint(buf, v)
		}
		if rng.IntN(5) == 0 && len(buf) > 0 { // damage
			buf[rng.IntN(len(buf))] = byte(rng.IntN(256))
		}
		if rng.IntN(5) == 0 && len(buf) > 0 { // truncate
			buf = buf[:rng.IntN(len(buf))]
		}
		prev := uint32(rng.IntN(1000))
		lo := prev + uint32(rng.IntN(3))
		hi := lo + uint32(rng.IntN(1<<21))
		if rng.IntN(10) == 0 {
			hi = ^uint32(0)
		}
		checkDecoders(t, buf, n, prev, rng.IntN(2) == 0, lo, hi)
	}
}

// FuzzDecodeBlock: the block decoders agree with their references on
// any bytes.
func FuzzDecodeBlock(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, uint8(10), uint32(0), true, uint32(0), uint32(100))
	f.Add([]byte{0, 1, 1, 1, 1, 1, 1, 1, 0x81, 1, 2}, uint8(10), uint32(5), false, uint32(5), uint32(400))
	f.Fuzz(func(t *testing.T, buf []byte, n uint8, prev uint32, firstZero bool, lo, span uint32) {
		size := 1 + int(n)%blockSize
		checkDecoders(t, buf, size, prev, firstZero, lo, lo+span%(1<<24))
	})
}

// refDecodePackedTFs is the reference for decodePackedTFs: one bit at a
// time.
func refDecodePackedTFs(buf []byte, out []uint32) int {
	if len(buf) == 0 || buf[0] > 32 {
		return -1
	}
	w := int(buf[0])
	size := 1 + (len(out)*w+7)/8
	if size > len(buf) {
		return -1
	}
	for j := range out {
		var v uint32
		for k := 0; k < w; k++ {
			b := j*w + k
			v |= uint32(buf[1+b/8]>>(b%8)&1) << k
		}
		out[j] = v + 1
	}
	return size
}

// checkPackedTFs runs decodePackedTFs against its reference on buf.
func checkPackedTFs(t *testing.T, buf []byte, n int) {
	t.Helper()
	got, want := make([]uint32, n), make([]uint32, n)
	g, w := decodePackedTFs(buf, got), refDecodePackedTFs(buf, want)
	if g != w {
		t.Fatalf("decodePackedTFs(%x, n=%d) = %d, reference %d", buf, n, g, w)
	}
	if g >= 0 {
		for j := range got {
			if got[j] != want[j] {
				t.Fatalf("decodePackedTFs: tf %d = %d, reference %d", j, got[j], want[j])
			}
		}
	}
}

// TestPackedTFs: tfs of every width round-trip through appendPackedTFs
// and decodePackedTFs (at the end of a buffer and followed by other
// bytes), the width is the least that holds them, and the decoder agrees
// with the bit-at-a-time reference on damaged and truncated blocks.
func TestPackedTFs(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 7))
	for round := 0; round < 20000; round++ {
		n := 1 + rng.IntN(blockSize)
		tfs := make([]uint32, n)
		maxW := rng.IntN(33)
		for j := range tfs {
			switch {
			case maxW == 0 || rng.IntN(3) == 0:
				tfs[j] = 1
			case maxW == 32:
				tfs[j] = rng.Uint32() // 0 included: it wraps and back
			default:
				tfs[j] = 1 + uint32(rng.Uint64()&(1<<maxW-1))
			}
		}
		var or uint32
		for _, tf := range tfs {
			or |= tf - 1
		}
		buf := appendPackedTFs([]byte{0xaa}, tfs)[1:]
		if int(buf[0]) != bits.Len32(or) || len(buf) != packedTFsLen(n, uint(buf[0])) {
			t.Fatalf("n=%d: width %d, %d bytes; want width %d", n, buf[0], len(buf), bits.Len32(or))
		}
		if rng.IntN(2) == 0 {
			buf = append(buf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff) // a next block
		}
		got := make([]uint32, n)
		if k := decodePackedTFs(buf, got); k != packedTFsLen(n, uint(buf[0])) {
			t.Fatalf("n=%d width %d: read %d bytes", n, buf[0], k)
		}
		for j := range tfs {
			if got[j] != tfs[j] {
				t.Fatalf("n=%d width %d: tf %d = %d, wrote %d", n, buf[0], j, got[j], tfs[j])
			}
		}
		checkPackedTFs(t, buf, n)
		if rng.IntN(3) == 0 {
			buf[rng.IntN(len(buf))] = byte(rng.IntN(256))
		}
		if rng.IntN(3) == 0 {
			buf = buf[:rng.IntN(len(buf))]
		}
		checkPackedTFs(t, buf, n)
	}
}

// FuzzDecodePackedTFs: the packed tf decoder agrees with its reference
// on any bytes.
func FuzzDecodePackedTFs(f *testing.F) {
	f.Add([]byte{0}, uint8(10))
	f.Add([]byte{3, 0xff, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0}, uint8(20))
	f.Add([]byte{32, 1, 2, 3, 4, 5, 6, 7, 8}, uint8(2))
	f.Fuzz(func(t *testing.T, buf []byte, n uint8) {
		checkPackedTFs(t, buf, 1+int(n)%blockSize)
	})
}

// BenchmarkDecodeTFs decodes one block of 128 tfs in version 2's form
// (uvarints) and version 3's (bit-packed), side by side, for tfs drawn as
// in a Zipf store with session context (86% ones; measured there) and
// for all ones.
func BenchmarkDecodeTFs(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, mix := range []string{"zipf", "ones"} {
		tfs := make([]uint32, blockSize)
		for j := range tfs {
			tfs[j] = 1
			if mix == "zipf" && rng.IntN(100) >= 86 {
				tfs[j] = 2 + uint32(rng.IntN(1+rng.IntN(8)))
			}
		}
		var varints []byte
		for _, tf := range tfs {
			varints = binary.AppendUvarint(varints, uint64(tf))
		}
		packed := appendPackedTFs(nil, tfs)
		out := make([]uint32, blockSize)
		b.Run("tfs="+mix+"/format=uvarint", func(b *testing.B) {
			b.SetBytes(int64(len(varints)))
			for b.Loop() {
				decodeUvarints(varints, out)
			}
		})
		b.Run("tfs="+mix+"/format=packed", func(b *testing.B) {
			b.SetBytes(int64(len(packed)))
			for b.Loop() {
				decodePackedTFs(packed, out)
			}
		})
	}
}
