package bench

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// ClassRow is the side-by-side figure of one query class at one k.
type ClassRow struct {
	Class   string
	Queries int // distinct queries of the class
	// Latency of lazymem and of both Bleve formulations, over every timed
	// round.
	Lazymem, Bleve, BleveConj Latency
	// Exact counts the queries whose pruned top-k equals the exhaustive
	// top-k: the same ids with the same scores in the same order.
	Exact int
}

// Peer is the faster Bleve formulation of the class at p50, the fair peer.
func (r *ClassRow) Peer() Latency {
	if r.BleveConj.P50 > 0 && r.BleveConj.P50 < r.Bleve.P50 {
		return r.BleveConj
	}
	return r.Bleve
}

// Speedup is the peer's latency over lazymem's: (p50 ratio, p99 ratio).
func (r *ClassRow) Speedup() (p50, p99 float64) {
	p := r.Peer()
	if r.Lazymem.P50 == 0 || r.Lazymem.P99 == 0 {
		return 0, 0
	}
	return float64(p.P50) / float64(r.Lazymem.P50), float64(p.P99) / float64(r.Lazymem.P99)
}

// AcceptFloor is issue 16's floor for a cell's p50: under it a cell passes
// acceptance 1 whatever its ratios (both engines at their fixed overhead).
const AcceptFloor = 50 * time.Microsecond

// Accepted reports whether the row meets issue 16's acceptance 1: lazymem
// at least 10x faster than its peer at p50 and at least 5x at p99, or
// under AcceptFloor at p50; and the pruned top-k equal to the exhaustive
// one on every query.
func (r *ClassRow) Accepted() bool {
	if r.Queries == 0 || r.Exact != r.Queries {
		return false
	}
	if r.Lazymem.P50 > 0 && r.Lazymem.P50 < AcceptFloor {
		return true
	}
	p50, p99 := r.Speedup()
	return p50 >= 10 && p99 >= 5
}

// ClassReport is the outcome of RunClasses.
type ClassReport struct {
	Records   int
	TextBytes int64
	K, Rounds int
	Ingest    []IngestStats
	Rows      []ClassRow // per class in first-seen query order, then "all"
	Date      time.Time
	Load      string // /proc/loadavg before and after the timed rounds, where there is one
	State     string
	Corpus    string // the corpus's description (zipf.Config.Describe), printed when set
}

// RunClasses times every query on lazymem and both Bleve formulations at
// top-k, rounds times after one untimed warm-up pass, alternating the
// engines pass by pass in one process as Run does, and reports the
// latencies per Query.Class plus a row "all". It then checks every query's
// pruned top-k against SearchExhaustive.
func (s *SideBySide) RunClasses(k, rounds int) (*ClassReport, error) {
	if k <= 0 {
		return nil, ErrBadK
	}
	rounds = max(rounds, 1)
	qs := s.Corpus.Queries
	if len(qs) == 0 {
		return nil, ErrNoQueries
	}
	rep := &ClassReport{Records: len(s.Corpus.Docs), TextBytes: s.Corpus.TextBytes(), K: k, Rounds: rounds,
		Ingest: s.Ingest, Date: time.Now().UTC()}
	m := s.Lazymem.Index().Metrics()
	rep.State = fmt.Sprintf("lazymem: %d docs in %d sealed segments (%.1f MB) + %d in memory; bleve: %d file segments (%.1f MB on disk)",
		m.Docs, m.Segments, float64(m.SegmentBytes)/1e6, m.MemDocs, s.Bleve.Segments(), float64(s.Bleve.DiskBytes())/1e6)
	var classes []string
	idx := map[string]int{}
	for i := range qs {
		if _, ok := idx[qs[i].Class]; !ok {
			idx[qs[i].Class] = len(classes)
			classes = append(classes, qs[i].Class)
		}
	}
	engines := []Engine{s.Lazymem, s.Bleve.Formulation(false), s.Bleve.Formulation(true)}
	// d[engine][class] and hits[engine][class]
	d := make([][][]time.Duration, len(engines))
	hits := make([][]int, len(engines))
	for i := range engines {
		d[i] = make([][]time.Duration, len(classes))
		hits[i] = make([]int, len(classes))
	}
	for _, e := range engines { // warm-up
		if _, _, err := timeQueries(e, qs, k, nil); err != nil {
			return nil, err
		}
	}
	load := loadAvg()
	var pass []time.Duration
	var dst []Hit
	for round := 0; round < rounds; round++ {
		for i, e := range engines {
			runtime.GC() // each engine pays for its own garbage only (see Run)
			pass = pass[:0]
			for j := range qs {
				t0 := time.Now()
				var err error
				dst, err = e.Search(&qs[j], k, dst[:0])
				el := time.Since(t0)
				if err != nil {
					return nil, fmt.Errorf("lazymem: bench: %s query %d: %w", e.Name(), j, err)
				}
				c := idx[qs[j].Class]
				d[i][c] = append(d[i][c], el)
				hits[i][c] += len(dst)
			}
		}
	}
	if after := loadAvg(); load != "" {
		rep.Load = load + " before, " + after + " after"
	}
	if m := s.Lazymem.Index().Metrics(); m.FilterCacheEntries > 0 {
		rep.State += fmt.Sprintf("; lazymem's filter cache after the timed rounds: %d entries, %.1f MiB", m.FilterCacheEntries, float64(m.FilterCacheBytes)/(1<<20))
	}
	exact := make([]int, len(classes))
	ex := s.Lazymem.Exhaustive()
	var a, b []Hit
	for j := range qs {
		var err error
		if a, err = s.Lazymem.Search(&qs[j], k, a[:0]); err != nil {
			return nil, err
		}
		if b, err = ex.Search(&qs[j], k, b[:0]); err != nil {
			return nil, err
		}
		if slices.Equal(a, b) {
			exact[idx[qs[j].Class]]++
		}
	}
	all := ClassRow{Class: "all"}
	var allD [3][]time.Duration
	var allH [3]int
	for c, name := range classes {
		row := ClassRow{Class: name, Exact: exact[c]}
		lat := make([]Latency, len(engines))
		for i, e := range engines {
			allD[i] = append(allD[i], d[i][c]...)
			allH[i] += hits[i][c]
			lat[i] = Summarize(e.Name(), k, d[i][c], hits[i][c])
		}
		row.Lazymem, row.Bleve, row.BleveConj = lat[0], lat[1], lat[2]
		row.Queries = lat[0].Queries / rounds
		all.Queries += row.Queries
		all.Exact += row.Exact
		rep.Rows = append(rep.Rows, row)
	}
	all.Lazymem = Summarize(engines[0].Name(), k, allD[0], allH[0])
	all.Bleve = Summarize(engines[1].Name(), k, allD[1], allH[1])
	all.BleveConj = Summarize(engines[2].Name(), k, allD[2], allH[2])
	rep.Rows = append(rep.Rows, all)
	return rep, nil
}

