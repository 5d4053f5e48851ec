//go:build diag

// Where a log's bytes go, column by column:
//
//	LAZYMEM_LOG_DIR=/path/to/store/log go test -tags diag ./segment -run TestColumnBytesDiag -v

package segment

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/klauspost/compress/zstd"
)

// TestColumnBytesDiag opens the log in LAZYMEM_LOG_DIR and, over its
// framed segments, sums each head column's raw bytes and its bytes
// compressed alone (zstd level 3 and fastest, no dictionary), the stored
// heads and the stored text frames, and prints them over the texts' bytes.
func TestColumnBytesDiag(t *testing.T) {
	l := openDiagLog(t)
	if err := l.Seal(); err != nil { // what a load left in the tail
		t.Fatal(err)
	}
	enc3, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	enc1, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	names := []string{"deleted", "times", "agents", "sessions", "roles", "meta", "text_lens"}
	var raw, z3, z1 [nCols - 1]int64
	var headRaw, headStored, frames, texts, values, segs, recs int64
	eachFramed(t, l, func(v []byte, f *framedValue) {
		values += int64(len(v))
		if f == nil {
			return
		}
		head, err := l.comp.expand(f, f.head, nil, -1)
		if err != nil {
			t.Fatal(err)
		}
		segs++
		recs += int64(f.count)
		headRaw += int64(f.head.raw)
		headStored += int64(f.head.stored)
		for _, fr := range f.frames {
			frames += int64(fr.stored + 4)
			texts += int64(fr.raw)
		}
		cur, err := openCursor(head, f.count)
		if err != nil {
			t.Fatal(err)
		}
		for i := range nCols - 1 {
			b := cur.cols[i].b
			raw[i] += int64(len(b))
			z3[i] += int64(len(enc3.EncodeAll(b, nil)))
			z1[i] += int64(len(enc1.EncodeAll(b, nil)))
		}
		cur.release()
	})
	r := func(b int64) float64 { return float64(b) / float64(texts) }
	fmt.Printf("%d framed segments, %d records, texts %d bytes; values %d (%.3fx)\n", segs, recs, texts, values, r(values))
	// The log-wide tables the values refer to: names, vocabulary,
	// dictionaries (keys and values).
	for _, p := range []struct {
		name   string
		prefix byte
	}{{"names", prefixName}, {"vocabulary", prefixWords}, {"dictionaries", prefixDict}, {"dictionary ids", prefixDictIDs}} {
		it, err := l.db.NewIter(&pebble.IterOptions{LowerBound: []byte{p.prefix}, UpperBound: []byte{p.prefix + 1}})
		if err != nil {
			t.Fatal(err)
		}
		var n, b int64
		for ok := it.First(); ok; ok = it.Next() {
			n++
			b += int64(len(it.Key()) + len(it.Value()))
		}
		it.Close()
		fmt.Printf("  %-14s %6d keys, %9d bytes (%.4fx); values with it %.4fx\n", p.name, n, b, r(b), r(values+b))
	}
	fmt.Printf("heads raw %d (%.3fx), stored %d (%.3fx); text frames stored %d (%.3fx); headers etc %d (%.3fx)\n",
		headRaw, r(headRaw), headStored, r(headStored), frames, r(frames), values-headStored-frames, r(values-headStored-frames))
	for i, n := range names {
		fmt.Printf("  %-9s raw %9d (%.3fx, %5.1f B/rec)  alone zstd-3 %8d (%.3fx)  zstd-1 %8d (%.3fx)\n", n, raw[i], r(raw[i]),
			float64(raw[i])/float64(recs), z3[i], r(z3[i]), z1[i], r(z1[i]))
	}
}

// TestTextFramesVariantsDiag re-compresses the texts of the framed
// segments of the log in LAZYMEM_LOG_DIR in frames of 4 and 8 KiB, with
// dictionaries built as the log builds its own (from the first 512 KiB of
// texts) with 64 and 128 KiB of history, at the fastest and the default
// level, and prints the stored bytes over the texts'.
func TestTextFramesVariantsDiag(t *testing.T) {
	l := openDiagLog(t)
	var all [][]byte
	var total int64
	eachFramed(t, l, func(_ []byte, f *framedValue) {
		if f != nil {
			var err error
			var texts []byte
			for k := range f.frames {
				if texts, err = l.comp.frame(f, k, texts); err != nil {
					t.Fatal(err)
				}
			}
			all = append(all, texts)
			total += int64(len(texts))
		}
	})
	var sample []byte
	for _, x := range all {
		if len(sample) >= dictSample {
			break
		}
		sample = append(sample, x...)
	}
	for _, hist := range []int{64 << 10, 128 << 10} {
		contents := [][]byte{}
		for o := 0; o < len(sample); o += frameBytes {
			contents = append(contents, sample[o:min(len(sample), o+frameBytes)])
		}
		const piece = 1 << 10
		step := max(piece, len(sample)/(hist/piece))
		var h []byte
		for o := 0; o+piece <= len(sample) && len(h) < hist; o += step {
			h = append(h, sample[o:o+piece]...)
		}
		for _, lvl := range []zstd.EncoderLevel{zstd.SpeedFastest, zstd.SpeedDefault, zstd.SpeedBetterCompression} {
			d, err := zstd.BuildDict(zstd.BuildDictOptions{ID: 1, Contents: contents, History: h, Offsets: [3]int{1, 4, 8}, Level: lvl})
			if err != nil {
				t.Fatal(err)
			}
			enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(lvl), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false), zstd.WithEncoderDict(d))
			for _, fb := range []int{4 << 10, 8 << 10} {
				var stored int64
				for _, x := range all {
					for o := 0; o < len(x); o += fb {
						stored += int64(len(enc.EncodeAll(x[o:min(len(x), o+fb)], nil))) + 4
					}
				}
				fmt.Printf("history %3d KiB, level %-8v, frames %d KiB: %.3fx\n", hist>>10, lvl, fb>>10, float64(stored)/float64(total))
			}
		}
	}
}

