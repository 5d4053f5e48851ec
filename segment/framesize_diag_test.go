//go:build diag

// The text frame's size against the log's size and a cold read's
// decompression:
//
//	LAZYMEM_LOG_DIR=/path/to/store/log go test -tags diag ./segment -run TestFrameSizeDiag -v

package segment

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestFrameSizeDiag re-compresses the texts of the framed segments of the
// log in LAZYMEM_LOG_DIR (at most 4000 segments, spread over the log)
// with a dictionary built as the sealer builds it (from their first 512
// KiB of text) into text frames of 1, 2, 3 and 4 KiB, and prints their
// stored bytes (each frame with its 4-byte checksum) over the texts'
// bytes, the time to decompress one frame of each segment, and the
// stored values' bytes as sealed.
func TestFrameSizeDiag(t *testing.T) {
	l := openDiagLog(t)
	segs := sealedSegments(l)
	step := max(1, (len(segs)+3999)/4000)
	var picked []segMeta
	var values int64
	for i := 0; i < len(segs); i += step {
		picked = append(picked, segs[i])
		values += int64(segs[i].stored)
	}
	var all [][]byte
	var sample []byte
	var recs []sampleRec
	var total int64
	eachSegmentText(t, l, picked, func(m segMeta, payloads [][]byte, texts, lens []byte) {
		texts = slices.Clone(texts)
		all = append(all, texts)
		total += int64(len(texts))
		if len(sample) < dictSample {
			recs = appendSampleRecs(recs, m.first, payloads, lens, len(sample))
			sample = append(sample, texts...)
		}
	})
	raw, _, err := buildDict(1, sample, recs)
	if err != nil {
		t.Fatal(err)
	}
	c, err := newCompressor(CompressionZstd, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	if err := c.addDict(1, raw); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("%d segments, texts %d bytes, values as sealed %.4fx\n", len(all), total, float64(values)/float64(total))
	sizes := []int{1 << 10, 2 << 10, 3 << 10, 4 << 10}
	stored := make([]int64, len(sizes))
	frames := make([][][]byte, len(sizes)) // per size, one frame of each segment
	for s, fb := range sizes {
		for k, x := range all {
			n := (len(x) + fb - 1) / fb
			for o := 0; o < len(x); o += fb {
				z, err := c.compress(nil, x[o:min(len(x), o+fb)], c.encDict())
				if err != nil {
					t.Fatal(err)
				}
				stored[s] += int64(len(z)) + 4
				if o/fb == k%n {
					frames[s] = append(frames[s], z)
				}
			}
		}
	}
	// Decompression, the sizes alternated over five rounds, the fastest
	// round of each kept (a shared machine's load only slows a round).
	best := make([]time.Duration, len(sizes))
	var out []byte
	for range 5 {
		for s := range sizes {
			t0 := time.Now()
			for _, z := range frames[s] {
				if out, err = c.decompress(CompressionZstd, 1, out[:0], z); err != nil {
					t.Fatal(err)
				}
			}
			if el := time.Since(t0); best[s] == 0 || el < best[s] {
				best[s] = el
			}
		}
	}
	for s, fb := range sizes {
		fmt.Printf("frames %d KiB: stored %.4fx of the texts, decompress %.1f µs a frame (best of 5 rounds)\n",
			fb>>10, float64(stored[s])/float64(total), float64(best[s].Nanoseconds())/1e3/float64(len(frames[s])))
	}
}
