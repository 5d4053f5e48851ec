package index

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
)

// randBlock draws a block of n increasing ids after prev whose gaps have
// about meanGap (at least 1; the first may be 0 when zero), tfs of
// 86% ones, and lengths around 40.
func randBlock(rng *rand.Rand, n int, prev uint32, meanGap int, zero bool) (docs, tfs, dls []uint32) {
	docs, tfs, dls = make([]uint32, n), make([]uint32, n), make([]uint32, n)
	d := prev
	for j := range docs {
		g := uint32(1 + rng.IntN(2*meanGap))
		if j == 0 && zero {
			g = 0
		}
		d += g
		docs[j] = d
		tfs[j] = 1
		if rng.IntN(100) >= 86 {
			tfs[j] = 2 + uint32(rng.IntN(5))
		}
		dls[j] = uint32(8 + rng.IntN(90))
	}
	return
}

// TestBlocksV4: version 4 blocks of every gap width round-trip (ids,
// tfs, lengths; followed by other bytes or not), a version 5 block is
// version 4's without the lengths, and damaged or truncated
// blocks are refused or decode to increasing ids inside [lo, hi], never
// past the buffer.
func TestBlocksV4(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 3))
	for round := 0; round < 20000; round++ {
		n := 1 + rng.IntN(blockSize)
		mean := 1 << rng.IntN(20)
		prev := uint32(rng.IntN(1000))
		zero := prev == 0 && rng.IntN(2) == 0
		docs, tfs, dls := randBlock(rng, n, prev, mean, zero)
		if rng.IntN(4) == 0 {
			for j := range dls {
				dls[j] = uint32(rng.IntN(1 << rng.IntN(33)))
			}
		}
		lo, hi := prev, docs[n-1]+uint32(rng.IntN(3))
		buf := appendBlockV4(nil, docs, tfs, dls, prev)
		size := len(buf)
		if rng.IntN(2) == 0 {
			buf = append(buf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
		}
		got, gtf, glen := make([]uint32, n), make([]uint32, n), make([]uint32, n)
		pos := decodeDocsV4(buf, got, prev, zero, lo, hi)
		if pos < 0 {
			t.Fatalf("round %d: n=%d mean gap %d: refused", round, n, mean)
		}
		k := decodePackedTFs(buf[pos:], gtf)
		if k < 0 {
			t.Fatalf("round %d: tfs refused", round)
		}
		// version 5's block is version 4's without the lengths
		if v5 := appendBlockV5(nil, docs, tfs, prev); !bytes.Equal(v5, buf[:pos+k]) {
			t.Fatalf("round %d: version 5 block %x, version 4's before its lengths %x", round, v5, buf[:pos+k])
		}
		l := decodeLensV4(buf[pos+k:], glen)
		if l < 0 || pos+k+l != size {
			t.Fatalf("round %d: lengths read %d, block %d bytes, %d before them", round, l, size, pos+k)
		}
		for j := range docs {
			if got[j] != docs[j] || gtf[j] != tfs[j] || glen[j] != dls[j] {
				t.Fatalf("round %d n=%d: posting %d = (%d, %d, %d), wrote (%d, %d, %d)", round, n, j, got[j], gtf[j], glen[j], docs[j], tfs[j], dls[j])
			}
		}
		if zero && decodeDocsV4(buf, got, prev, false, lo, hi) >= 0 {
			t.Fatalf("round %d: a zero first gap outside block 0 accepted", round)
		}
		if docs[n-1] > lo && decodeDocsV4(buf, got, prev, zero, lo, docs[n-1]-1) >= 0 {
			t.Fatalf("round %d: an id past hi accepted", round)
		}
		// damage
		bad := append([]byte(nil), buf[:size]...)
		bad[rng.IntN(len(bad))] = byte(rng.IntN(256))
		if rng.IntN(2) == 0 {
			bad = bad[:rng.IntN(len(bad))]
		}
		if p := decodeDocsV4(bad, got, prev, zero, lo, hi); p >= 0 {
			if p > len(bad) {
				t.Fatalf("round %d: read %d bytes of %d", round, p, len(bad))
			}
			last := int64(prev) - 1
			for _, d := range got {
				if int64(d) <= last && !(zero && last == int64(prev)-1) || d < lo || d > hi {
					t.Fatalf("round %d: damaged block decoded id %d after %d, range [%d, %d]", round, d, last, lo, hi)
				}
				last = int64(d)
			}
		}
	}
}

// BenchmarkDecodeDocs decodes one block of 128 ids in version 3's form
// (uvarint gaps) and version 4's (packed gaps), side by side, for gaps
// of a common term (mean 5), a mid one (mean 60) and a rarer one (mean
// 400).
func BenchmarkDecodeDocs(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, mean := range []int{5, 60, 400} {
		docs, tfs, dls := randBlock(rng, blockSize, 0, mean, false)
		var varints []byte
		prev := uint32(0)
		for _, d := range docs {
			varints = binary.AppendUvarint(varints, uint64(d-prev))
			prev = d
		}
		v4 := appendBlockV4(nil, docs, tfs, dls, 0)
		out := make([]uint32, blockSize)
		b.Run(fmt.Sprintf("gap=%d/format=v3", mean), func(b *testing.B) {
			for b.Loop() {
				decodeDocs(varints, out, 0, false, 0, docs[blockSize-1])
			}
		})
		b.Run(fmt.Sprintf("gap=%d/format=v4", mean), func(b *testing.B) {
			for b.Loop() {
				decodeDocsV4(v4, out, 0, false, 0, docs[blockSize-1])
			}
		})
	}
}
