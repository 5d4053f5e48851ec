//go:build diag

// The log alone (segment.Log, no index, no engine) over a corpus: its
// allocated blocks (du, less the space reserve) during the load, after it,
// after Close and after a reopen, over the records' text:
//
//	LAZYMEM_BENCH_CORPUS=zipf LAZYMEM_BENCH_N=200000 LAZYMEM_BENCH_CACHE=/tmp/logsize \
//	    LAZYMEM_LOG_MEMTABLE_MB=0 (the default: Options.MemTableBytes's) \
//	    go test -tags diag ./bench -run TestLogSizeDiag -v

package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/bench/zipf"
	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/segment"
)

func TestLogSizeDiag(t *testing.T) {
	n := envInt("LAZYMEM_BENCH_N", 200000)
	var c *Corpus
	var err error
	switch corpus := os.Getenv("LAZYMEM_BENCH_CORPUS"); corpus {
	case "", "zipf":
		c, err = LoadZipf(zipf.Config{Seed: zipfSeed(), Records: n}, 1, zipfQuerySeed)
	case "workload":
		c, err = Load(workload.Config{Seed: 1, Records: n}, 1, 1)
	default:
		t.Fatalf("LAZYMEM_BENCH_CORPUS=%q: want zipf or workload", corpus)
	}
	if err != nil {
		t.Fatal(err)
	}
	base := os.Getenv("LAZYMEM_BENCH_CACHE")
	if base == "" {
		base = t.TempDir()
	}
	dir := filepath.Join(base, "log")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	opts := segment.Options{MemTableBytes: uint64(envInt("LAZYMEM_LOG_MEMTABLE_MB", 0)) << 20}
	l, err := segment.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	smp := sampleDisk(dir, reserveFile, 50*time.Millisecond)
	ctx := context.Background()
	batch := make([][]byte, 0, 1000)
	for i := range c.Docs {
		d := &c.Docs[i]
		r := codec.Record{Time: d.Time, Agent: d.Agent, Session: d.Session, Role: d.Role, Text: d.Text}
		for _, f := range d.Meta {
			r.Meta = append(r.Meta, codec.Field{Key: f.Key, Values: f.Values})
		}
		batch = append(batch, codec.AppendRecord(nil, &r))
		if len(batch) == cap(batch) || i == len(c.Docs)-1 {
			if _, err := l.AppendBatch(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	took := time.Since(start)
	time.Sleep(2 * time.Second) // the sealer catches up
	peak, _ := smp.stop()
	loaded, err := diskUsage(dir, reserveFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	closed, _ := diskUsage(dir, reserveFile)
	if l, err = segment.Open(dir, opts); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	reopened, _ := diskUsage(dir, reserveFile)
	text := float64(c.TextBytes())
	r := func(b int64) string { return fmt.Sprintf("%.1f MB (%.3fx)", float64(b)/1e6, float64(b)/text) }
	fmt.Printf("memtable %d MiB, appends took %v; ", opts.MemTableBytes>>20, took.Round(time.Millisecond))
	fmt.Printf("%d records, text %.1f MB: log peak during load %s, loaded %s, after close %s, after reopen %s\n",
		len(c.Docs), text/1e6, r(peak), r(loaded), r(closed), r(reopened))
}
