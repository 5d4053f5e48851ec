package segment

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/lazymem/lazymem/codec"
)

// BenchmarkZipfLog loads n records of the Zipf corpus into a fresh log on
// disk per op, one writer, batches of 1000, durable, timed until Close
// returns: the log's share of the engine's ingest (the sealing, its word
// coding and compression, on a vocabulary grown as a real load grows it).
// cpu-us/record is the process CPU over the same window per record.
//
//	go test ./segment -run '^$' -bench ZipfLog -benchtime 2x
func BenchmarkZipfLog(b *testing.B) {
	for _, n := range []int{200000} {
		payloads := zipfPayloads(b, n)
		var size int64
		for _, p := range payloads {
			size += int64(len(p))
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(size)
			ctx := context.Background()
			var wall, cpu time.Duration
			for range b.N {
				b.StopTimer()
				dir := b.TempDir()
				b.StartTimer()
				t0, c0 := time.Now(), processCPU()
				l, err := Open(dir, Options{})
				if err != nil {
					b.Fatal(err)
				}
				for lo := 0; lo < len(payloads); lo += 1000 {
					if _, err := l.AppendBatch(ctx, payloads[lo:min(lo+1000, len(payloads))]); err != nil {
						b.Fatal(err)
					}
				}
				if err := l.Close(); err != nil {
					b.Fatal(err)
				}
				wall += time.Since(t0)
				cpu += processCPU() - c0
			}
			b.ReportMetric(float64(n*b.N)/wall.Seconds(), "records/s")
			b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(n*b.N), "cpu-us/record")
		})
	}
}

// BenchmarkWordLookup codes the texts of 200k Zipf records with the
// vocabulary a log grows over them (every word met twice), looking each
// word up in the sealer's table (impl=table) or in a Go map of strings
// (impl=map, the table before it), or only scanning the texts for
// tokens (impl=scan); one op scans every text once.
// cpu-ns/word is the process CPU a word (wall time means little on a
// shared machine).
//
//	go test ./segment -run '^$' -bench WordLookup -count 4
func BenchmarkWordLookup(b *testing.B) {
	payloads := zipfPayloads(b, 200000)
	texts := make([][]byte, len(payloads))
	for i, p := range payloads {
		var r codec.Record
		if _, err := codec.DecodeRecord(p, &r); err != nil {
			b.Fatal(err)
		}
		texts[i] = []byte(r.Text)
	}
	t := newWordTable()
	for _, s := range texts {
		t.grow(s)
	}
	ref := make(map[string]uint32, t.ids.len())
	t.publish()
	snap := t.snap.Load()
	for id := range snap.size() {
		if w, ok := snap.word(uint64(id)); ok {
			ref[string(w)] = uint32(id)
		}
	}
	words := 0
	for _, s := range texts {
		for r := s; len(r) > 0; {
			tok, w := wordToken(r)
			r = r[len(tok):]
			if w {
				words++
			}
		}
	}
	b.Logf("%d words in the vocabulary, %d words in the texts", t.ids.len(), words)
	for _, impl := range []string{"scan", "map", "table"} {
		b.Run("impl="+impl, func(b *testing.B) {
			var found int
			c0 := processCPU()
			for range b.N {
				for _, s := range texts {
					for r := s; len(r) > 0; {
						tok, w := wordToken(r)
						r = r[len(tok):]
						if !w {
							continue
						}
						var ok bool
						switch impl {
						case "scan": // the tokens alone
							ok = true
						case "map":
							_, ok = ref[string(tok)]
						default:
							_, ok = t.ids.get(tok)
						}
						if ok {
							found++
						}
					}
				}
			}
			b.ReportMetric(float64((processCPU()-c0).Nanoseconds())/float64(b.N*words), "cpu-ns/word")
			b.ReportMetric(float64(found)/float64(b.N*words), "hit-share")
		})
	}
}
