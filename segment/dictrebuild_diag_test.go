//go:build diag

// Compact's cost with and without a dictionary rebuild:
//
//	LAZYMEM_LOG_DIR=/path/to/store/log go test -tags diag ./segment -run TestCompactRebuildDiag -v

package segment

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/lazymem/lazymem/codec"
)

// TestCompactRebuildDiag copies the log in LAZYMEM_LOG_DIR and times
// Compact after deleting 100 records none of which the dictionary holds
// ("plain"), and after deleting the same 99 and one it holds
// ("rebuild"), alternating, three rounds each.
func TestCompactRebuildDiag(t *testing.T) {
	dir := os.Getenv("LAZYMEM_LOG_DIR")
	if dir == "" {
		t.Skip("set LAZYMEM_LOG_DIR to a log directory")
	}
	ctx := context.Background()
	for round := range 3 {
		for _, mode := range []string{"plain", "rebuild"} {
			tmp := filepath.Join(t.TempDir(), "log")
			if err := os.CopyFS(tmp, os.DirFS(dir)); err != nil {
				t.Fatal(err)
			}
			l, err := Open(tmp, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Seal(); err != nil {
				t.Fatal(err)
			}
			cur := l.comp.encDict()
			hist := l.dict.hist[cur.id()]
			if cur == nil || len(hist) == 0 {
				t.Fatalf("dictionary %v, %d records in its history: rebuild the store with this code", cur, len(hist))
			}
			r := rand.New(rand.NewPCG(uint64(round), 1))
			var del []uint64
			for len(del) < 99 {
				id := 1 + r.Uint64N(l.Next()-2)
				if !slices.Contains(hist, id) && !slices.Contains(del, id) {
					del = append(del, id)
				}
			}
			if mode == "rebuild" {
				del = append(del, hist[r.IntN(len(hist))])
			}
			if err := l.Delete(ctx, del); err != nil {
				t.Fatal(err)
			}
			before := l.Metrics().SegmentBytes
			start := time.Now()
			if err := l.Compact(ctx); err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			if err := l.WaitPurged(ctx, time.Minute); err != nil {
				t.Fatal(err)
			}
			all := time.Since(start)
			after := l.Metrics().SegmentBytes
			fmt.Printf("round %d %-7s: Compact %v (with WaitPurged %v), dictionary %d (%d records of %d) -> %d, segments %d -> %d bytes\n",
				round, mode, took.Round(time.Millisecond), all.Round(time.Millisecond), cur.id(), len(hist), l.Next()-1, l.comp.encDict().id(), before, after)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			os.RemoveAll(tmp)
		}
	}
}

// TestDictVariantsDiag re-compresses the texts of the log in
// LAZYMEM_LOG_DIR as text frames with dictionaries built from the first
// 512 KiB of text (as the sealer does) or from live text spread over the
// whole log (as Compact's rebuild does), of several history sizes, at
// several levels and frame sizes, and prints the stored bytes over the
// texts' bytes; then an order-0 word entropy bound of the texts.
func TestDictVariantsDiag(t *testing.T) {
	l := openDiagLog(t)
	segs := sealedSegments(l)
	var all [][]byte // each segment's texts
	var first []byte
	var firstRecs []sampleRec
	var total int64
	eachSegmentText(t, l, segs, func(m segMeta, payloads [][]byte, texts, lens []byte) {
		texts = slices.Clone(texts)
		all = append(all, texts)
		total += int64(len(texts))
		if len(first) < dictSample {
			firstRecs = appendSampleRecs(firstRecs, m.first, payloads, lens, len(first))
			first = append(first, texts...)
		}
	})
	whole, wholeRecs, err := l.liveSample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The sealer's history before the ids were kept: 1 KiB windows at
	// evenly spaced offsets.
	windows := func(sample []byte, hist int) []byte {
		step := max(dictPiece, len(sample)/(hist/dictPiece))
		var h []byte
		for o := 0; o+dictPiece <= len(sample) && len(h) < hist; o += step {
			h = append(h, sample[o:o+dictPiece]...)
		}
		return h
	}
	type variant struct {
		name   string
		sample []byte
		recs   []sampleRec
	}
	for _, v := range []variant{{"first 512 KiB, windows", first, nil}, {"first 512 KiB, records", first, firstRecs}, {"whole log, records", whole, wholeRecs}} {
		for _, hist := range []int{64 << 10, 112 << 10} {
			var contents [][]byte
			for o := 0; o < len(v.sample); o += frameBytes {
				contents = append(contents, v.sample[o:min(len(v.sample), o+frameBytes)])
			}
			var h []byte
			if v.recs == nil {
				h = windows(v.sample, hist)
			} else {
				// buildDict's pieces, for this history size.
				step := max(dictPiece, len(v.sample)/(hist/dictPiece))
				r, prevEnd := 0, 0
				for o := 0; o < len(v.sample) && len(h) < hist; o += step {
					for r < len(v.recs) && v.recs[r].end <= o {
						r++
					}
					if r == len(v.recs) {
						break
					}
					start := 0
					if r > 0 {
						start = v.recs[r-1].end
					}
					if start < prevEnd {
						start = o
					}
					end := min(len(v.sample), start+dictPiece)
					prevEnd = end
					h = append(h, v.sample[start:end]...)
					o = max(o, end-step)
				}
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
					fmt.Printf("%-24s history %3d KiB, level %-8v, frames %d KiB: %.4fx\n", v.name, hist>>10, lvl, fb>>10, float64(stored)/float64(total))
				}
			}
		}
	}
	// Order-0 word entropy: what a coder of words from a log-wide
	// vocabulary (each word by its frequency, the separators free) could
	// reach, the vocabulary itself not counted.
	counts := map[string]int{}
	words := 0
	for _, x := range all {
		for _, w := range strings.Fields(string(x)) {
			counts[w]++
			words++
		}
	}
	bits := 0.0
	var vocab int
	for w, c := range counts {
		p := float64(c) / float64(words)
		bits -= float64(c) * math.Log2(p)
		vocab += len(w) + 1
	}
	fmt.Printf("order-0 words: %d words, %d distinct (%d bytes), %.2f bits a word: %.4fx of the texts (vocabulary %.4fx)\n",
		words, len(counts), vocab, bits/float64(words), bits/8/float64(total), float64(vocab)/float64(total))
}

