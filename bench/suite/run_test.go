//go:build report

// The full comparison, built only with the report tag so that it is never
// a skipped test (see TestSuiteRun for the command; add -tags report).

package suite

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/lazymem/lazymem/bench/workload"
)

// TestSuiteRun runs the whole comparison at a chosen scale when
// LAZYMEM_SUITE_SCALE is set (e.g. "100k", "1m"), printing progress, the
// table and, with LAZYMEM_SUITE_JSON=file, the JSON report. It is how the
// figures in docs/benchmarks/suite.md were produced until `lazymem bench`
// wires Run to the command line:
//
//	LAZYMEM_SUITE_SCALE=100k LAZYMEM_SUITE_QUERIES=800 LAZYMEM_SUITE_KEYWORD=200 \
//	  go test ./bench/suite -run TestSuiteRun -v -timeout 2h
func TestSuiteRun(t *testing.T) {
	scale := os.Getenv("LAZYMEM_SUITE_SCALE")
	if scale == "" {
		t.Skip("set LAZYMEM_SUITE_SCALE (10k, 100k, 1m) to run the comparison")
	}
	n, err := workload.ParseScale(scale)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Records: n, Embedder: EmbedderHashLatency, Progress: os.Stderr, Seed: 1}
	cfg.Queries = envInt(t, "LAZYMEM_SUITE_QUERIES", 0)
	cfg.KeywordQueries = envInt(t, "LAZYMEM_SUITE_KEYWORD", 0)
	cfg.Candidates = envInt(t, "LAZYMEM_SUITE_CANDIDATES", 0)
	if lim := envInt(t, "LAZYMEM_SUITE_CHROMEM_QUERIES", 0); lim > 0 {
		cfg.QueryLimit = map[string]int{"chromem": lim}
	} else if lim < 0 {
		cfg.QueryLimit = map[string]int{} // every query
	}
	if s := os.Getenv("LAZYMEM_SUITE_SYSTEMS"); s != "" {
		cfg.Systems = splitComma(s)
	}
	if s := os.Getenv("LAZYMEM_SUITE_LATENCY"); s != "" {
		if cfg.LatencyPerCall, err = time.ParseDuration(s); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString(rep.Table())
	if f := os.Getenv("LAZYMEM_SUITE_JSON"); f != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func envInt(t *testing.T, key string, def int) int {
	s := os.Getenv(key)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s=%q: %v", key, s, err)
	}
	return v
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}
