package segment

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/codec"
)

// BenchmarkColdRead reads one random record of 20k workload records
// through GetMany with a log cache too small to keep anything (1 byte):
// every read is a cold candidate's (the OS page cache and Pebble's block
// cache are warm). layout=columns is segment version 2 (the whole
// segment decompressed and rebuilt), framed version 4 (its head, whose
// names are ids in the log's table, and the text frame holding the
// record), framed-v3 version 3 (names in the head), framed-nodict
// version 4 without the log's dictionary, words version 6 (the text
// frames word-coded, each decoded up to the record's end, the head's
// times and text lengths packed; the first 512 KiB of text sealed as
// version 4), words-v5 version 5 (the same, the head as version 4's).
//
//	go test ./segment -run XXX -bench ColdRead
func BenchmarkColdRead(b *testing.B) {
	payloads := workloadPayloads(20000)
	for _, layout := range []string{"columns", "framed", "framed-v3", "framed-nodict", "words", "words-v5"} {
		b.Run("layout="+layout, func(b *testing.B) {
			l, err := Open(b.TempDir(), Options{CacheBytes: 1, DisableBackgroundSeal: true, DisableDictionary: layout == "framed-nodict",
				DisableWords: !strings.HasPrefix(layout, "words")})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			l.noPacking = layout == "words-v5"
			switch layout {
			case "columns":
				l.columnsVersion = segmentVersionColumns
			case "framed-v3":
				l.columnsVersion = segmentVersionFrames
			}
			for lo := 0; lo < len(payloads); lo += 1000 {
				if _, err := l.AppendBatch(ctx, payloads[lo:lo+1000]); err != nil {
					b.Fatal(err)
				}
			}
			if err := l.Seal(); err != nil {
				b.Fatal(err)
			}
			var stored int64
			for _, m := range l.segs {
				stored += int64(m.stored)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			ids := []uint64{0}
			n := 0
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				ids[0] = 1 + rng.Uint64N(uint64(len(payloads)))
				if err := l.GetMany(ids, func(uint64, []byte) error { n++; return nil }); err != nil {
					b.Fatal(err)
				}
			}
			if n != b.N {
				b.Fatalf("%d records read of %d", n, b.N)
			}
			b.ReportMetric(float64(stored)/float64(len(l.segs)), "stored-B/segment")
		})
	}
}

// BenchmarkSealBody times compressing one 32 KiB segment of workload
// records, as the sealer does, per layout: version 2 (one zstd frame),
// framed (head and 4 KiB text frames) with and without the dictionary
// (built from the first 512 KiB of text, as the log builds it).
//
//	go test ./segment -run XXX -bench SealBody
func BenchmarkSealBody(b *testing.B) {
	payloads := workloadPayloads(20000)
	var e colEncoder
	var segs [][]byte
	var texts []int
	var sample []byte
	for lo := 0; lo < len(payloads); {
		hi, n := lo, 0
		for hi < len(payloads) && n < 32<<10 {
			n += len(payloads[hi])
			hi++
		}
		body, ok := e.encode(nil, payloads[lo:hi])
		if !ok {
			b.Fatal("not records")
		}
		segs = append(segs, body)
		texts = append(texts, len(e.cols[colTexts]))
		if len(sample) < dictSample {
			sample = append(sample, e.cols[colTexts]...)
		}
		lo = hi
	}
	for _, layout := range []string{"columns", "framed", "framed-nodict", "framed-l1", "framed-l2"} {
		b.Run("layout="+layout, func(b *testing.B) {
			lvl := 3
			switch layout {
			case "framed-l1":
				lvl = 1
			case "framed-l2":
				lvl = 2
			}
			c, err := newCompressor(CompressionZstd, lvl)
			if err != nil {
				b.Fatal(err)
			}
			defer c.close()
			if layout != "columns" && layout != "framed-nodict" {
				raw, _, err := buildDict(1, sample, []sampleRec{{id: 1, end: len(sample)}})
				if err != nil {
					b.Fatal(err)
				}
				if err := c.addDict(1, raw); err != nil {
					b.Fatal(err)
				}
			}
			var dst []byte
			var stored int64
			b.ResetTimer()
			for i := range b.N {
				k := i % len(segs)
				if layout == "columns" {
					dst, err = c.appendSegment(dst[:0], segmentVersionColumns, 100, segs[k])
				} else {
					dst, err = c.appendFramed(dst[:0], segmentVersionFrames, 100, segs[k], texts[k], nil)
				}
				if err != nil {
					b.Fatal(err)
				}
				stored += int64(len(dst))
			}
			b.ReportMetric(float64(stored)/float64(b.N), "stored-B/segment")
		})
	}
}

