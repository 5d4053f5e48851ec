package engine

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/lazymem/lazymem/bench/workload"
)

// countFS counts the bytes written through it.
type countFS struct {
	vfs.FS
	n *atomic.Int64
}

type countFile struct {
	vfs.File
	n *atomic.Int64
}

func (f countFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.n.Add(int64(n))
	return n, err
}

func (f countFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	f.n.Add(int64(n))
	return n, err
}

func (c countFS) Create(name string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := c.FS.Create(name, cat)
	if err != nil {
		return nil, err
	}
	return countFile{f, c.n}, nil
}

func (c countFS) OpenReadWrite(name string, cat vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := c.FS.OpenReadWrite(name, cat, opts...)
	if err != nil {
		return nil, err
	}
	return countFile{f, c.n}, nil
}

func (c countFS) ReuseForWrite(old, name string, cat vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := c.FS.ReuseForWrite(old, name, cat)
	if err != nil {
		return nil, err
	}
	return countFile{f, c.n}, nil
}

// BenchmarkForget forgets a tenth of a store's records (every tenth id:
// every log segment holds some, and most have a successor in their session
// to re-index) and compacts. Each iteration builds a fresh store
// (untimed). Reported: forget-ms and compact-ms (wall time of Forget and
// of Compact), written-MB (bytes written to the filesystem by both,
// rewritten segments, index and Pebble files included) and the log's
// disk-MB before and after.
//
//	go test ./engine -run '^$' -bench 'BenchmarkForget/records=100000' -benchtime 1x
func BenchmarkForget(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("records=%d/forget=%d", n, n/10), func(b *testing.B) {
			batch := workloadBatch(b, n)
			ctx := context.Background()
			var forgetT, compactT time.Duration
			var written, before, after int64
			for range b.N {
				b.StopTimer()
				var cnt atomic.Int64
				o := benchOptions(64 << 20)
				o.FS = countFS{vfs.Default, &cnt}
				db, err := Open(b.TempDir(), o)
				if err != nil {
					b.Fatal(err)
				}
				for lo := 0; lo < len(batch); lo += 10_000 {
					if _, err := db.AppendBatch(ctx, batch[lo:min(lo+10_000, len(batch))]); err != nil {
						b.Fatal(err)
					}
				}
				if err := db.log.Seal(); err != nil {
					b.Fatal(err)
				}
				ids := make([]uint64, 0, n/10)
				for id := uint64(1); id <= uint64(n); id += 10 {
					ids = append(ids, id)
				}
				before += int64(db.Metrics().Log.DiskBytes)
				w0 := cnt.Load()
				b.StartTimer()
				t0 := time.Now()
				res, err := db.Forget(ctx, Selector{IDs: ids})
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if err := db.Compact(ctx); err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				b.StopTimer()
				forgetT += t1.Sub(t0)
				compactT += t2.Sub(t1)
				written += cnt.Load() - w0
				after += int64(db.Metrics().Log.DiskBytes)
				if res.Forgotten != len(ids) {
					b.Fatalf("forgot %d of %d", res.Forgotten, len(ids))
				}
				if err := db.Close(); err != nil {
					b.Fatal(err)
				}
			}
			N := float64(b.N)
			b.ReportMetric(float64(forgetT.Milliseconds())/N, "forget-ms")
			b.ReportMetric(float64(compactT.Milliseconds())/N, "compact-ms")
			b.ReportMetric(float64(written)/N/(1<<20), "written-MB")
			b.ReportMetric(float64(before)/N/(1<<20), "disk-MB-before")
			b.ReportMetric(float64(after)/N/(1<<20), "disk-MB-after")
		})
	}
}