// openDiagLog opens the log in LAZYMEM_LOG_DIR for a diag test (skipped
// without it) and closes it when the test ends.
func openDiagLog(t *testing.T) *Log {
	t.Helper()
	dir := os.Getenv("LAZYMEM_LOG_DIR")
	if dir == "" {
		t.Skip("set LAZYMEM_LOG_DIR to a log directory")
	}
	l, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// sealedSegments is a copy of l's list of sealed segments.
func sealedSegments(l *Log) []segMeta {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	return slices.Clone(l.segs)
}

// eachFramed calls fn with each sealed segment's stored value and, for a
// framed segment, its parsed frames (nil for any other kind); the value is
// released when fn returns.
func eachFramed(t *testing.T, l *Log, fn func(v []byte, f *framedValue)) {
	t.Helper()
	for _, m := range sealedSegments(l) {
		v, closer, err := value(l.db, m)
		if err != nil {
			t.Fatal(err)
		}
		var f *framedValue
		if isFramed(v[0]) {
			if f, err = parseFramed(m.first, v); err != nil {
				t.Fatal(err)
			}
		}
		fn(v, f)
		closer.Close()
	}
}

// eachSegmentText calls fn for each of segs with its records' payloads and
// the texts and text lengths columns of their columnar encoding; a segment
// whose records do not encode as columns is skipped. The slices are valid
// only during the call.
func eachSegmentText(t *testing.T, l *Log, segs []segMeta, fn func(m segMeta, payloads [][]byte, texts, lens []byte)) {
	t.Helper()
	var enc colEncoder
	for _, m := range segs {
		d, closer, err := l.read(m, false)
		if err != nil {
			t.Fatal(err)
		}
		payloads := make([][]byte, m.count)
		for k := range payloads {
			payloads[k], _ = d.get(m.first + uint64(k))
		}
		if _, ok := enc.encode(nil, payloads); ok {
			fn(m, payloads, enc.cols[colTexts], enc.cols[colTextLens])
		}
		closer.Close()
	}
}

// TestPrefixUsageDiag prints, for each key prefix of the log in
// LAZYMEM_LOG_DIR, the bytes Pebble's sstables spend on its keys
// (EstimateDiskUsage: data blocks, with their share of the index), and the
// log directory's allocated bytes (du). Run it on a closed store: it opens
// the log without sealing, so what it reads is what the store held.
func TestPrefixUsageDiag(t *testing.T) {
	l := openDiagLog(t)
	var sum uint64
	for _, p := range []struct {
		name   string
		prefix byte
	}{{"tail", prefixTail}, {"segments", prefixSegment}, {"summaries", prefixSegMeta}, {"tombstones", prefixDeleted},
		{"names", prefixName}, {"vocabulary", prefixWords}, {"dictionaries", prefixDict}, {"dictionary ids", prefixDictIDs}, {"m keys", 'm'}} {
		n, err := l.db.EstimateDiskUsage([]byte{p.prefix}, []byte{p.prefix + 1})
		if err != nil {
			t.Fatal(err)
		}
		sum += n
		fmt.Printf("  %-14s %10d bytes\n", p.name, n)
	}
	dir := os.Getenv("LAZYMEM_LOG_DIR")
	fmt.Printf("  %-14s %10d bytes; directory (du, less the space reserve) %d bytes\n", "sum", sum,
		allocated(t, dir, "")-allocated(t, dir, reserveName))
}

// TestHeadLevelsDiag re-compresses the heads of the framed segments of the
// log in LAZYMEM_LOG_DIR with the log's dictionary at zstd's fastest,
// default and better levels, and prints their bytes over the texts' and
// the CPU time each level took.
func TestHeadLevelsDiag(t *testing.T) {
	l := openDiagLog(t)
	d := l.comp.encDict()
	if d == nil {
		t.Skip("the log has no dictionary")
	}
	var heads [][]byte
	var texts int64
	eachFramed(t, l, func(_ []byte, f *framedValue) {
		if f != nil {
			head, err := l.comp.expand(f, f.head, nil, -1)
			if err != nil {
				t.Fatal(err)
			}
			heads = append(heads, head)
			for _, fr := range f.frames {
				texts += int64(fr.raw)
			}
		}
	})
	for _, lv := range []zstd.EncoderLevel{zstd.SpeedFastest, zstd.SpeedDefault, zstd.SpeedBetterCompression} {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(lv), zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderCRC(false), zstd.WithLowerEncoderMem(true), zstd.WithEncoderDict(d.raw))
		if err != nil {
			t.Fatal(err)
		}
		for round := range 2 {
			var n int64
			var buf []byte
			start := time.Now()
			for _, h := range heads {
				buf = enc.EncodeAll(h, buf[:0])
				n += int64(len(buf))
			}
			fmt.Printf("heads at %-8v round %d: %d bytes (%.4fx), %v (%.1f µs a head)\n", lv, round, n, float64(n)/float64(texts),
				time.Since(start).Round(time.Millisecond), float64(time.Since(start).Microseconds())/float64(len(heads)))
		}
	}
}
