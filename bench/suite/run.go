package suite

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"time"

	"github.com/lazymem/lazymem/bench/eager"
	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/engine/embed"
	"github.com/lazymem/lazymem/vecmath"
)

// System is what the suite drives: lazymem and every eager baseline.
type System = eager.Baseline

// Workload is a generated corpus with its queries.
type Workload struct {
	Config   workload.Config
	Records  []workload.Record
	Labelled []workload.Query // planted, paraphrase, temporal
	Keyword  []workload.Query // latency only
}

// NewWorkload generates the corpus and queries of cfg (after EnsureDefaults).
func NewWorkload(cfg Config) (*Workload, error) {
	wc := workload.Config{Seed: cfg.Seed, Records: cfg.Records}
	g := workload.New(wc)
	if err := g.Err(); err != nil {
		return nil, err
	}
	recs, err := workload.Records(wc)
	if err != nil {
		return nil, err
	}
	w := &Workload{Config: g.Config(), Records: recs, Labelled: g.Queries(cfg.Queries)}
	if cfg.KeywordQueries > 0 {
		w.Keyword = workload.KeywordQueries(wc, cfg.KeywordQueries, cfg.Seed+1)
	}
	return w, nil
}

// NewEmbedder returns the embedder every system uses: the hash embedder with
// its defaults (the engine's default). The latency model is applied by the
// report, not by sleeping.
func NewEmbedder() (embed.Embedder, error) { return embed.NewHash(embed.HashOptions{}) }

// Open returns a fresh, empty system by name. parent is where lazymem's
// temporary directory goes ("" = os.TempDir()).
func Open(name string, cfg Config, e embed.Embedder, parent string) (System, error) {
	if name == SystemLazymem {
		return newLazy(parent, e, cfg.APIBatch, &cfg)
	}
	return eager.New(name, eager.Options{Embedder: e, APIBatch: cfg.APIBatch, Seed: cfg.Seed})
}

// Run generates the workload of cfg and compares the systems on it, one after
// the other (each is closed, and its memory released, before the next
// starts).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := progress{w: cfg.Progress, t0: time.Now()}
	p.printf("generating %d records (seed %d)", cfg.Records, cfg.Seed)
	w, err := NewWorkload(cfg)
	if err != nil {
		return nil, err
	}
	e, err := NewEmbedder()
	if err != nil {
		return nil, err
	}
	rep := &Report{
		Config:       cfg,
		Date:         time.Now().UTC(),
		GoVersion:    runtime.Version(),
		GOMAXPROCS:   runtime.GOMAXPROCS(0),
		Vecmath:      vecmath.Implementation(),
		EmbedderName: e.Name(),
		Labelled:     len(w.Labelled),
		Keyword:      len(w.Keyword),
		Facts:        countFacts(w.Labelled),
	}
	if cfg.LatencyPerCall > 0 {
		rep.LatencyModel = fmt.Sprintf("modelled = measured + requests x %v; a request carries at most %d texts; requests sequential", cfg.LatencyPerCall, cfg.APIBatch)
	}
	for _, name := range cfg.Systems {
		sr, err := runSystem(ctx, name, cfg, w, e, &p)
		if err != nil {
			return nil, fmt.Errorf("lazymem: suite: %s: %w", name, err)
		}
		rep.Systems = append(rep.Systems, *sr)
	}
	rep.computeRatios()
	p.printf("done")
	return rep, nil
}

func countFacts(qs []workload.Query) int {
	seen := map[string]bool{}
	for _, q := range qs {
		seen[q.Agent+"\x00"+q.Fact+"\x00"+q.Answer] = true
	}
	return len(seen)
}

func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

