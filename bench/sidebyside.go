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
	Opts    SideBySideOptions
	Corpus  *Corpus
	Ingest  []IngestStats // lazymem, bleve
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
	if st, ok := readBuilt(o.Dir, o.CacheKey); ok {
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

// build ingests the corpus into both engines, lazymem first, each timed
// alone, and closes them; with a CacheKey it records the build in Dir.
func (s *SideBySide) build(ldir, bdir string) error {
	o, c := &s.Opts, s.Corpus
	if o.CacheKey != "" { // a half-built cache must not be reused
		_ = os.Remove(filepath.Join(o.Dir, builtFile))
		if err := os.RemoveAll(ldir); err != nil {
			return err
		}
		if err := os.RemoveAll(bdir); err != nil {
			return err
		}
	}
	runtime.GC()
	l, st, err := BuildLazymem(ldir, c.Docs, o.BatchSize, o.Index)
	if err != nil {
		return err
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
}

// readBuilt returns the ingest figures of the build recorded in dir under
// key; false when there is none, or it was made under another key.
func readBuilt(dir, key string) ([]IngestStats, bool) {
	if key == "" {
		return nil, false
	}
	data, err := os.ReadFile(filepath.Join(dir, builtFile))
	if err != nil {
		return nil, false
	}
	var b built
	if json.Unmarshal(data, &b) != nil || b.Key != key || len(b.Ingest) != 2 {
		return nil, false
	}
	return b.Ingest, true
}

func writeBuilt(dir, key string, st []IngestStats) error {
	data, err := json.Marshal(built{Key: key, Ingest: st})
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
	sb.WriteString("| ingest | records | applied | durable | records/s (durable) |\n|---|---:|---:|---:|---:|\n")
	for _, s := range r.Ingest {
		fmt.Fprintf(&sb, "| %s | %d | %v | %v | %.0f |\n", s.Engine, s.Records,
			s.Apply.Round(time.Millisecond), s.Durable.Round(time.Millisecond), s.RecordsPerSec())
	}
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
