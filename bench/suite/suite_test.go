package suite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lazymem/lazymem/internal/testwatch"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	testwatch.Start()
	goleak.VerifyTestMain(m)
}

const testSeed = 7

func TestRun(t *testing.T) {
	var prog bytes.Buffer
	cfg := Config{Records: 3000, Queries: 60, KeywordQueries: 10, Seed: testSeed, Embedder: EmbedderHashLatency, Dir: t.TempDir(), Progress: &prog,
		QueryLimit: map[string]int{"chromem": 35}}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Systems) != len(Systems) {
		t.Fatalf("%d systems, want %d", len(rep.Systems), len(Systems))
	}
	nq := int64(rep.Labelled + rep.Keyword)
	if rep.Labelled < 30 || rep.Keyword != 10 {
		t.Fatalf("labelled %d, keyword %d", rep.Labelled, rep.Keyword)
	}
	for _, s := range rep.Systems {
		if s.Queries != int(nq) {
			t.Errorf("%s: %d queries, want %d", s.Name, s.Queries, nq)
		}
		asked := nq
		if s.Name == "chromem" {
			asked = 35
			if !s.Extrapolated || s.QueriesAsked != 35 {
				t.Errorf("chromem: asked %d, extrapolated %v", s.QueriesAsked, s.Extrapolated)
			}
		} else if s.Extrapolated || s.QueriesAsked != int(nq) {
			t.Errorf("%s: asked %d, extrapolated %v", s.Name, s.QueriesAsked, s.Extrapolated)
		}
		if s.Bytes <= 0 {
			t.Errorf("%s: bytes %d", s.Name, s.Bytes)
		}
		if s.Model == nil || s.Model.IngestSeconds < s.IngestSeconds {
			t.Errorf("%s: model %+v", s.Name, s.Model)
		}
		switch s.Name {
		case SystemLazymem:
			// Laziness: nothing embedded at write time.
			if s.IngestEmbed.Texts != 0 || s.IngestEmbed.Calls != 0 {
				t.Errorf("lazymem embedded at ingest: %+v", s.IngestEmbed)
			}
			if s.QueryEmbed.Calls == 0 || s.QueryEmbed.Calls > nq {
				t.Errorf("lazymem query calls %d for %d queries", s.QueryEmbed.Calls, nq)
			}
		default:
			if s.IngestEmbed.Texts != int64(cfg.Records) {
				t.Errorf("%s: ingest embedded %d texts, want %d", s.Name, s.IngestEmbed.Texts, cfg.Records)
			}
			if s.QueryEmbed.Texts != asked || s.QueryEmbed.Calls != asked {
				t.Errorf("%s: query embed %+v, want %d texts and calls", s.Name, s.QueryEmbed, asked)
			}
			if got, want := s.Model.IngestSeconds-s.IngestSeconds, float64(s.IngestEmbed.APICalls)*0.150; abs(got-want) > 1e-6 {
				t.Errorf("%s: modelled ingest adds %.3fs, want %.3fs", s.Name, got, want)
			}
		}
		pl := s.Recall[KindPlanted]
		floor := 0.7
		if pl.Queries == 0 || pl.HitAtK < floor {
			t.Errorf("%s: planted %+v, want Hit@k >= %.1f", s.Name, pl, floor)
		}
	}
	if len(rep.Ratios) != 3 {
		t.Fatalf("%d ratios", len(rep.Ratios))
	}
	for _, x := range rep.Ratios {
		if x.Texts <= 0 || x.Texts >= 1 {
			t.Errorf("vs %s: texts ratio %g, want in (0, 1) at 3000 records", x.Eager, x.Texts)
		}
	}
	tab := rep.Table()
	for _, s := range Systems {
		if !strings.Contains(tab, s) {
			t.Errorf("table lacks %s:\n%s", s, tab)
		}
	}
	if !strings.Contains(tab, "latency model") {
		t.Errorf("table does not state the latency model:\n%s", tab)
	}
	if _, err := json.Marshal(rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(prog.String(), "flat: ingest") {
		t.Errorf("no progress:\n%s", prog.String())
	}
	t.Logf("\n%s", tab)
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestConfig(t *testing.T) {
	for _, c := range []Config{
		{Records: -1},
		{Embedder: "use"},
		{Systems: []string{"faiss"}},
		{LatencyPerCall: -time.Second},
	} {
		c.EnsureDefaults()
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	c := Config{Embedder: EmbedderHashLatency}
	c.EnsureDefaults()
	if c.LatencyPerCall != DefaultLatencyPerCall || c.Records != DefaultRecords || c.K != DefaultK || c.QueryLimit != nil {
		t.Errorf("defaults: %+v", c)
	}
	c = Config{Records: 1_000_000}
	c.EnsureDefaults()
	if c.QueryLimit["chromem"] != DefaultChromemQueries || len(c.QueryLimit) != 1 {
		t.Errorf("1M: query limit %v", c.QueryLimit)
	}
	c = Config{Records: 1_000_000, QueryLimit: map[string]int{}}
	c.EnsureDefaults()
	if len(c.QueryLimit) != 0 {
		t.Errorf("explicit no limit became %v", c.QueryLimit)
	}
}

func TestCrossover(t *testing.T) {
	// lazymem: ingest 1s, 0.01 s/query; eager: 11 s, 0.001 s/query.
	c := crossover(1, 0.01, 11, 0.001)
	if c.Before != SystemLazymem || c.After != "eager" || abs(c.Queries-10/0.009) > 1e-6 {
		t.Fatalf("crossover %+v", c)
	}
	c = crossover(11, 0.001, 1, 0.01)
	if c.Before != "eager" || c.After != SystemLazymem || abs(c.Queries-10/0.009) > 1e-6 {
		t.Fatalf("crossover %+v", c)
	}
	if c := crossover(1, 0.001, 11, 0.01); c.Queries != 0 || c.Before != SystemLazymem || c.After != SystemLazymem {
		t.Fatalf("no crossover expected: %+v", c)
	}
	if c := crossover(11, 0.01, 1, 0.001); c.Queries != 0 || c.Before != "eager" {
		t.Fatalf("no crossover expected: %+v", c)
	}
}
