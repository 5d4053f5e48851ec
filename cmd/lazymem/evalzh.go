package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/lazymem/lazymem/bench/zhmem"
	"github.com/lazymem/lazymem/engine"
)

const evalZhSynopsis = `evalzh [--data DIR] [--embedder SPEC] [--mode lazy|sparse|dense] [--k 1,5,10] [--json]
              [--dense-weight W] [--candidates N]

Evaluates recall on the Chinese memory set of bench/zhmem (30 days of
user-assistant chats, probing questions with evidence turns): a fresh store
per mode, every question asked, evidence recall@k (the share of a question's
evidence turns in the top k) overall and per question kind. --mode may list
several modes (comma-separated). USE-lite (--embedder use) is an English
model: on this set its dense evidence is close to noise; a multilingual
model served by an OpenAI-compatible endpoint runs with --embedder
openai:MODEL@BASEURL (docs/benchmarks/zh-embedders.md). --dense-weight and
--candidates change the engine's defaults, for a semantic embedder and for
ablations.`

func cmdEvalZh(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("evalzh", evalZhSynopsis, stderr)
	data := fs.String("data", "bench/zhmem/testdata", "`DIR` holding chats.jsonl and questions.jsonl")
	spec := fs.String("embedder", "hash", embedderUsage)
	modes := stringList{}
	fs.Var(&modes, "mode", "`MODES`: lazy, sparse or dense; comma-separated for several (default lazy)")
	ks := fs.String("k", "1,5,10", "cut-offs `KS` (comma-separated) to report recall at")
	asJSON := fs.Bool("json", false, "print the reports as one JSON array")
	denseWeight := fs.Float64("dense-weight", 0, "weight of the dense score in [0, 1] (default: the engine's)")
	candidates := fs.Int("candidates", 0, "BM25 candidates per question (default: the engine's, max(50, 5*K))")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("evalzh: unexpected argument %q", pos[0])
	}
	cfg := zhmem.Config{DenseWeight: *denseWeight, Candidates: *candidates}
	for _, s := range splitComma(*ks) {
		var k int
		if _, err := fmt.Sscan(s, &k); err != nil {
			return usagef("evalzh: --k: %q is not a number", s)
		}
		cfg.Ks = append(cfg.Ks, k)
	}
	if len(modes) == 0 {
		modes = stringList{string(engine.ModeLazy)}
	}
	set, err := zhmem.Load(*data)
	if err != nil {
		return err
	}
	emb, err := openEmbedder(*spec)
	if err != nil {
		return err
	}
	start := time.Now()
	var reps []*zhmem.Report
	for _, m := range modes {
		c := cfg
		c.Mode, c.Embedder = engine.Mode(m), emb
		rep, err := zhmem.Evaluate(ctx, set, c)
		if errors.Is(err, zhmem.ErrConfig) {
			return usageError{err.Error()}
		}
		if err != nil {
			return err
		}
		reps = append(reps, rep)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(reps)
	}
	if err := zhmem.WriteTable(stdout, reps...); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n%d records, %d questions, %v\n", len(set.Records), len(set.Questions), time.Since(start).Round(time.Millisecond))
	return nil
}
