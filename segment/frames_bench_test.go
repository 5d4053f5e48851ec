package segment

import (
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/codec"
)

// BenchmarkColdRead reads one random record of 20k workload records
// through GetMany with a log cache too small to keep anything (1 byte):
// every read is a cold candidate's (the OS page cache and Pebble's block
// cache are warm). layout=columns is segment version 2 (the whole
// segment decompressed and rebuilt), framed version 3 (its head and the
// text frame holding the record), framed-nodict without the log's
// dictionary.
//
//	go test ./segment -run XXX -bench ColdRead
func BenchmarkColdRead(b *testing.B) {
	g := workload.New(workload.Config{Seed: 1, Records: 20000})
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
	for _, layout := range []string{"columns", "framed", "framed-nodict"} {
		b.Run("layout="+layout, func(b *testing.B) {
			l, err := Open(b.TempDir(), Options{CacheBytes: 1, DisableBackgroundSeal: true, DisableDictionary: layout == "framed-nodict"})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			if layout == "columns" {
				l.columnsVersion = segmentVersionColumns
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
