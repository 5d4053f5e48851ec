package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/index"
)

// SideBySideOptions configures the lazymem-versus-Bleve comparison of
// issue 3, acceptance point 4.
type SideBySideOptions struct {
	// Dir is the scratch directory; both indexes are built under it.
	// Required.
	Dir string
	// Workload is the corpus definition. Records defaults to 100000 and
	// Seed is used as given (the default 0 is a valid seed).
	Workload workload.Config
	// Queries is the number of keyword queries. Default 1000.
	Queries int
	// QuerySeed draws the queries. Used as given.
	QuerySeed int64
	// BatchSize is the ingest batch of both engines. Default 1000.
	BatchSize int
	// Bleve configures the peer; its BatchSize is forced to BatchSize.
	Bleve BleveOptions
	// Index configures lazymem's index (zero value: its defaults).
	Index index.Options
	// Engine, when set, also loads the corpus into the whole engine
	// (engine.DB: the durable log and the index, one writer, batches of
	// BatchSize), timed until its Close returns, before the index alone
	// and Bleve: the ingest a user gets, and the report's first ingest
	// row. The store is removed afterwards (queries run on the index
	// alone). Default nil: the index alone and Bleve.
	Engine *engine.Options
	// Corpus, when set, is the corpus to compare on; Workload, Queries and
	// QuerySeed are then ignored.
	Corpus *Corpus
	// CacheKey, when set, names the build: a later call with the same Dir
	// and CacheKey reopens the indexes left there (Dir/built.json records
	// the key and the ingest figures of the build) instead of building them
	// again. The key must change whenever the corpus or the options do.
	CacheKey string
}

// EnsureDefaults fills zero fields with their defaults.
func (o *SideBySideOptions) EnsureDefaults() {
	if o.Workload.Records == 0 {
		o.Workload.Records = 100000
	}
	o.Workload.EnsureDefaults()
	if o.Queries <= 0 {
		o.Queries = 1000
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 1000
	}
	o.Bleve.BatchSize = o.BatchSize
	o.Bleve.EnsureDefaults()
}

// Validate reports an unusable configuration.
func (o *SideBySideOptions) Validate() error {
	if o.Dir == "" {
		return fmt.Errorf("%w: SideBySideOptions.Dir is required", ErrOptions)
	}
	if o.Corpus != nil {
		if len(o.Corpus.Docs) == 0 || len(o.Corpus.Queries) == 0 {
			return fmt.Errorf("%w: SideBySideOptions.Corpus: %d docs, %d queries: need both", ErrOptions, len(o.Corpus.Docs), len(o.Corpus.Queries))
		}
	} else if err := o.Workload.Validate(); err != nil {
		return fmt.Errorf("%w: workload: %w", ErrOptions, err)
	}
	return o.Bleve.Validate()
}

// SideBySide holds both engines built over the same corpus, reopened from
// disk after the build so queries run against the persisted state, with no
// background merging on either side.
type SideBySide struct {
	Opts   SideBySideOptions
	Corpus *Corpus
	// Ingest is one row per load: the whole engine (with Opts.Engine),
	// the index alone, Bleve.
	Ingest  []IngestStats
	Lazymem *Lazymem
	Bleve   *Bleve
	GenTime time.Duration // corpus generation, not part of any ingest figure
}

// BuildSideBySide generates the corpus, builds both indexes (lazymem first,
// then Bleve, each timed alone), closes them and reopens them for querying.
func BuildSideBySide(o SideBySideOptions) (*SideBySide, error) {
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	s := &SideBySide{Opts: o}
	t0 := time.Now()
	c := o.Corpus
	if c == nil {
		var err error
		if c, err = Load(o.Workload, o.Queries, o.QuerySeed); err != nil {
			return nil, err
		}
	}
	s.Corpus = c
	s.GenTime = time.Since(t0)

	ldir, bdir := filepath.Join(o.Dir, "lazymem"), filepath.Join(o.Dir, "bleve")
	if st, ok := readBuilt(o.Dir, o.CacheKey, o.ingestRows()); ok {
		s.Ingest = st
	} else if err := s.build(ldir, bdir); err != nil {
		return nil, err
	}
	// No background work while queries are timed, on either side: Bleve is
	// settled (Settle), and lazymem's merge loop is off for the query phase,
	// so its segments stay as ingest left them instead of a tiered merge of
	// the whole corpus starting on open and competing for the 2 cores.
	qo := o.Index
	qo.DisableBackgroundMerge = true
	var err error
	if s.Lazymem, err = OpenLazymem(ldir, c.Docs, qo); err != nil {
		return nil, err
	}
	if s.Bleve, err = OpenBleve(bdir, o.Bleve); err != nil {
		_ = s.Lazymem.Close()
		return nil, err
	}
	return s, nil
}

