package segment

import (
	"fmt"
	"testing"

	"github.com/lazymem/lazymem/bench/zipf"
	"github.com/lazymem/lazymem/codec"
)

// zipfPayloads returns n engine records of the Zipf corpus.
func zipfPayloads(b *testing.B, n int) [][]byte {
	recs, err := zipf.Generate(zipf.Config{Seed: 7, Records: n})
	if err != nil {
		b.Fatal(err)
	}
	var out [][]byte
	for _, r := range recs {
		out = append(out, codec.AppendRecord(nil, &codec.Record{Time: r.Time.UnixNano(), Agent: r.Agent, Session: r.Session,
			Role: r.Role, Text: r.Text, Meta: []codec.Field{{Key: "channel", Values: []string{r.Channel}}}}))
	}
	return out
}

// BenchmarkWords seals one 32 KiB segment (op=seal: the columns, the
// text frames coded and compressed with the log's dictionary, the
// vocabulary grown) and reads one record of it from its stored value
// (op=read: the last record, the head walked and its frame decoded; no
// Pebble, no cache), version 4 (text frames) and version 5 (words) side
// by side, on the workload's and the Zipf corpus's records. Each version
// has its dictionary (and version 5 its vocabulary) built as the log
// builds them from the 512 KiB of text before the segment.
//
//	go test ./segment -run XXX -bench Words
func BenchmarkWords(b *testing.B) {
	for _, corpus := range []string{"workload", "zipf"} {
		var payloads [][]byte
		if corpus == "zipf" {
			payloads = zipfPayloads(b, 8000)
		} else {
			payloads = workloadPayloads(8000)
		}
		// The sample: the records' texts until dictSample bytes.
		var sample []byte
		var recs []sampleRec
		k := 0
		for ; k < len(payloads) && len(sample) < dictSample; k++ {
			var r codec.Record
			if _, err := codec.DecodeRecord(payloads[k], &r); err != nil {
				b.Fatal(err)
			}
			sample = append(sample, r.Text...)
			recs = append(recs, sampleRec{id: uint64(k + 1), end: len(sample)})
		}
		seg, size := payloads[k:], 0
		n := 0
		for n < len(seg) && size < 32<<10 {
			size += len(seg[n])
			n++
		}
		seg = seg[:n]
		for _, version := range []byte{segmentVersionNames, segmentVersionWords} {
			c, err := newCompressor(CompressionZstd, 3)
			if err != nil {
				b.Fatal(err)
			}
			defer c.close()
			c.names, c.words = newNameTable(), newWordTable()
			l := &Log{comp: c, words: c.words, columnsVersion: segmentVersionNames, opts: Options{DisableWords: version != segmentVersionWords}}
			if version == segmentVersionWords {
				c.words.seed(sample)
				c.words.active = true
				c.words.publish()
				c.words.committed()
			}
			raw, _, err := l.buildDict(1, sample, recs)
			if err != nil {
				b.Fatal(err)
			}
			if err := c.addDict(1, raw); err != nil {
				b.Fatal(err)
			}
			var words *wordCoder
			if version == segmentVersionWords {
				words = &wordCoder{ids: c.words.ids}
			}
			e := colEncoder{names: c.names}
			seal := func() []byte {
				body, ok := e.encode(nil, seg)
				if !ok {
					b.Fatal("not records")
				}
				c.names.add(e.pending)
				texts := e.cols[colTexts]
				if words != nil {
					words.misses = words.misses[:0]
				}
				v, err := c.appendFramed(nil, version, n, body, len(texts), words)
				if err != nil {
					b.Fatal(err)
				}
				if words != nil {
					c.words.growFrom(words.misses)
					c.words.publish()
					c.words.committed()
				}
				return v
			}
			v := seal()
			b.Run(fmt.Sprintf("corpus=%s/op=seal/version=%d", corpus, version), func(b *testing.B) {
				b.ReportAllocs()
				for range b.N {
					seal()
				}
				b.ReportMetric(float64(len(v)), "stored-B")
				b.ReportMetric(float64(size)/float64(len(v)), "ratio")
			})
			ids := []uint64{uint64(n)}
			b.Run(fmt.Sprintf("corpus=%s/op=read/version=%d", corpus, version), func(b *testing.B) {
				b.ReportAllocs()
				for range b.N {
					if err := c.readFramed(1, v, uint32(n), ids, func(uint64, []byte, bool, error) error { return nil }); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
