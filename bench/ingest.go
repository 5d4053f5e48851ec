package bench

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/lazymem/lazymem/engine"
)

// StoreStats is the cost of one engine's store after a bulk load: the
// allocated blocks on disk (du, not file lengths) at every moment and the
// heap the open store holds.
type StoreStats struct {
	Engine string
	// Text is the bytes of the records' text.
	Text int64
	// DiskPeak is the largest allocation sampled during the load (every
	// 50 ms) or at its end; DiskLoaded the allocation once the load is durable, before
	// Close; DiskClosed after Close; DiskReopened after the store was opened
	// again and settled (Bleve) or opened (lazymem).
	DiskPeak, DiskLoaded, DiskClosed, DiskReopened int64
	// Heap is the live heap of the open, loaded store: HeapAlloc after a
	// collection, less the same before the store was opened.
	Heap int64
}

// Ratio is b over the text's bytes.
func (s StoreStats) Ratio(b int64) float64 {
	if s.Text <= 0 {
		return 0
	}
	return float64(b) / float64(s.Text)
}

// reserveFile is the log's deliberate space reserve (segment.Options.
// ReserveBytes): preallocated so that a full disk can still flush. It is
// not data, and the log's rows leave it out.
const reserveFile = "LAZYMEM-RESERVE"

// DiskUsage returns the bytes allocated to every regular file under dir
// (st_blocks * 512 where the platform reports blocks, else the file's
// length): what du counts, so a preallocated but empty file counts whole.
func DiskUsage(dir string) (int64, error) { return diskUsage(dir, "") }

// diskUsage is DiskUsage without the files named skip.
func diskUsage(dir, skip string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) { // removed while walking (a finished WAL)
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() || d.Name() == skip {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		total += allocatedBytes(fi)
		return nil
	})
	return total, err
}

// diskSampler records the largest DiskUsage of dir until stop.
type diskSampler struct {
	dir  string
	skip string
	peak int64
	err  error
	halt func()
}

func sampleDisk(dir, skip string, every time.Duration) *diskSampler {
	s := &diskSampler{dir: dir, skip: skip}
	s.halt = tick(every, s.sample)
	return s
}

// tick calls f now and then every d until the returned function is
// called; that function returns once f has returned for the last time.
func tick(d time.Duration, f func()) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			f()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

func (s *diskSampler) sample() {
	n, err := diskUsage(s.dir, s.skip)
	if err != nil && s.err == nil {
		s.err = err
	}
	s.peak = max(s.peak, n)
}

// stop ends the sampling after one last sample and returns the peak.
func (s *diskSampler) stop() (int64, error) {
	s.halt()
	s.sample()
	return s.peak, s.err
}

// liveHeap is HeapAlloc after two collections.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// EngineRecords converts the corpus into engine records (done before any
// timing: the conversion is the caller's, not the engine's, work).
func EngineRecords(docs []Doc) []engine.Record {
	out := make([]engine.Record, len(docs))
	for i := range docs {
		d := &docs[i]
		r := engine.Record{Time: time.Unix(0, d.Time).UTC(), Agent: d.Agent, Session: d.Session, Role: d.Role, Text: d.Text}
		if len(d.Meta) > 0 {
			r.Meta = make(map[string][]string, len(d.Meta))
			for _, f := range d.Meta {
				r.Meta[f.Key] = f.Values
			}
		}
		out[i] = r
	}
	return out
}

// LoadEngine creates a lazymem store at dir (which must not hold one) with
// opts and appends recs with one writer in batches of batch records,
// session context as opts leave it (on by default). Apply runs until the
// last AppendBatch returns: every record durable in the log and indexed in
// memory. The store stays open for the caller; RunIngest times its Close
// (which flushes the index's memory segment) into Durable.
func LoadEngine(dir string, recs []engine.Record, batch int, opts engine.Options) (*engine.DB, IngestStats, error) {
	if batch <= 0 {
		batch = 1000
	}
	st := IngestStats{Engine: IngestEngine, Records: len(recs)}
	for i := range recs {
		st.Bytes += int64(len(recs[i].Text))
	}
	ctx := context.Background()
	t0 := time.Now()
	db, err := engine.Open(dir, opts)
	if err != nil {
		return nil, st, fmt.Errorf("lazymem: bench: engine open %s: %w", dir, err)
	}
	for lo := 0; lo < len(recs); lo += batch {
		hi := min(lo+batch, len(recs))
		if _, err := db.AppendBatch(ctx, recs[lo:hi]); err != nil {
			_ = db.Close()
			return nil, st, fmt.Errorf("lazymem: bench: append [%d,%d): %w", lo, hi, err)
		}
	}
	st.Apply = time.Since(t0)
	st.Durable = st.Apply
	return db, st, nil
}

// IngestRun is one side-by-side bulk load of the same records into the
// full lazymem engine (log and index) and into Bleve.
type IngestRun struct {
	Ingest []IngestStats // lazymem, bleve
	Store  []StoreStats  // lazymem (whole store, and its log alone), bleve
}