// Labels of the ingest rows: the whole engine is the headline; the index
// alone leaves out the log (the records' durable copy).
const (
	IngestEngine    = "lazymem engine (log + index)"
	IngestIndexOnly = "lazymem index alone (no log)"
)

// contextLabel names the session context state in an ingest row.
func contextLabel(on bool) string {
	if on {
		return ", session context on"
	}
	return ", session context off"
}

// ingestRows is the number of ingest rows a build records.
func (o *SideBySideOptions) ingestRows() int {
	if o.Engine != nil {
		return 3
	}
	return 2
}

// build ingests the corpus into the whole engine (with Opts.Engine), the
// index alone and Bleve, in that order, each timed alone on a collected
// heap, and closes them; with a CacheKey it records the build in Dir.
func (s *SideBySide) build(ldir, bdir string) error {
	o, c := &s.Opts, s.Corpus
	edir := ldir + "-engine"
	if o.CacheKey != "" { // a half-built cache must not be reused
		_ = os.Remove(filepath.Join(o.Dir, builtFile))
		for _, d := range []string{ldir, bdir, edir} {
			if err := os.RemoveAll(d); err != nil {
				return err
			}
		}
	}
	if o.Engine != nil {
		st, err := loadEngineTimed(edir, c.Docs, o.BatchSize, *o.Engine)
		if err != nil {
			return err
		}
		st.Engine = IngestEngine + contextLabel(!o.Engine.DisableSessionContext)
		s.Ingest = append(s.Ingest, st)
		if err := os.RemoveAll(edir); err != nil {
			return err
		}
	}
	runtime.GC()
	l, st, err := BuildLazymem(ldir, c.Docs, o.BatchSize, o.Index)
	if err != nil {
		return err
	}
	if o.Engine != nil {
		st.Engine = IngestIndexOnly + contextLabel(o.Index.SessionContext)
	}
	s.Ingest = append(s.Ingest, st)
	if err := l.Close(); err != nil {
		return err
	}
	runtime.GC()
	b, st, err := BuildBleve(bdir, c.Docs, o.Bleve)
	if err != nil {
		return err
	}
	s.Ingest = append(s.Ingest, st)
	if err := b.Close(); err != nil {
		return err
	}
	runtime.GC()
	if o.CacheKey != "" {
		return writeBuilt(o.Dir, o.CacheKey, s.Ingest)
	}
	return nil
}

// builtFile records a finished build in the scratch directory.
const builtFile = "built.json"

type built struct {
	Key    string
	Ingest []IngestStats
	Format int
}

// builtFormat versions what a cached build holds: 1 since the lazymem
// index is settled after its build (a build cached before is rebuilt).
const builtFormat = 1

// loadEngineTimed loads docs into a new whole-engine store at dir (one
// writer, batches of batch) and closes it: Durable runs until Close
// returned (every record in the log, the index flushed).
func loadEngineTimed(dir string, docs []Doc, batch int, opts engine.Options) (IngestStats, error) {
	recs := EngineRecords(docs) // the caller's work, not timed
	runtime.GC()
	db, st, err := LoadEngine(dir, recs, batch, opts)
	if err != nil {
		return st, err
	}
	t1 := time.Now()
	if err := db.Close(); err != nil {
		return st, err
	}
	st.Durable += time.Since(t1)
	return st, nil
}

