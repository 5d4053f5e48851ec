package eval

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestReport prints the full evaluation table for the embedders in
// LAZYMEM_EVAL_EMBEDDERS (comma-separated, e.g. "hash,replay:../../../shared/data/locomo").
// It is how docs/benchmarks/locomo.md was produced:
//
//	LAZYMEM_EVAL_EMBEDDERS=hash,replay:../../../shared/data/locomo go test ./bench/eval -run TestReport -v -timeout 20m
func TestReport(t *testing.T) {
	specs := os.Getenv("LAZYMEM_EVAL_EMBEDDERS")
	if specs == "" {
		t.Skip("set LAZYMEM_EVAL_EMBEDDERS to print the evaluation report")
	}
	dir := dataDir(t)
	for _, spec := range strings.Split(specs, ",") {
		rep, err := Run(context.Background(), Config{DataDir: dir, Embedder: spec, Progress: testWriter{t}})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := rep.WriteTable(&b); err != nil {
			t.Fatal(err)
		}
		if err := rep.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		t.Logf("embedder %s\n%s", spec, b.String())
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