// RunIngest loads docs into a new lazymem store under dir/lazymem and a
// new Bleve index under dir/bleve, one after the other on a collected
// heap, sampling the disk as each loads, and measures each store after
// Close and after a reopen. Both directories are removed first.
func RunIngest(dir string, docs []Doc, batch int, opts engine.Options, bopts BleveOptions) (*IngestRun, error) {
	ldir, bdir := filepath.Join(dir, "lazymem"), filepath.Join(dir, "bleve")
	for _, d := range []string{ldir, bdir} {
		if err := os.RemoveAll(d); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var text int64
	for i := range docs {
		text += int64(len(docs[i].Text))
	}
	run := &IngestRun{}

	recs := EngineRecords(docs)
	base := liveHeap()
	smp := sampleDisk(ldir, "", 50*time.Millisecond)
	lsmp := sampleDisk(filepath.Join(ldir, "log"), reserveFile, 50*time.Millisecond)
	db, st, err := LoadEngine(ldir, recs, batch, opts)
	peak, serr := smp.stop()
	lpeak, lerr := lsmp.stop()
	if err != nil {
		return nil, err
	}
	if serr != nil || lerr != nil {
		_ = db.Close()
		return nil, fmt.Errorf("lazymem: bench: du: %v %v", serr, lerr)
	}
	ls := StoreStats{Engine: "lazymem", Text: text, DiskPeak: peak, Heap: liveHeap() - base}
	// recs were in base: they must still be live here, or the heap leaves
	// them out (it did: the 200k report's 50 MB per 1M records was the
	// store's ~110 MB less the ~100 MB of recs collected in between).
	runtime.KeepAlive(recs)
	lg := StoreStats{Engine: "lazymem log (no reserve)", Text: text, DiskPeak: lpeak, Heap: -1}
	measure := func(dst *int64, ldst *int64) error {
		var err error
		if *dst, err = DiskUsage(ldir); err != nil {
			return err
		}
		*ldst, err = diskUsage(filepath.Join(ldir, "log"), reserveFile)
		return err
	}
	if err := measure(&ls.DiskLoaded, &lg.DiskLoaded); err != nil {
		_ = db.Close()
		return nil, err
	}
	ls.DiskPeak, lg.DiskPeak = max(ls.DiskPeak, ls.DiskLoaded), max(lg.DiskPeak, lg.DiskLoaded)
	t1 := time.Now()
	if err := db.Close(); err != nil {
		return nil, err
	}
	st.Durable += time.Since(t1) // the index's last flush
	run.Ingest = append(run.Ingest, st)
	if err := measure(&ls.DiskClosed, &lg.DiskClosed); err != nil {
		return nil, err
	}
	if db, err = engine.Open(ldir, opts); err != nil {
		return nil, err
	}
	if err := measure(&ls.DiskReopened, &lg.DiskReopened); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	run.Store = append(run.Store, ls, lg)
	recs = nil // let the collector take them before Bleve loads
	runtime.KeepAlive(recs)

	base = liveHeap()
	smp = sampleDisk(bdir, "", 50*time.Millisecond)
	b, st, err := BuildBleve(bdir, docs, bopts)
	peak, serr = smp.stop()
	if err != nil {
		return nil, err
	}
	if serr != nil {
		_ = b.Close()
		return nil, serr
	}
	run.Ingest = append(run.Ingest, st)
	bs := StoreStats{Engine: "bleve", Text: text, DiskPeak: peak, Heap: liveHeap() - base}
	if bs.DiskLoaded, err = DiskUsage(bdir); err != nil {
		_ = b.Close()
		return nil, err
	}
	bs.DiskPeak = max(bs.DiskPeak, bs.DiskLoaded)
	if err := b.Close(); err != nil {
		return nil, err
	}
	if bs.DiskClosed, err = DiskUsage(bdir); err != nil {
		return nil, err
	}
	if b, err = OpenBleve(bdir, bopts); err != nil {
		return nil, err
	}
	if bs.DiskReopened, err = DiskUsage(bdir); err != nil {
		_ = b.Close()
		return nil, err
	}
	if err := b.Close(); err != nil {
		return nil, err
	}
	run.Store = append(run.Store, bs)
	return run, nil
}

// Markdown renders the run as the tables of docs/benchmarks/ingest-context.md.
func (r *IngestRun) Markdown() string {
	s := IngestMarkdown(r.Ingest)
	s += "\n| store | text MB | peak during load | loaded | after close | after reopen | heap MB per 1M records |\n|---|---:|---:|---:|---:|---:|---:|\n"
	n := 0
	if len(r.Ingest) > 0 {
		n = r.Ingest[0].Records
	}
	for _, st := range r.Store {
		cell := func(b int64) string { return fmt.Sprintf("%.1f MB (%.2fx)", float64(b)/1e6, st.Ratio(b)) }
		heap := "-"
		if st.Heap >= 0 && n > 0 {
			heap = fmt.Sprintf("%.0f", float64(st.Heap)/1e6*1e6/float64(n))
		}
		s += fmt.Sprintf("| %s | %.1f | %s | %s | %s | %s | %s |\n", st.Engine, float64(st.Text)/1e6,
			cell(st.DiskPeak), cell(st.DiskLoaded), cell(st.DiskClosed), cell(st.DiskReopened), heap)
	}
	return s
}
