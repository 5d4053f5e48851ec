package suite

import (
	"fmt"
	"github.com/lazymem/lazymem/engine"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lazymem/lazymem/bench/eager"
)

// Query kinds in SystemReport.Recall: the workload's labelled kinds and
// KindAll over all of them.
const (
	KindPlanted    = "planted"
	KindParaphrase = "paraphrase"
	KindTemporal   = "temporal"
	KindAll        = "all"
)

// Report is the result of Run.
type Report struct {
	Config       Config    `json:"config"`
	Date         time.Time `json:"date"`
	GoVersion    string    `json:"go_version"`
	GOMAXPROCS   int       `json:"gomaxprocs"`
	Vecmath      string    `json:"vecmath"`
	EmbedderName string    `json:"embedder_name"`
	// LatencyModel states the remote-API model; empty when none applied.
	LatencyModel string `json:"latency_model,omitempty"`
	Labelled     int    `json:"labelled_queries"`
	Keyword      int    `json:"keyword_queries"`
	Facts        int    `json:"facts_asked"`

	Systems []SystemReport `json:"systems"`
	// Ratios compare lazymem with each eager system (absent when either
	// was not run).
	Ratios []Ratio `json:"ratios,omitempty"`
}

// SystemReport is one system's figures.
type SystemReport struct {
	Name    string `json:"name"`
	Records int    `json:"records"`
	Queries int    `json:"queries"`
	// QueriesAsked is less than Queries under Config.QueryLimit; then
	// QuerySeconds, EndToEndSeconds and the modelled end to end are
	// extrapolated from the mean over the queries asked, and Extrapolated
	// is set. Embed and QueryEmbed count what was actually asked.
	QueriesAsked int  `json:"queries_asked"`
	Extrapolated bool `json:"extrapolated,omitempty"`

	IngestSeconds   float64 `json:"ingest_seconds"`
	QuerySeconds    float64 `json:"query_seconds"`
	EndToEndSeconds float64 `json:"end_to_end_seconds"`
	P50Millis       float64 `json:"p50_ms"`
	P99Millis       float64 `json:"p99_ms"`

	IngestEmbed eager.Usage `json:"ingest_embed"`
	QueryEmbed  eager.Usage `json:"query_embed"`
	Embed       eager.Usage `json:"embed"`

	// Bytes is on disk for lazymem (its directory after Close), in memory
	// for the eager systems (payload: vectors, text, ids, metadata, graph).
	Bytes     int64  `json:"bytes"`
	BytesKind string `json:"bytes_kind"`
	// HeapBytes is the Go heap in use after ingest minus before (after GC).
	HeapBytes int64 `json:"heap_bytes"`

	// Recall holds quality per query kind and over all labelled queries.
	Recall map[string]Quality `json:"recall"`

	// Model holds the remote-API model's figures (nil without a model).
	Model *Modelled `json:"model,omitempty"`
}

// Quality is retrieval quality over labelled queries at Config.K.
type Quality struct {
	Queries int `json:"queries"`
	// RecallAtK is the mean over queries of the fraction of relevant records
	// in the top k.
	RecallAtK float64 `json:"recall_at_k"`
	// HitAtK is the fraction of queries with a relevant record in the top k.
	HitAtK float64 `json:"hit_at_k"`
}

// Modelled holds figures under the remote-API latency model.
type Modelled struct {
	IngestSeconds   float64 `json:"ingest_seconds"`
	EndToEndSeconds float64 `json:"end_to_end_seconds"`
	P50Millis       float64 `json:"p50_ms"`
	P99Millis       float64 `json:"p99_ms"`
}