func runSystem(ctx context.Context, name string, cfg Config, w *Workload, e embed.Embedder, p *progress) (*SystemReport, error) {
	heap0 := heapInUse()
	sys, err := Open(name, cfg, e, cfg.Dir)
	if err != nil {
		return nil, err
	}
	closed := false
	defer func() {
		if !closed {
			_ = sys.Close()
		}
	}()
	sr := &SystemReport{Name: name, Records: len(w.Records)}
	n := len(w.Records)
	step := max(n/10, cfg.Batch)
	next := step
	p.printf("%s: ingest %d records", name, n)
	t0 := time.Now()
	for i := 0; i < n; i += cfg.Batch {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		end := min(i+cfg.Batch, n)
		if err := sys.Ingest(ctx, w.Records[i:end]); err != nil {
			return nil, err
		}
		if end >= next && end < n {
			p.printf("%s: ingest %d/%d records (%.1fs)", name, end, n, time.Since(t0).Seconds())
			next += step
		}
	}
	sr.IngestSeconds = time.Since(t0).Seconds()
	sr.IngestEmbed = sys.Usage()
	sr.HeapBytes = heapInUse() - heap0

	all := append(slices.Clone(w.Labelled), w.Keyword...)
	total := len(all)
	if lim := cfg.QueryLimit[name]; lim > 0 && lim < total {
		sub := make([]workload.Query, 0, lim)
		for i := 0; i < lim; i++ {
			sub = append(sub, all[i*total/lim])
		}
		all = sub
	}
	p.printf("%s: %d of %d queries (%d labelled + %d keyword)", name, len(all), total, len(w.Labelled), len(w.Keyword))
	lat := make([]float64, 0, len(all))
	latModel := make([]float64, 0, len(all))
	qual := map[string]*quality{}
	var querySeconds float64
	for qi, q := range all {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		u0 := sys.Usage()
		t := time.Now()
		got, err := sys.Query(ctx, q, cfg.K)
		d := time.Since(t).Seconds()
		if err != nil {
			return nil, fmt.Errorf("query %d (%q): %w", qi, q.Text, err)
		}
		du := sys.Usage().Sub(u0)
		querySeconds += d
		lat = append(lat, d)
		latModel = append(latModel, d+float64(du.APICalls)*cfg.LatencyPerCall.Seconds())
		if len(q.Relevant) == 0 {
			continue
		}
		r, hit := score(got, q.Relevant, cfg.K)
		for _, kind := range []string{q.Kind, KindAll} {
			qq := qual[kind]
			if qq == nil {
				qq = &quality{}
				qual[kind] = qq
			}
			qq.n++
			qq.recall += r
			if hit {
				qq.hits++
			}
		}
	}
	sr.QueryEmbed = sys.Usage().Sub(sr.IngestEmbed)
	sr.Embed = sys.Usage()
	sr.Queries = total
	sr.QueriesAsked = len(all)
	sr.QuerySeconds = querySeconds
	// Extrapolate to every query when only some were asked.
	scale := float64(total) / float64(len(all))
	sr.Extrapolated = len(all) < total
	sr.QuerySeconds *= scale
	sr.P50Millis, sr.P99Millis = percentile(lat, 0.50)*1e3, percentile(lat, 0.99)*1e3
	sr.Recall = map[string]Quality{}
	for kind, qq := range qual {
		sr.Recall[kind] = Quality{Queries: qq.n, RecallAtK: qq.recall / float64(qq.n), HitAtK: float64(qq.hits) / float64(qq.n)}
	}
	sr.BytesKind = "memory"
	if name == SystemLazymem {
		sr.BytesKind = "disk"
	} else {
		sr.Bytes = sys.Bytes()
	}
	closed = true
	if err := sys.Close(); err != nil {
		return nil, err
	}
	if name == SystemLazymem {
		sr.Bytes = sys.Bytes()
	}
	sr.EndToEndSeconds = sr.IngestSeconds + sr.QuerySeconds
	if l := cfg.LatencyPerCall.Seconds(); l > 0 {
		sr.Model = &Modelled{
			IngestSeconds:   sr.IngestSeconds + float64(sr.IngestEmbed.APICalls)*l,
			EndToEndSeconds: sr.EndToEndSeconds + (float64(sr.IngestEmbed.APICalls)+float64(sr.QueryEmbed.APICalls)*scale)*l,
			P50Millis:       percentile(latModel, 0.50) * 1e3,
			P99Millis:       percentile(latModel, 0.99) * 1e3,
		}
	}
	p.printf("%s: ingest %.1fs, queries %.1fs, R@%d %.3f", name, sr.IngestSeconds, sr.QuerySeconds, cfg.K, sr.Recall[KindAll].RecallAtK)
	return sr, nil
}

type quality struct {
	n      int
	recall float64
	hits   int
}

// score returns |relevant in got[:k]| / |relevant| and whether any relevant
// record is in got[:k].
func score(got, relevant []int, k int) (float64, bool) {
	if len(got) > k {
		got = got[:k]
	}
	found := 0
	for _, r := range relevant {
		if slices.Contains(got, r) {
			found++
		}
	}
	return float64(found) / float64(len(relevant)), found > 0
}

// percentile is the nearest-rank percentile of xs (sorted in place).
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sort.Float64s(xs)
	i := int(p*float64(len(xs))+0.999999) - 1
	return xs[max(0, min(i, len(xs)-1))]
}