// readBuilt returns the ingest figures of the build recorded in dir under
// key with rows rows; false when there is none, or it was made under
// another key or with other rows.
func readBuilt(dir, key string, rows int) ([]IngestStats, bool) {
	if key == "" {
		return nil, false
	}
	data, err := os.ReadFile(filepath.Join(dir, builtFile))
	if err != nil {
		return nil, false
	}
	var b built
	if json.Unmarshal(data, &b) != nil || b.Key != key || len(b.Ingest) != rows || b.Format != builtFormat {
		return nil, false
	}
	return b.Ingest, true
}

func writeBuilt(dir, key string, st []IngestStats) error {
	data, err := json.Marshal(built{Key: key, Ingest: st, Format: builtFormat})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, builtFile), data, 0o644)
}

// Close closes both engines. The scratch directory is the caller's.
func (s *SideBySide) Close() error {
	var errs []error
	if s.Lazymem != nil {
		errs = append(errs, s.Lazymem.Close())
	}
	if s.Bleve != nil {
		errs = append(errs, s.Bleve.Close())
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Report is the outcome of one side-by-side run.
type Report struct {
	Records   int
	TextBytes int64
	Queries   int
	Rounds    int
	Ingest    []IngestStats
	Latency   []Latency   // per k: lazymem, bleve, bleve-conj
	Agreement []Agreement // per k: bleve, bleve-conj, lazymem-exhaustive vs lazymem; bleve vs lazymem on PlainQueries
	Date      time.Time
	State     string // both indexes as the queries found them
}

// Run times every query on both engines at each k, rounds times after one
// untimed warm-up round, alternating the engines round by round so that
// noise from a shared machine falls on both; then it measures the top-k
// agreement of Bleve and of SearchExhaustive with lazymem's pruned Search.
func (s *SideBySide) Run(ks []int, rounds int) (*Report, error) {
	if rounds < 1 {
		rounds = 1
	}
	qs := s.Corpus.Queries
	r := &Report{Records: len(s.Corpus.Docs), TextBytes: s.Corpus.TextBytes(), Queries: len(qs),
		Rounds: rounds, Ingest: s.Ingest, Date: time.Now().UTC()}
	engines := []Engine{s.Lazymem, s.Bleve.Formulation(false), s.Bleve.Formulation(true)}
	m := s.Lazymem.Index().Metrics()
	r.State = fmt.Sprintf("lazymem: %d docs in %d sealed segments (%.1f MB) + %d in memory; bleve: %d file segments (%.1f MB on disk)",
		m.Docs, m.Segments, float64(m.SegmentBytes)/1e6, m.MemDocs, s.Bleve.Segments(), float64(s.Bleve.DiskBytes())/1e6)
	for _, k := range ks {
		for _, e := range engines { // warm-up: page cache, mmaps, pools
			if _, _, err := timeQueries(e, qs, k, nil); err != nil {
				return nil, err
			}
		}
		d := make([][]time.Duration, len(engines))
		hits := make([]int, len(engines))
		for round := 0; round < rounds; round++ {
			for i, e := range engines {
				// Each engine starts its pass on a collected heap, so it pays
				// for its own garbage only (Bleve allocates ~0.5 GB per pass
				// over 1000 queries; lazymem ~0.5 MB) and not for a collection
				// of the other engine's, which on 2 cores shows up as tail
				// latency.
				runtime.GC()
				var n int
				var err error
				if d[i], n, err = timeQueries(e, qs, k, d[i]); err != nil {
					return nil, err
				}
				hits[i] += n
			}
		}
		for i, e := range engines {
			r.Latency = append(r.Latency, Summarize(e.Name(), k, d[i], hits[i]))
		}
		for _, peer := range []Engine{engines[1], engines[2], s.Lazymem.Exhaustive()} {
			g, err := Compare(peer, s.Lazymem, qs, k)
			if err != nil {
				return nil, err
			}
			r.Agreement = append(r.Agreement, g)
		}
		if pq := PlainQueries(qs); len(pq) > 0 {
			g, err := Compare(engines[1], s.Lazymem, pq, k)
			if err != nil {
				return nil, err
			}
			g.Subset = "plain-word queries"
			r.Agreement = append(r.Agreement, g)
		}
	}
	return r, nil
}

// latency finds the entry of engine at k.
func (r *Report) latency(engine string, k int) (Latency, bool) {
	for _, l := range r.Latency {
		if l.Engine == engine && l.K == k {
			return l, true
		}
	}
	return Latency{}, false
}

// Speedup is peer's latency over lazymem's at k: (p50 ratio, p99 ratio).
func (r *Report) Speedup(peer string, k int) (p50, p99 float64) {
	l, ok1 := r.latency("lazymem", k)
	b, ok2 := r.latency(peer, k)
	if !ok1 || !ok2 || l.P50 == 0 || l.P99 == 0 {
		return 0, 0
	}
	return float64(b.P50) / float64(l.P50), float64(b.P99) / float64(l.P99)
}

// Markdown renders the report as the tables of docs/benchmarks/bleve.md.
func (r *Report) Markdown() string {
	var sb strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&sb, "Run %s on %s (%d CPUs, %s/%s, %s): %d records, %.1f MB of text, %d queries x %d rounds (after 1 warm-up round).\n\n",
		r.Date.Format(time.RFC3339), host, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(),
		r.Records, float64(r.TextBytes)/1e6, r.Queries, r.Rounds)
	if r.State != "" {
		fmt.Fprintf(&sb, "Index state at query time: %s.\n\n", r.State)
	}
	sb.WriteString(IngestMarkdown(r.Ingest))
	sb.WriteString("\n| engine | k | p50 | p99 | mean | max | mean hits |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, l := range r.Latency {
		fmt.Fprintf(&sb, "| %s | %d | %v | %v | %v | %v | %.1f |\n", l.Engine, l.K,
			rd(l.P50), rd(l.P99), rd(l.Mean), rd(l.Max), l.MeanHits)
	}
	sb.WriteString("\n| peer / lazymem | k | p50 ratio | p99 ratio |\n|---|---:|---:|---:|\n")
	for _, l := range r.Latency {
		if l.Engine == "lazymem" {
			continue
		}
		p50, p99 := r.Speedup(l.Engine, l.K)
		fmt.Fprintf(&sb, "| %s | %d | %.1fx | %.1fx |\n", l.Engine, l.K, p50, p99)
	}
	sb.WriteString("\n| top-k agreement | queries | k | mean overlap | min | identical sets | empty (A / B) |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, g := range r.Agreement {
		sub := g.Subset
		if sub == "" {
			sub = "all"
		}
		fmt.Fprintf(&sb, "| %s vs %s | %s | %d | %.4f | %.2f | %d/%d | %d / %d |\n", g.A, g.B, sub, g.K,
			g.MeanOverlap, g.MinOverlap, g.Identical, g.Queries, g.EmptyA, g.EmptyB)
	}
	return sb.String()
}

// rd rounds a duration for display: microseconds below 10 ms.
func rd(d time.Duration) time.Duration {
	if d < 10*time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(100 * time.Microsecond)
}

// IngestMarkdown renders ingest rows as a table, then each lazymem row's
// rate over Bleve's.
func IngestMarkdown(rows []IngestStats) string {
	var sb strings.Builder
	sb.WriteString("| ingest | records | applied | durable | records/s (durable) |\n|---|---:|---:|---:|---:|\n")
	var peer float64
	for _, s := range rows {
		fmt.Fprintf(&sb, "| %s | %d | %v | %v | %.0f |\n", s.Engine, s.Records,
			s.Apply.Round(time.Millisecond), s.Durable.Round(time.Millisecond), s.RecordsPerSec())
		if s.Engine == "bleve" {
			peer = s.RecordsPerSec()
		}
	}
	for _, s := range rows {
		if s.Settle > 0 {
			fmt.Fprintf(&sb, "\nThe lazymem index settled (its newest segments merged into one, as it does once left alone) in %v after its durable point; the searches run on the settled index.\n",
				s.Settle.Round(time.Millisecond))
		}
	}
	if peer > 0 {
		sb.WriteString("\n")
		for _, s := range rows {
			if s.Engine != "bleve" {
				fmt.Fprintf(&sb, "Ingest ratio %s / bleve: %.1fx.\n", s.Engine, s.RecordsPerSec()/peer)
			}
		}
	}
	return sb.String()
}