// loadAvg is the first three fields of /proc/loadavg; "" where there is none.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// Markdown renders the report as one table: a row per class, the faster
// Bleve formulation as the peer.
func (r *ClassReport) Markdown() string {
	var sb strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&sb, "Run %s on %s (%d CPUs, %s/%s, %s): %d records, %.1f MB of text, top %d, %d timed rounds after 1 warm-up pass, engines alternated pass by pass.\n\n",
		r.Date.Format(time.RFC3339), host, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(),
		r.Records, float64(r.TextBytes)/1e6, r.K, r.Rounds)
	if r.Corpus != "" {
		fmt.Fprintf(&sb, "Corpus: %s.\n\n", r.Corpus)
	}
	if r.Load != "" {
		fmt.Fprintf(&sb, "Load average (1, 5, 15 min): %s.\n\n", r.Load)
	}
	if r.State != "" {
		fmt.Fprintf(&sb, "Index state at query time: %s.\n\n", r.State)
	}
	sb.WriteString(IngestMarkdown(r.Ingest))
	sb.WriteString("\n| class/filter | queries | lazymem p50 | lazymem p99 | peer | peer p50 | peer p99 | p50 ratio | p99 ratio | hits lazymem / peer | pruned = exhaustive | acceptance 1 |\n|---|---:|---:|---:|---|---:|---:|---:|---:|---|---:|---|\n")
	cells, passed := 0, 0
	for i := range r.Rows {
		row := &r.Rows[i]
		p := row.Peer()
		p50, p99 := row.Speedup()
		verdict := "" // the row of all queries is no cell
		if row.Class != "all" {
			cells++
			verdict = "no"
			if row.Accepted() {
				passed++
				verdict = "yes"
			}
		}
		fmt.Fprintf(&sb, "| %s | %d | %v | %v | %s | %v | %v | %.1fx | %.1fx | %.1f / %.1f | %d/%d | %s |\n",
			row.Class, row.Queries, rd(row.Lazymem.P50), rd(row.Lazymem.P99), p.Engine, rd(p.P50), rd(p.P99),
			p50, p99, row.Lazymem.MeanHits, p.MeanHits, row.Exact, row.Queries, verdict)
	}
	fmt.Fprintf(&sb, "\nAcceptance 1 (issue 16: p50 at least 10x and p99 at least 5x the peer's, or p50 under %v; pruned = exhaustive): %d of %d cells.\n",
		AcceptFloor, passed, cells)
	return sb.String()
}
