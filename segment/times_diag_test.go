//go:build diag

// What the heads' times column could take in other layouts:
//
//	LAZYMEM_LOG_DIR=/path/to/store/log go test -tags diag ./segment -run TestTimesDiag -v

package segment

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/lazymem/lazymem/codec"
)

// TestTimesDiag reads every segment of the log in LAZYMEM_LOG_DIR and
// sums, per layout of its live records' times (exact), the bytes raw and
// compressed alone (zstd-3): the heads' zigzag varint deltas (the log's
// layout); whole seconds as varint deltas beside the nanoseconds within
// the second (4 bytes); and the residuals from the line through the
// segment's first and last time, zigzag, bit-packed at the segment's
// widest.
func TestTimesDiag(t *testing.T) {
	l := openDiagLog(t)
	l.segMu.RLock()
	segs := slices.Clone(l.segs)
	l.segMu.RUnlock()
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	names := []string{"varint deltas (the log's)", "seconds deltas + ns", "line residuals, packed"}
	var raw, z [3]int64
	var recs, texts int64
	zz := func(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }
	for _, m := range segs {
		d, closer, err := l.read(m, false)
		if err != nil {
			t.Fatal(err)
		}
		var times []int64
		for k := range m.count {
			p, ok := d.get(m.first + uint64(k))
			if !ok {
				continue
			}
			var r codec.Record
			if _, err := codec.DecodeRecord(p, &r); err != nil {
				t.Fatal(err)
			}
			times = append(times, r.Time)
			texts += int64(len(r.Text))
		}
		closer.Close()
		if len(times) == 0 {
			continue
		}
		recs += int64(len(times))
		var a, b, c []byte
		prev, prevSec := int64(0), int64(0)
		for _, x := range times {
			a = binary.AppendUvarint(a, zz(x-prev))
			prev = x
			sec := x / 1e9
			b = binary.AppendUvarint(b, zz(sec-prevSec))
			prevSec = sec
		}
		for _, x := range times {
			b = binary.LittleEndian.AppendUint32(b, uint32(x%1e9))
		}
		n := int64(len(times))
		first, last := times[0], times[n-1]
		var res []uint64
		width := 0
		for i, x := range times {
			pred := first
			if n > 1 {
				pred = first + (last-first)*int64(i)/(n-1)
			}
			r := zz(x - pred)
			res = append(res, r)
			width = max(width, 64-bits.LeadingZeros64(r))
		}
		c = binary.AppendUvarint(c, zz(first))
		c = binary.AppendUvarint(c, zz(last-first))
		c = append(c, byte(width))
		var acc uint64
		nb := 0
		for _, r := range res {
			for w := 0; w < width; w++ {
				acc |= (r >> w & 1) << nb
				nb++
				if nb == 64 {
					c = binary.LittleEndian.AppendUint64(c, acc)
					acc, nb = 0, 0
				}
			}
		}
		for ; nb > 0; nb -= 8 {
			c = append(c, byte(acc))
			acc >>= 8
		}
		for i, x := range [][]byte{a, b, c} {
			raw[i] += int64(len(x))
			z[i] += int64(len(enc.EncodeAll(x, nil)))
		}
	}
	for i, n := range names {
		fmt.Printf("%-26s raw %8d (%.2f B/record, %.4fx)  zstd-3 %8d (%.2f B/record, %.4fx)\n", n,
			raw[i], float64(raw[i])/float64(recs), float64(raw[i])/float64(texts),
			z[i], float64(z[i])/float64(recs), float64(z[i])/float64(texts))
	}
}