// BenchmarkForgetOne forgets one record at a time from the middle of a
// store's history, each with a live successor in its session (so each
// Forget re-indexes what inherited the record's words), as a user deletes
// a message. The store is built once (untimed); an op is one Forget. With
// recalled, a lazy recall of the record's text (untimed) has embedded it
// first, so Forget must learn whether another record of its agent
// constructs the same text before it drops the cached vector. Reported:
// reindexed records an op.
//
//	go test ./engine -run '^$' -bench 'BenchmarkForgetOne/records=1000000/' -benchtime 20x
func BenchmarkForgetOne(b *testing.B) {
	for _, c := range []struct {
		n        int
		recalled bool
	}{{100_000, false}, {100_000, true}, {1_000_000, false}, {1_000_000, true}} {
		n := c.n
		b.Run(fmt.Sprintf("records=%d/recalled=%v", n, c.recalled), func(b *testing.B) {
			db, batch, ids := forgetStore(b, n)
			ctx := context.Background()
			reindexed := 0
			b.ResetTimer()
			for i := range b.N {
				id := ids[i%len(ids)]
				if c.recalled {
					b.StopTimer()
					r := batch[id-1]
					if _, err := db.Recall(ctx, Query{Agent: r.Agent, Text: r.Text, Mode: ModeLazy}); err != nil {
						b.Fatal(err)
					}
					if has, err := db.cache.has(cacheKey(r.Agent, db.construct(&r))); err != nil || !has {
						b.Fatalf("record %d not embedded by its recall (%v)", id, err)
					}
					b.StartTimer()
				}
				res, err := db.Forget(ctx, Selector{Agent: batch[id-1].Agent, IDs: []uint64{id}})
				if err != nil {
					b.Fatal(err)
				}
				reindexed += res.Reindexed
			}
			b.StopTimer()
			b.ReportMetric(float64(reindexed)/float64(b.N), "reindexed/op")
		})
	}
}

// forgetStore is a settled store of n workload records (seed 5), closed
// when b ends, and records from the middle of its history, 1,009 ids
// apart, each followed in its session by a later record.
func forgetStore(b *testing.B, n int) (*DB, []Record, []uint64) {
	batch := workloadBatch(b, n)
	ctx := context.Background()
	db, err := Open(b.TempDir(), benchOptions(64<<20))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	for lo := 0; lo < len(batch); lo += 10_000 {
		if _, err := db.AppendBatch(ctx, batch[lo:min(lo+10_000, len(batch))]); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.Settle(); err != nil {
		b.Fatal(err)
	}
	next := map[[2]string]bool{}
	var ids []uint64
	for i := len(batch) - 1; i >= 0; i-- {
		k := [2]string{batch[i].Agent, batch[i].Session}
		if next[k] && i >= n/4 && i%1009 == 0 {
			ids = append(ids, uint64(i+1))
		}
		next[k] = true
	}
	return db, batch, ids
}

// workloadBatch returns n workload records (seed 5) as engine records.
func workloadBatch(b *testing.B, n int) []Record {
	recs, err := workload.Records(workload.Config{Seed: 5, Records: n})
	if err != nil {
		b.Fatal(err)
	}
	batch := make([]Record, len(recs))
	for i, r := range recs {
		batch[i] = Record{Time: r.Time, Agent: r.Agent, Session: r.Session, Role: r.Role, Text: r.Text, Meta: r.Meta}
	}
	return batch
}

// BenchmarkCompactAfterForget: a Compact after a Forget of one record
// with a later record in its session (untimed), over a settled store of
// the workload's records: what an hourly compaction costs when anything
// was forgotten (the log rewrites the segments holding the record, the
// index the segment files holding it or its successor's old postings).
func BenchmarkCompactAfterForget(b *testing.B) {
	for _, c := range []struct {
		n, recalls int
		reopen     bool
	}{{100_000, 0, false}, {1_000_000, 0, false}, {1_000_000, 3000, false}, {1_000_000, 0, true}} {
		n := c.n
		name := fmt.Sprintf("records=%d", n)
		if c.recalls > 0 {
			// the embedding cache filled by lazy recalls first
			name += fmt.Sprintf("/recalls=%d", c.recalls)
		}
		if c.reopen {
			// the store closed and opened again before each op (untimed):
			// every op is the first Compact of the store's process
			name += "/reopen"
		}
		b.Run(name, func(b *testing.B) {
			db, batch, ids := forgetStore(b, n)
			ctx := context.Background()
			if c.reopen {
				b.Cleanup(func() { db.Close() })
			}
			for i := range c.recalls {
				r := batch[(i*7919)%len(batch)]
				if _, err := db.Recall(ctx, Query{Agent: r.Agent, Text: r.Text, Mode: ModeLazy}); err != nil {
					b.Fatal(err)
				}
			}
			db.cache.settle()
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				if c.reopen {
					dir := db.dir
					if err := db.Close(); err != nil {
						b.Fatal(err)
					}
					var err error
					if db, err = Open(dir, benchOptions(64<<20)); err != nil {
						b.Fatal(err)
					}
				}
				id := ids[i%len(ids)]
				if _, err := db.Forget(ctx, Selector{Agent: batch[id-1].Agent, IDs: []uint64{id}}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if err := db.Compact(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