// Ratio compares lazymem with one eager system.
type Ratio struct {
	Eager string `json:"eager"`
	// Texts, Calls and APICalls are lazymem's embedding work over eager's.
	Texts    float64 `json:"texts"`
	Calls    float64 `json:"calls"`
	APICalls float64 `json:"api_calls"`
	// IngestSpeedup is eager's ingest time over lazymem's (> 1: lazymem
	// faster); EndToEnd is lazymem's end-to-end time over eager's (< 1:
	// lazymem faster); P50 is lazymem's p50 over eager's.
	IngestSpeedup float64 `json:"ingest_speedup"`
	EndToEnd      float64 `json:"end_to_end"`
	P50           float64 `json:"p50"`
	// ModelIngestSpeedup, ModelEndToEnd: the same under the latency model.
	ModelIngestSpeedup float64 `json:"model_ingest_speedup,omitempty"`
	ModelEndToEnd      float64 `json:"model_end_to_end,omitempty"`
	// RecallDiff is lazymem's R@k minus eager's, per query kind.
	RecallDiff map[string]float64 `json:"recall_diff"`
	// BreakEvenLatency is the per-request API latency at and above which
	// lazymem's end-to-end time is not higher than eager's: 0 when lazymem
	// is not slower even with a free embedder; absent when lazymem makes
	// at least as many requests (it never wins on latency then).
	BreakEvenLatency *time.Duration `json:"break_even_latency,omitempty"`
	// Crossover is, with the measured (hash) costs, where the total times
	// (ingest of all records + Q queries, per-query cost averaged over this
	// run) of lazymem and eager cross, as a function of Q.
	Crossover Crossover `json:"crossover"`
	// ModelCrossover is the same under the latency model.
	ModelCrossover *Crossover `json:"model_crossover,omitempty"`
}

func (r *Report) system(name string) *SystemReport {
	for i := range r.Systems {
		if r.Systems[i].Name == name {
			return &r.Systems[i]
		}
	}
	return nil
}

// projected is the embedding work of all the queries: under a QueryLimit,
// the queries' share is scaled from those asked to all of them.
func (s *SystemReport) projected() eager.Usage {
	u := s.Embed
	if s.Extrapolated && s.QueriesAsked > 0 {
		f := float64(s.Queries) / float64(s.QueriesAsked)
		q := s.QueryEmbed
		u = s.IngestEmbed.Add(eager.Usage{Calls: int64(float64(q.Calls) * f), Texts: int64(float64(q.Texts) * f), APICalls: int64(float64(q.APICalls) * f)})
	}
	return u
}

