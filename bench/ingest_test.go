package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lazymem/lazymem/bench/zipf"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/index"
)

var ingestCorpus struct {
	once sync.Once
	c    *Corpus
	err  error
}

// zipfDocs is the Zipf corpus of LAZYMEM_BENCH_N records (default 200k),
// generated once per process.
func zipfDocs(tb testing.TB) []Doc {
	tb.Helper()
	ingestCorpus.once.Do(func() {
		ingestCorpus.c, ingestCorpus.err = LoadZipf(zipf.Config{Seed: zipfSeed(), Records: zipfN()}, 1, zipfQuerySeed)
	})
	if ingestCorpus.err != nil {
		tb.Fatal(ingestCorpus.err)
	}
	return ingestCorpus.c.Docs
}

// BenchmarkZipfIngest loads the Zipf corpus (LAZYMEM_BENCH_N records) per
// op into a fresh store with one writer in batches of 1000, session
// context on: engine=lazymem is the whole engine (log and index, timed
// until Close returned), engine=lazymem-index the index alone (timed until
// its Flush returned), engine=bleve Bleve (until its persister and merger
// are idle). records/s is the rate, cpu-us/record the process CPU over the
// same window per record; for ratios under a shared load, use
// TestIngestReport, which runs the engines in one process one after the
// other and reports the disk and heap as well.
func BenchmarkZipfIngest(b *testing.B) {
	docs := zipfDocs(b)
	var text int64
	for i := range docs {
		text += int64(len(docs[i].Text))
	}
	var recs []engine.Record
	for _, eng := range []string{"lazymem", "lazymem-index", "bleve"} {
		b.Run(fmt.Sprintf("n=%d/engine=%s", len(docs), eng), func(b *testing.B) {
			if eng == "lazymem" && recs == nil {
				recs = EngineRecords(docs)
			}
			b.ReportAllocs()
			b.SetBytes(text)
			var total, cpu time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				dir := filepath.Join(b.TempDir(), strconv.Itoa(i))
				b.StartTimer()
				t0, c0 := time.Now(), processCPU()
				var err error
				switch eng {
				case "lazymem":
					var db *engine.DB
					if db, _, err = LoadEngine(dir, recs, 1000, engine.Options{}); err == nil {
						err = db.Close()
					}
				case "lazymem-index":
					var l *Lazymem
					if l, _, err = BuildLazymem(dir, docs, 1000, index.Options{SessionContext: true}); err == nil {
						err = l.Close()
					}
				case "bleve":
					var bl *Bleve
					if bl, _, err = BuildBleve(dir, docs, BleveOptions{}); err == nil {
						err = bl.Close()
					}
				}
				if err != nil {
					b.Fatal(err)
				}
				total += time.Since(t0)
				cpu += processCPU() - c0
				b.StopTimer()
				_ = os.RemoveAll(dir)
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(float64(len(docs))*float64(b.N)/total.Seconds(), "records/s")
			// Process CPU (all threads) per record over the same window:
			// steadier than the rate on a shared machine.
			b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(len(docs)*b.N), "cpu-us/record")
		})
	}
}

// TestRunIngestSmall loads a small Zipf corpus side by side and checks
// the run: both engines timed, every store measured, the lazymem store
// holding every record after its reopen.
func TestRunIngestSmall(t *testing.T) {
	c, err := LoadZipf(zipf.Config{Seed: 5, Records: 3000, Agents: 8}, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	r, err := RunIngest(dir, c.Docs, 500, engine.Options{}, BleveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Ingest) != 2 || len(r.Store) != 3 {
		t.Fatalf("%d ingest rows, %d store rows", len(r.Ingest), len(r.Store))
	}
	for _, st := range r.Ingest {
		if st.Records != len(c.Docs) || st.Durable < st.Apply || st.Apply <= 0 {
			t.Errorf("%+v", st)
		}
	}
	for _, st := range r.Store {
		if st.DiskPeak < st.DiskLoaded || st.DiskLoaded <= 0 || st.DiskClosed <= 0 || st.DiskReopened <= 0 || st.Text != c.TextBytes() {
			t.Errorf("%+v", st)
		}
	}
	db, err := engine.Open(filepath.Join(dir, "lazymem"), engine.Options{MustExist: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	last := c.Docs[len(c.Docs)-1]
	got, err := db.Get(t.Context(), last.ID)
	if err != nil || got.Text != last.Text {
		t.Fatalf("record %d after the run: %q, %v", last.ID, got.Text, err)
	}
	if md := r.Markdown(); !strings.Contains(md, "| lazymem log (no reserve) |") || !strings.Contains(md, "Ingest ratio") {
		t.Fatalf("markdown:\n%s", md)
	}
}
