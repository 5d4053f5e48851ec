//go:build diag

// What a columnar segment body and a store dictionary would save, before
// building either (docs/benchmarks/ingest-context.md, "Size"):
//
//	go test -tags diag ./bench -run TestSegmentLayoutDiag -v

package bench

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/bench/zipf"
	"github.com/lazymem/lazymem/codec"
)

// TestSegmentLayoutDiag packs 100k records of each corpus into segments
// of 32 KiB of encoded records (the log's default), zstd level 3 (its
// default), and prints the stored bytes over the records' text for: the
// log's row body (slots, then the encoded records); a columnar body (time
// deltas, per-segment string tables for agent, session, role, metadata
// keys and values, then the texts); each with a zstd dictionary built from
// records 20k-40k (a disjoint sample) of 32 or 110 KiB; and the text
// column alone. Segment headers count 12 bytes each.
func TestSegmentLayoutDiag(t *testing.T) {
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
		var text, raw int64
		recs := make([]codec.Record, len(c.Docs))
		for i, d := range c.Docs {
			r := codec.Record{Time: d.Time, Agent: d.Agent, Session: d.Session, Role: d.Role, Text: d.Text}
			for _, f := range d.Meta {
				r.Meta = append(r.Meta, codec.Field{Key: f.Key, Values: f.Values})
			}
			recs[i] = r
			text += int64(len(d.Text))
			raw += int64(codec.RecordSize(&r))
		}
		for _, dictKB := range []int{0, 32, 110} {
			opts := []zstd.EOption{zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false)}
			if dictKB > 0 {
				var hist []byte
				var contents [][]byte
				for i := 20000; i < 40000 && len(hist) < dictKB<<10; i += 3 {
					hist = codec.AppendRecord(hist, &recs[i])
				}
				hist = hist[:min(len(hist), dictKB<<10)]
				for lo := 20000; lo < 40000; lo += 150 {
					var b []byte
					for i := lo; i < lo+150; i++ {
						b = codec.AppendRecord(b, &recs[i])
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
			var row, col, textCol int64
			for lo := 0; lo < len(recs); {
				hi, n := lo, 0
				for hi < len(recs) && hi-lo < 512 && n < 32<<10 {
					n += codec.RecordSize(&recs[hi])
					hi++
				}
				body, cols, texts := segmentBodies(recs[lo:hi])
				row += int64(len(enc.EncodeAll(body, nil))) + 12
				col += int64(len(enc.EncodeAll(cols, nil))) + 12
				textCol += int64(len(enc.EncodeAll(texts, nil)))
				lo = hi
			}
			r := func(b int64) float64 { return float64(b) / float64(text) }
			fmt.Printf("%s, records %.2fx their text, dictionary %d KiB: row %.3f, columns %.3f, text column alone %.3f\n",
				name, r(raw), dictKB, r(row), r(col), r(textCol))
		}
	}
}

// segmentBodies returns the row body of recs as the log lays it out, a
// columnar body of the same records and their texts alone.
func segmentBodies(recs []codec.Record) (row, cols, texts []byte) {
	for i := range recs {
		row = binary.AppendUvarint(row, uint64(codec.RecordSize(&recs[i]))+1)
	}
	for i := range recs {
		row = codec.AppendRecord(row, &recs[i])
	}
	var tables [4]map[string]uint64
	for i := range tables {
		tables[i] = map[string]uint64{}
	}
	// ref appends a reference into table k: 0 and the string the first
	// time, 1+index after.
	ref := func(dst []byte, k int, s string) []byte {
		if i, ok := tables[k][s]; ok {
			return binary.AppendUvarint(dst, i+1)
		}
		tables[k][s] = uint64(len(tables[k]))
		dst = binary.AppendUvarint(dst, 0)
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		return append(dst, s...)
	}
	var times, agents, sessions, roles, meta, lens []byte
	prev := int64(0)
	for i := range recs {
		r := &recs[i]
		times = binary.AppendVarint(times, r.Time-prev)
		prev = r.Time
		agents = ref(agents, 0, r.Agent)
		sessions = ref(sessions, 1, r.Session)
		roles = ref(roles, 2, r.Role)
		meta = binary.AppendUvarint(meta, uint64(len(r.Meta)))
		for _, f := range r.Meta {
			meta = ref(meta, 3, f.Key)
			meta = binary.AppendUvarint(meta, uint64(len(f.Values)))
			for _, v := range f.Values {
				meta = ref(meta, 3, v)
			}
		}
		lens = binary.AppendUvarint(lens, uint64(len(r.Text)))
		texts = append(texts, r.Text...)
	}
	for _, c := range [][]byte{times, agents, sessions, roles, meta, lens, texts} {
		cols = append(cols, c...)
	}
	return row, cols, texts
}
