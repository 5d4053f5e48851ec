//go:build diag

package bench

import (
	"fmt"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/bench/zipf"
	"github.com/lazymem/lazymem/codec"
)

// TestTextFramesDiag (go test -tags diag ./bench -run TestTextFramesDiag -v):
// the columnar body of 32 KiB segments with its text
// column cut into independent zstd frames of F KiB (the other columns one
// frame), with and without a dictionary built from a disjoint sample.
func TestTextFramesDiag(t *testing.T) {
	for _, name := range []string{"zipf", "workload"} {
		var c *Corpus
		var err error
		if name == "zipf" {
			c, err = LoadZipf(zipf.Config{Seed: 20261201, Records: 100000}, 1, 17)
		} else {
			c, err = Load(workload.Config{Seed: 1, Records: 100000}, 1, 1)
		}
		if err != nil {
			t.Fatal(err)
		}
		var text int64
		recs := make([]codec.Record, len(c.Docs))
		for i, d := range c.Docs {
			r := codec.Record{Time: d.Time, Agent: d.Agent, Session: d.Session, Role: d.Role, Text: d.Text}
			for _, f := range d.Meta {
				r.Meta = append(r.Meta, codec.Field{Key: f.Key, Values: f.Values})
			}
			recs[i] = r
			text += int64(len(d.Text))
		}
		for _, dictKB := range []int{0, 16, 64} {
			opts := []zstd.EOption{zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false)}
			if dictKB > 0 {
				var hist []byte
				var contents [][]byte
				for i := 20000; i < 40000 && len(hist) < dictKB<<10; i += 3 {
					hist = append(hist, recs[i].Text...)
				}
				hist = hist[:min(len(hist), dictKB<<10)]
				for lo := 20000; lo < 40000; lo += 30 {
					var b []byte
					for i := lo; i < lo+30; i++ {
						b = append(b, recs[i].Text...)
					}
					contents = append(contents, b)
				}
				d, err := zstd.BuildDict(zstd.BuildDictOptions{ID: 1, Contents: contents, History: hist, Offsets: [3]int{1, 4, 8}, Level: zstd.SpeedDefault})
				if err != nil {
					t.Fatal(err)
				}
				opts = append(opts, zstd.WithEncoderDict(d))
			}
			enc, err := zstd.NewWriter(nil, opts...)
			if err != nil {
				t.Fatal(err)
			}
			for _, fkb := range []int{2, 4, 8, 32} {
				var col int64
				for lo := 0; lo < len(recs); {
					hi, n := lo, 0
					for hi < len(recs) && hi-lo < 512 && n < 32<<10 {
						n += codec.RecordSize(&recs[hi])
						hi++
					}
					_, cols, texts := segmentBodies(recs[lo:hi])
					head := cols[:len(cols)-len(texts)]
					col += int64(len(enc.EncodeAll(head, nil))) + 16
					for o := 0; o < len(texts); o += fkb << 10 {
						col += int64(len(enc.EncodeAll(texts[o:min(len(texts), o+fkb<<10)], nil))) + 7
					}
					lo = hi
				}
				fmt.Printf("%s dict %d KiB frames %d KiB: %.3f\n", name, dictKB, fkb, float64(col)/float64(text))
			}
		}
	}
}
