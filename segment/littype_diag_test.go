//go:build diag

package segment

import (
	"bytes"
	"slices"
	"time"

	"encoding/binary"
	"fmt"
	"github.com/klauspost/compress/huff0"
	"github.com/klauspost/compress/zstd"
	"testing"
)

// zstdLitType returns the literals section type of the first block of the
// zstd frame b (0 raw, 1 RLE, 2 compressed with its own Huffman table, 3
// treeless: the previous table, for a first block the dictionary's), or -1
// for a block that is not compressed.
func zstdLitType(b []byte) int {
	if len(b) < 6 || binary.LittleEndian.Uint32(b) != 0xFD2FB528 {
		return -2
	}
	fhd := b[4]
	off := 5
	single := fhd&0x20 != 0
	if !single {
		off++ // window descriptor
	}
	off += [4]int{0, 1, 2, 4}[fhd&3] // dictionary id
	fcs := [4]int{0, 2, 4, 8}[fhd>>6]
	if fcs == 0 && single {
		fcs = 1
	}
	off += fcs
	if off+4 > len(b) {
		return -2
	}
	bh := uint32(b[off]) | uint32(b[off+1])<<8 | uint32(b[off+2])<<16
	if (bh>>1)&3 != 2 {
		return -1
	}
	return int(b[off+3] & 3)
}

func TestLitTypeDiag(t *testing.T) {
	l := openDiagLog(t)
	var heads, texts [5]int
	var headBytes, textBytes [5]int
	eachFramed(t, l, func(v []byte, f *framedValue) {
		if f == nil {
			return
		}
		ty := zstdLitType(v[f.head.off : f.head.off+f.head.stored])
		heads[ty+1]++
		headBytes[ty+1] += f.head.stored
		for _, s := range f.frames {
			ty := zstdLitType(v[s.off : s.off+s.stored])
			texts[ty+1]++
			textBytes[ty+1] += s.stored
		}
	})
	fmt.Println("literal types (not-compressed block, raw, RLE, own table, treeless)")
	fmt.Println("heads", heads, headBytes)
	fmt.Println("texts", texts, textBytes)
}

// TestDictTableDiag re-compresses the text frames' tokens of the log in
// LAZYMEM_LOG_DIR with the log's dictionary as it is and with its literal
// Huffman table replaced by one built from the frames' token bytes with
// every byte value present (so that a frame may reuse it), and prints the
// literal types, the stored bytes and the time to decode every frame
// (fastest of three passes).
func TestDictTableDiag(t *testing.T) {
	l := openDiagLog(t)
	d := l.comp.encDict()
	if d == nil {
		t.Skip("the log has no dictionary")
	}
	var frames [][]byte
	eachFramed(t, l, func(_ []byte, f *framedValue) {
		if f == nil || !f.words {
			return
		}
		for k := range f.frames {
			codes, err := l.comp.frameCodes(f, k, nil)
			if err != nil {
				t.Fatal(err)
			}
			frames = append(frames, codes)
		}
	})
	// The dictionary: magic, id, the literals' Huffman table, the rest.
	_, rest, err := huff0.ReadTable(d.raw[8:], nil)
	if err != nil {
		t.Fatal(err)
	}
	tableLen := len(d.raw) - 8 - len(rest)
	var hist [256]int
	for _, f := range frames {
		for _, b := range f {
			hist[b]++
		}
	}
	total := 0
	for _, n := range hist {
		total += n
	}
	var in []byte
	for sym, n := range hist {
		n = n*100_000/total + 1
		for range n {
			in = append(in, byte(sym))
		}
	}
	var s huff0.Scratch
	if _, _, err := huff0.Compress4X(in, &s); err != nil {
		t.Fatal(err)
	}
	full := slices.Concat(d.raw[:8], s.OutTable, rest)
	fmt.Printf("%d frames; dictionary %d bytes, its table %d bytes; the full table %d bytes\n", len(frames), len(d.raw), tableLen, len(s.OutTable))
	for _, v := range []struct {
		name string
		raw  []byte
	}{{"log's", d.raw}, {"full table", full}} {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderCRC(false), zstd.WithLowerEncoderMem(true), zstd.WithEncoderDict(v.raw))
		if err != nil {
			t.Fatal(err)
		}
		dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderDicts(v.raw))
		if err != nil {
			t.Fatal(err)
		}
		var types [5]int
		var stored int64
		zs := make([][]byte, len(frames))
		start := time.Now()
		for i, f := range frames {
			zs[i] = enc.EncodeAll(f, nil)
			stored += int64(len(zs[i]))
			types[zstdLitType(zs[i])+1]++
		}
		encT := time.Since(start)
		best := time.Duration(1 << 62)
		var buf []byte
		for range 3 {
			start := time.Now()
			for i, z := range zs {
				if buf, err = dec.DecodeAll(z, buf[:0]); err != nil || !bytes.Equal(buf, frames[i]) {
					t.Fatalf("frame %d: %v", i, err)
				}
			}
			best = min(best, time.Since(start))
		}
		fmt.Printf("%-10s literal types %v, stored %d bytes, encode %v, decode %v (%.2f µs a frame)\n", v.name, types, stored,
			encT.Round(time.Millisecond), best.Round(time.Millisecond), float64(best.Nanoseconds())/1000/float64(len(frames)))
		dec.Close()
	}
}