// BenchmarkFrameDictSize decodes one 4 KiB text frame compressed with a
// dictionary of 64 or 112 KiB of history (what a cold fetch of one record
// pays for its frame), the texts from TestFramedDictionary's generator.
func BenchmarkFrameDictSize(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	var sample []byte
	var recs []sampleRec
	for id := uint64(1); len(sample) < dictSample+frameBytes; id++ {
		var c codec.Record
		if _, err := codec.DecodeRecord(chatRecord(r, 5+r.IntN(30)), &c); err != nil {
			b.Fatal(err)
		}
		sample = append(sample, c.Text...)
		recs = append(recs, sampleRec{id: id, end: len(sample)})
	}
	frame := sample[len(sample)-frameBytes:]
	for _, hist := range []int{64 << 10, 112 << 10} {
		b.Run(fmt.Sprintf("history=%dKiB", hist>>10), func(b *testing.B) {
			raw, _, err := buildDictSized(1, sample[:dictSample], recs, hist)
			if err != nil {
				b.Fatal(err)
			}
			c, err := newCompressor(CompressionZstd, 3)
			if err != nil {
				b.Fatal(err)
			}
			defer c.close()
			if err := c.addDict(1, raw); err != nil {
				b.Fatal(err)
			}
			z, err := c.compress(nil, frame, c.encDict())
			if err != nil {
				b.Fatal(err)
			}
			var out []byte
			b.ResetTimer()
			for range b.N {
				if out, err = c.decompress(CompressionZstd, 1, out[:0], z); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(z)), "stored-bytes")
		})
	}
}
