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
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/bench/zipf"
	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/engine"
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
	if path := os.Getenv("LAZYMEM_BENCH_JSONL"); path != "" {
		writeJSONL(t, path, c)
		return
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
	var peak, loaded, closed, reopened int64
	var at kindUsage
	var took time.Duration
	if os.Getenv("LAZYMEM_BENCH_ENGINE") != "" {
		// The whole engine (log and index), as lazymem ingest runs it: the
		// log's directory measured as above.
		edir := filepath.Join(base, "engine")
		if err := os.RemoveAll(edir); err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(edir, "log")
		recs := EngineRecords(c.Docs)
		eopts := engine.Options{Log: opts}
		smp := sampleKinds(dir, 20*time.Millisecond)
		db, st, err := LoadEngine(edir, recs, 1000, eopts)
		if err != nil {
			t.Fatal(err)
		}
		took = st.Apply
		peak, at = smp.stop()
		loaded = usageByKind(dir).total()
		peak = max(peak, loaded)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		closed = usageByKind(dir).total()
		if db, err = engine.Open(edir, eopts); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		reopened = usageByKind(dir).total()
		defer os.RemoveAll(edir)
	} else {
		l, err := segment.Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		smp := sampleKinds(dir, 20*time.Millisecond)
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
		took = time.Since(start)
		time.Sleep(2 * time.Second) // the sealer catches up
		peak, at = smp.stop()
		loaded = usageByKind(dir).total()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		closed = usageByKind(dir).total()
		if l, err = segment.Open(dir, opts); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		reopened = usageByKind(dir).total()
	}
	text := float64(c.TextBytes())
	r := func(b int64) string { return fmt.Sprintf("%.1f MB (%.3fx)", float64(b)/1e6, float64(b)/text) }
	fmt.Printf("memtable %d MiB, appends took %v; ", opts.MemTableBytes>>20, took.Round(time.Millisecond))
	fmt.Printf("at the peak: WAL %.1f MB, sstables %.1f MB, other %.1f MB; ", float64(at.wal)/1e6, float64(at.sst)/1e6, float64(at.other)/1e6)
	fmt.Printf("%d records, text %.1f MB: log peak during load %s, loaded %s, after close %s, after reopen %s\n",
		len(c.Docs), text/1e6, r(peak), r(loaded), r(closed), r(reopened))
}

// kindUsage is a directory's allocated bytes by kind of file.
type kindUsage struct{ wal, sst, other int64 }

func (k kindUsage) total() int64 { return k.wal + k.sst + k.other }

func usageByKind(dir string) kindUsage {
	var k kindUsage
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if !e.Type().IsRegular() || e.Name() == reserveFile {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		n := allocatedBytes(fi)
		switch filepath.Ext(e.Name()) {
		case ".log":
			k.wal += n
		case ".sst":
			k.sst += n
		default:
			k.other += n
		}
	}
	return k
}

// kindSampler records the largest usage of dir, by kind, until stop.
type kindSampler struct {
	dir  string
	peak kindUsage
	done chan struct{}
	wg   sync.WaitGroup
}

func sampleKinds(dir string, every time.Duration) *kindSampler {
	s := &kindSampler{dir: dir, done: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if k := usageByKind(dir); k.total() > s.peak.total() {
				s.peak = k
			}
			select {
			case <-s.done:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *kindSampler) stop() (int64, kindUsage) {
	close(s.done)
	s.wg.Wait()
	return s.peak.total(), s.peak
}

// writeJSONL writes the corpus as lazymem ingest reads it, one record a
// line, and prints its size and the records' text bytes.
func writeJSONL(t *testing.T, path string, c *Corpus) {
	type line struct {
		Time    string              `json:"time"`
		Agent   string              `json:"agent"`
		Session string              `json:"session,omitempty"`
		Role    string              `json:"role,omitempty"`
		Text    string              `json:"text"`
		Meta    map[string][]string `json:"meta,omitempty"`
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for i := range c.Docs {
		d := &c.Docs[i]
		l := line{Time: time.Unix(0, d.Time).UTC().Format(time.RFC3339Nano), Agent: d.Agent, Session: d.Session, Role: d.Role, Text: d.Text}
		if len(d.Meta) > 0 {
			l.Meta = map[string][]string{}
			for _, m := range d.Meta {
				l.Meta[m.Key] = m.Values
			}
		}
		if err := enc.Encode(&l); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("%s: %d records, %.1f MB of JSONL, %.1f MB of text\n", path, len(c.Docs), float64(fi.Size())/1e6, float64(c.TextBytes())/1e6)
}