// workloadPayloads returns n records of the seeded workload as the engine
// stores them.
func workloadPayloads(n int) [][]byte {
	g := workload.New(workload.Config{Seed: 1, Records: n})
	var r workload.Record
	var cr codec.Record
	var payloads [][]byte
	for g.Next(&r) {
		cr.Time = r.Time.UnixNano()
		cr.Agent, cr.Session, cr.Role, cr.Text = r.Agent, r.Session, r.Role, r.Text
		cr.Meta = cr.Meta[:0]
		keys := make([]string, 0, len(r.Meta))
		for k := range r.Meta {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			cr.Meta = append(cr.Meta, codec.Field{Key: k, Values: r.Meta[k]})
		}
		payloads = append(payloads, codec.AppendRecord(nil, &cr))
	}
	return payloads
}

// BenchmarkReadFramed reads one record (the last of its segment: the
// whole head walked) of a 32 KiB segment of workload records from its
// stored value, no Pebble, no cache: version 3 (names in the head) and
// version 4 (names as ids in the log's table), side by side.
//
//	go test ./segment -run XXX -bench ReadFramed
func BenchmarkReadFramed(b *testing.B) {
	payloads := workloadPayloads(2000)
	n, size := 0, 0
	for n < len(payloads) && size < 32<<10 {
		size += len(payloads[n])
		n++
	}
	for _, version := range []byte{segmentVersionFrames, segmentVersionNames} {
		b.Run(fmt.Sprintf("version=%d", version), func(b *testing.B) {
			c, err := newCompressor(CompressionZstd, 3)
			if err != nil {
				b.Fatal(err)
			}
			defer c.close()
			c.names = newNameTable()
			e := colEncoder{}
			if version == segmentVersionNames {
				e.names = c.names
			}
			body, ok := e.encode(nil, payloads[:n])
			if !ok {
				b.Fatal("not records")
			}
			c.names.add(e.pending)
			v, err := c.appendFramed(nil, version, n, body, len(e.cols[colTexts]), nil)
			if err != nil {
				b.Fatal(err)
			}
			ids := []uint64{uint64(n)}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := c.readFramed(1, v, uint32(n), ids, func(uint64, []byte, bool, error) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(v)), "stored-B")
		})
	}
}

// BenchmarkColdOpenRead reads 50 random records through one GetMany right
// after the log opens: a new process's first read of a recall's
// candidates (the log's caches and Pebble's block cache empty, the OS
// page cache warm), each record in a segment of its own on a large log.
// The reopen is not timed; cpu-us/op is the process's CPU over the timed
// reads, open-ms/op the reopen's wall time. The log is LAZYMEM_LOG_DIR's (e.g. an engine benchmark store's
// log directory, closed) or 200k workload records built here.
//
//	LAZYMEM_LOG_DIR=DIR/zipf-n=1000000/log go test ./segment -run XXX -bench ColdOpenRead -benchtime 200x
func BenchmarkColdOpenRead(b *testing.B) {
	dir := os.Getenv("LAZYMEM_LOG_DIR")
	if dir == "" {
		dir = b.TempDir()
		l, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		payloads := workloadPayloads(200000)
		for lo := 0; lo < len(payloads); lo += 1000 {
			if _, err := l.AppendBatch(ctx, payloads[lo:min(len(payloads), lo+1000)]); err != nil {
				b.Fatal(err)
			}
		}
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	ids := make([]uint64, 50)
	var cpu, open time.Duration
	n := 0
	b.ReportAllocs()
	b.StopTimer()
	for range b.N {
		t0 := time.Now()
		l, err := Open(dir, Options{DisableBackgroundSeal: true})
		open += time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		l.segMu.RLock()
		sealed := l.sealed
		l.segMu.RUnlock()
		for k := range ids {
			ids[k] = 1 + rng.Uint64N(sealed-1)
		}
		slices.Sort(ids)
		c0 := processCPU()
		b.StartTimer()
		err = l.GetMany(ids, func(uint64, []byte) error { n++; return nil })
		b.StopTimer()
		cpu += processCPU() - c0
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/op")
	b.ReportMetric(float64(open.Microseconds())/1e3/float64(b.N), "open-ms/op")
	b.ReportMetric(float64(n)/float64(b.N), "records/op")
}
