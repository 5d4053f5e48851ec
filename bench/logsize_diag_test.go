//go:build diag

// The log alone (segment.Log, no index, no engine) over a corpus: its
// allocated blocks (du, less the space reserve) during the load, after it,
// after Close and after a reopen, over the records' text, and at the peak
// its WAL's and sstables' share:
//
//	LAZYMEM_BENCH_CORPUS=zipf LAZYMEM_BENCH_N=200000 LAZYMEM_BENCH_CACHE=/tmp/logsize \
//	    LAZYMEM_LOG_MEMTABLE_MB=0 (the default: Options.MemTableBytes's) \
//	    go test -tags diag ./bench -run TestLogSizeDiag -v
//
// With LAZYMEM_BENCH_ENGINE=1 the records go through the engine (log and
// index, as lazymem ingest loads them), and the log's directory is
// measured; with LAZYMEM_BENCH_JSONL=file the corpus is written as lazymem
// ingest's JSONL instead. TestLogMomentsReport prints the engine's table
// for several corpora, Bleve beside it.

package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
		m := engineMoments(t, filepath.Join(base, "engine"), c, engine.Options{Log: opts})
		peak, at, loaded, closed, reopened, took = m.peak, m.at, m.loaded, m.closed, m.reopened, m.took
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
	peak kindUsage
	halt func()
}

func sampleKinds(dir string, every time.Duration) *kindSampler {
	s := &kindSampler{}
	s.halt = tick(every, func() {
		if k := usageByKind(dir); k.total() > s.peak.total() {
			s.peak = k
		}
	})
	return s
}

func (s *kindSampler) stop() (int64, kindUsage) {
	s.halt()
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

// moments are a store's allocated bytes (du) at every moment of a load.
type moments struct {
	peak, loaded, closed, reopened int64
	at                             kindUsage // the log's files at its peak
	took                           time.Duration
}

// engineMoments loads c into a new engine store at edir (one writer,
// batches of 1000, as lazymem ingest) and measures its log's directory
// (less the space reserve) during the load, once loaded, after Close and
// after a reopen. The store is removed at the end.
func engineMoments(t *testing.T, edir string, c *Corpus, opts engine.Options) moments {
	t.Helper()
	if err := os.RemoveAll(edir); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(edir)
	dir := filepath.Join(edir, "log")
	recs := EngineRecords(c.Docs)
	var m moments
	smp := sampleKinds(dir, 20*time.Millisecond)
	db, st, err := LoadEngine(edir, recs, 1000, opts)
	if err != nil {
		t.Fatal(err)
	}
	m.took = st.Apply
	m.peak, m.at = smp.stop()
	m.loaded = usageByKind(dir).total()
	m.peak = max(m.peak, m.loaded)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	m.closed = usageByKind(dir).total()
	if db, err = engine.Open(edir, opts); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	m.reopened = usageByKind(dir).total()
	return m
}

// bleveMoments builds Bleve's index of c at bdir and measures it as
// engineMoments does the log (Bleve's whole directory). Removed at the end.
func bleveMoments(t *testing.T, bdir string, c *Corpus) moments {
	t.Helper()
	if err := os.RemoveAll(bdir); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(bdir)
	var m moments
	smp := sampleDisk(bdir, "", 50*time.Millisecond)
	b, st, err := BuildBleve(bdir, c.Docs, BleveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m.took = st.Apply
	m.peak, _ = smp.stop()
	if m.loaded, err = DiskUsage(bdir); err != nil {
		t.Fatal(err)
	}
	m.peak = max(m.peak, m.loaded)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	m.closed, _ = DiskUsage(bdir)
	if b, err = OpenBleve(bdir, BleveOptions{}); err != nil {
		t.Fatal(err)
	}
	m.reopened, _ = DiskUsage(bdir)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestLogMomentsReport prints log-size.md section 6's table: for each
// corpus and size of LAZYMEM_BENCH_RUNS (default
// zipf:200000,workload:200000,zipf:1000000), the engine's log (lazymem
// ingest's path: one writer, batches of 1000, session context on) at
// every moment, du less the space reserve, over the records' text, and
// Bleve's index of the same records beside it up to LAZYMEM_BENCH_BLEVE_MAX
// records (default 200000; Bleve takes minutes at 1M). About 6 minutes on
// 2 cores at load 15:
//
//	LAZYMEM_BENCH_CACHE=/tmp/logmoments go test -tags diag ./bench -run TestLogMomentsReport -v -timeout 30m
func TestLogMomentsReport(t *testing.T) {
	runs := os.Getenv("LAZYMEM_BENCH_RUNS")
	if runs == "" {
		runs = "zipf:200000,workload:200000,zipf:1000000"
	}
	bleveMax := envInt("LAZYMEM_BENCH_BLEVE_MAX", 200000)
	base := os.Getenv("LAZYMEM_BENCH_CACHE")
	if base == "" {
		base = t.TempDir()
	}
	load := func() string {
		b, _ := os.ReadFile("/proc/loadavg")
		return strings.TrimSpace(string(b))
	}
	fmt.Printf("Load average before: %s\n\n", load())
	fmt.Println("| corpus | records | text MB | store | peak during load (WAL / sstables) | loaded | after close | after reopen | load s |")
	fmt.Println("|---|---:|---:|---|---:|---:|---:|---:|---:|")
	for _, run := range strings.Split(runs, ",") {
		name, num, ok := strings.Cut(run, ":")
		n, err := strconv.Atoi(num)
		if !ok || err != nil || n <= 0 {
			t.Fatalf("LAZYMEM_BENCH_RUNS: %q: want corpus:records", run)
		}
		var c *Corpus
		switch name {
		case "zipf":
			c, err = LoadZipf(zipf.Config{Seed: zipfSeed(), Records: n}, 1, zipfQuerySeed)
		case "workload":
			c, err = Load(workload.Config{Seed: 1, Records: n}, 1, 1)
		default:
			t.Fatalf("LAZYMEM_BENCH_RUNS: corpus %q: want zipf or workload", name)
		}
		if err != nil {
			t.Fatal(err)
		}
		text := float64(c.TextBytes())
		cell := func(b int64) string { return fmt.Sprintf("%.1f MB (%.2fx)", float64(b)/1e6, float64(b)/text) }
		m := engineMoments(t, filepath.Join(base, "engine"), c, engine.Options{})
		fmt.Printf("| %s | %d | %.1f | lazymem log | %s (%.1f / %.1f MB) | %s | %s | %s | %.1f |\n", name, n, text/1e6,
			cell(m.peak), float64(m.at.wal)/1e6, float64(m.at.sst)/1e6, cell(m.loaded), cell(m.closed), cell(m.reopened), m.took.Seconds())
		if n <= bleveMax {
			m := bleveMoments(t, filepath.Join(base, "bleve"), c)
			fmt.Printf("| %s | %d | %.1f | Bleve | %s | %s | %s | %s | %.1f |\n", name, n, text/1e6,
				cell(m.peak), cell(m.loaded), cell(m.closed), cell(m.reopened), m.took.Seconds())
		}
	}
	fmt.Printf("\nLoad average after: %s\n", load())
}
