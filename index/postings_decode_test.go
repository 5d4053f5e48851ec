package index

import (
	"encoding/binary"
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