func div(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// Crossover says which system has the lower total time, ingest + Q queries,
// as the number of queries Q grows from 0.
type Crossover struct {
	// Queries is the Q where the totals are equal; 0 when they never cross.
	Queries float64 `json:"queries"`
	// Before is the system ahead for Q below Queries (for every Q when they
	// never cross): "lazymem" or "eager"; After the one ahead beyond it.
	Before string `json:"before"`
	After  string `json:"after"`
}

// crossover compares li + Q*lq (lazymem) with ei + Q*eq (eager).
func crossover(li, lq, ei, eq float64) Crossover {
	ahead := func(l, e float64) string {
		if l <= e {
			return SystemLazymem
		}
		return "eager"
	}
	c := Crossover{Before: ahead(li, ei)}
	if lq != eq {
		if q := (ei - li) / (lq - eq); q > 0 {
			c.Queries = q
			c.After = ahead(lq, eq)
			return c
		}
	}
	c.After = c.Before
	if li == ei {
		c.Before = ahead(lq, eq)
		c.After = c.Before
	}
	return c
}

func (c Crossover) String() string {
	if c.Queries == 0 {
		return c.Before + " ahead at every query count"
	}
	return fmt.Sprintf("%s ahead up to %.0f queries, %s beyond", c.Before, c.Queries, c.After)
}

func (r *Report) computeRatios() {
	l := r.system(SystemLazymem)
	if l == nil {
		return
	}
	for i := range r.Systems {
		e := &r.Systems[i]
		if e.Name == SystemLazymem {
			continue
		}
		lu, eu := l.projected(), e.projected()
		x := Ratio{
			Eager:         e.Name,
			Texts:         div(float64(lu.Texts), float64(eu.Texts)),
			Calls:         div(float64(lu.Calls), float64(eu.Calls)),
			APICalls:      div(float64(lu.APICalls), float64(eu.APICalls)),
			IngestSpeedup: div(e.IngestSeconds, l.IngestSeconds),
			EndToEnd:      div(l.EndToEndSeconds, e.EndToEndSeconds),
			P50:           div(l.P50Millis, e.P50Millis),
			RecallDiff:    map[string]float64{},
		}
		for kind, q := range l.Recall {
			if eq, ok := e.Recall[kind]; ok {
				x.RecallDiff[kind] = q.RecallAtK - eq.RecallAtK
			}
		}
		if da := eu.APICalls - lu.APICalls; da > 0 {
			s := (l.EndToEndSeconds - e.EndToEndSeconds) / float64(da)
			d := time.Duration(max(0, s) * float64(time.Second))
			x.BreakEvenLatency = &d
		}
		nq := float64(max(1, l.Queries))
		x.Crossover = crossover(l.IngestSeconds, l.QuerySeconds/nq, e.IngestSeconds, e.QuerySeconds/nq)
		if l.Model != nil && e.Model != nil {
			x.ModelIngestSpeedup = div(e.Model.IngestSeconds, l.Model.IngestSeconds)
			x.ModelEndToEnd = div(l.Model.EndToEndSeconds, e.Model.EndToEndSeconds)
			lq := (l.Model.EndToEndSeconds - l.Model.IngestSeconds) / nq
			eq := (e.Model.EndToEndSeconds - e.Model.IngestSeconds) / nq
			mc := crossover(l.Model.IngestSeconds, lq, e.Model.IngestSeconds, eq)
			x.ModelCrossover = &mc
		}
		r.Ratios = append(r.Ratios, x)
	}
}

// Table renders the report as one aligned table, then the lazy/eager ratios.
func (r *Report) Table() string {
	var b strings.Builder
	c := r.Config
	fmt.Fprintf(&b, "lazy vs eager RAG: %d records (seed %d), %d labelled queries (%d facts) + %d keyword queries, k=%d, embedder %s, %s, GOMAXPROCS=%d, vecmath %s, %s\n",
		c.Records, c.Seed, r.Labelled, r.Facts, r.Keyword, c.K, r.EmbedderName, r.GoVersion, r.GOMAXPROCS, r.Vecmath, r.Date.Format(time.RFC3339))
	if r.LatencyModel != "" {
		fmt.Fprintf(&b, "latency model (analytical, not slept): %s\n", r.LatencyModel)
	}
	cands := fmt.Sprintf("%d (engine default for k=%d)", min(max(engine.DefaultCandidates, engine.CandidatesPerK*c.K), engine.MaxCandidates), c.K)
	if c.Candidates > 0 {
		cands = fmt.Sprint(c.Candidates)
	}
	fmt.Fprintf(&b, "lazymem: default lazy recall, %s BM25 candidates embedded on demand through its cache; eager: every record's \"Role: Text\" embedded at write time\n", cands)
	if c.Live {
		fmt.Fprintf(&b, "live: lazymem's clock followed the stream while it ingested, so its working memory embedded the latest turns in the background (counted in its emb texts)\n")
	}
	fmt.Fprintf(&b, "R@k = mean fraction of a query's relevant records in its top %d; Hit@k = fraction of queries with one in the top %d\n\n", c.K, c.K)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	k := c.K
	hdr := []string{"system", "ingest s", "rec/s", "emb texts", "emb calls", "API req", "bytes", "heap MB", "p50 ms", "p99 ms",
		fmt.Sprintf("R@%d planted", k), fmt.Sprintf("R@%d para", k), fmt.Sprintf("R@%d temporal", k), fmt.Sprintf("R@%d all", k), fmt.Sprintf("Hit@%d all", k), "e2e s"}
	if r.LatencyModel != "" {
		hdr = append(hdr, "model ingest s", "model e2e s", "model p50 ms", "model p99 ms")
	}
	fmt.Fprintln(tw, strings.Join(hdr, "\t")+"\t")
	for _, s := range r.Systems {
		nm := s.Name
		if s.Extrapolated {
			nm += fmt.Sprintf(" (%d/%d q)*", s.QueriesAsked, s.Queries)
		}
		row := []string{nm,
			fmt.Sprintf("%.2f", s.IngestSeconds),
			fmt.Sprintf("%.0f", div(float64(s.Records), s.IngestSeconds)),
			fmt.Sprint(s.Embed.Texts), fmt.Sprint(s.Embed.Calls), fmt.Sprint(s.Embed.APICalls),
			fmt.Sprintf("%s %s", mib(s.Bytes), s.BytesKind),
			fmt.Sprintf("%.0f", float64(s.HeapBytes)/(1<<20)),
			fmt.Sprintf("%.2f", s.P50Millis), fmt.Sprintf("%.2f", s.P99Millis),
			rk(s, KindPlanted), rk(s, KindParaphrase), rk(s, KindTemporal), rk(s, KindAll),
			fmt.Sprintf("%.3f", s.Recall[KindAll].HitAtK),
			fmt.Sprintf("%.2f", s.EndToEndSeconds),
		}
		if r.LatencyModel != "" && s.Model != nil {
			row = append(row, fmt.Sprintf("%.1f", s.Model.IngestSeconds), fmt.Sprintf("%.1f", s.Model.EndToEndSeconds),
				fmt.Sprintf("%.1f", s.Model.P50Millis), fmt.Sprintf("%.1f", s.Model.P99Millis))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	_ = tw.Flush()
	for _, s := range r.Systems {
		if s.Extrapolated {
			fmt.Fprintf(&b, "* %s answered %d of the %d queries (every %.1fth); its recall is over those, its query and e2e times extrapolate its mean query time to all %d, and its embedding counts are for the queries asked\n",
				s.Name, s.QueriesAsked, s.Queries, float64(s.Queries)/float64(s.QueriesAsked), s.Queries)
		}
	}
	if len(r.Ratios) > 0 {
		b.WriteString("\nlazymem / eager:\n")
		for _, x := range r.Ratios {
			fmt.Fprintf(&b, "  vs %-8s texts %s  calls %s  API req %s  ingest speedup %.2fx  e2e %.3fx  p50 %.3fx  R@%d planted %+.3f all %+.3f",
				x.Eager, pct(x.Texts), pct(x.Calls), pct(x.APICalls), x.IngestSpeedup, x.EndToEnd, x.P50, k, x.RecallDiff[KindPlanted], x.RecallDiff[KindAll])
			if r.LatencyModel != "" {
				fmt.Fprintf(&b, "  | model: ingest speedup %.0fx, e2e %.3fx", x.ModelIngestSpeedup, x.ModelEndToEnd)
			}
			b.WriteString("\n    break-even: ")
			if x.BreakEvenLatency != nil {
				fmt.Fprintf(&b, "lazymem's e2e is lower once a request costs >= %v", x.BreakEvenLatency.Round(time.Microsecond))
			} else {
				b.WriteString("lazymem makes at least as many API requests: no break-even latency")
			}
			fmt.Fprintf(&b, "\n    total time vs number of queries, measured: %s", x.Crossover)
			if x.ModelCrossover != nil {
				fmt.Fprintf(&b, "; modelled: %s", x.ModelCrossover)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func rk(s SystemReport, kind string) string {
	q, ok := s.Recall[kind]
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.3f", q.RecallAtK)
}

func pct(x float64) string { return fmt.Sprintf("%.2f%%", 100*x) }

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

type progress struct {
	w  io.Writer
	t0 time.Time
}

func (p *progress) printf(format string, args ...any) {
	if p.w == nil {
		return
	}
	fmt.Fprintf(p.w, "[%6.1fs] %s\n", time.Since(p.t0).Seconds(), fmt.Sprintf(format, args...))
}
