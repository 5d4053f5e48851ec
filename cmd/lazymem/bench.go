package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lazymem/lazymem/bench"
	"github.com/lazymem/lazymem/bench/eval"
	"github.com/lazymem/lazymem/bench/suite"
	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/bench/zipf"
	"github.com/lazymem/lazymem/engine"
)

const benchSynopsis = `bench [--scale 10k|100k|1m] [--queries N] [--embedder hash|hash+latency] [--latency D] [--systems list] [--json]
             [--candidates N] [--no-session-context] [--context-sample] [--context-weight W] [--live]
       bench --corpus zipf [--scale 200k|1m] [--seed N] [--per-class N] [--rounds N] [--dir DIR] [--cache]
             [--vocab N] [--exponent S] [--agents N] [--cjk-share F] [--no-session-context]

Writes the same seeded agent history into lazymem and into eager-RAG
baselines that embed every record at write time (chromem-go, HNSW, flat
search with lazymem's kernels), asks all of them the same questions (facts
planted in the history, with known answers), and prints one table: ingest
time, embedding calls, bytes, recall latency p50/p99, recall@k, memory, and
the end-to-end time of the writes followed by the queries. Progress goes to
standard error.

With --corpus zipf it instead generates a Zipf corpus (words of an
artificial vocabulary drawn from a Zipf law, interleaved sessions of many
agents, a share of Chinese-script agents; --vocab, --exponent, --min-words,
--max-words, --agents, --session-turns, --days and --cjk-share choose the
member of the family), loads it into the whole lazymem
engine (the durable log and the index, one writer, batches of 1000, timed
until Close returns: the headline ingest rate), into lazymem's index alone
(second row) and into Bleve, and times the broad stage (BM25 top 10 under a
filter) of the index and Bleve per query class (mid, rare, common, long,
cjk) and filter (none, window, agent, session), alternating the engines in
one run. It prints Markdown tables: the ingest rates with their ratios to
Bleve's, and the p50/p99 ratios.`

func cmdBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", benchSynopsis, stderr)
	scale := fs.String("scale", "10k", "records in the history: 10k, 100k, 1m, or any count")
	queries := fs.Int("queries", 300, "labelled questions asked of every system")
	keyword := fs.Int("keyword-queries", 100, "extra 2-4 term queries for latency")
	emb := fs.String("embedder", "hash", "hash (near-free, timed as it is) or hash+latency (adds the remote-API latency model)")
	latency := fs.Duration("latency", 0, "modelled latency of one embedding API request (default 150ms with hash+latency)")
	systems := stringList{}
	fs.Var(&systems, "systems", "`SYSTEMS` to compare (comma-separated): "+strings.Join(suite.Systems, ", ")+" (default all)")
	seed := fs.Int64("seed", 1, "workload seed")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	scales := stringList{}
	fs.Var(&scales, "scales", "several `SCALES`, e.g. 10k,100k,1m: one run each, smallest first (overrides --scale)")
	reportDir := fs.String("report-dir", "", "with --scales: write scaling.md and two SVG plots (latency, embeddings vs corpus size) in `DIR`")
	candidates := fs.Int("candidates", 0, "lazymem's BM25 candidates per query (default: the engine's, max(50, 5*K))")
	noContext := fs.Bool("no-session-context", false, "lazymem indexes each record without its session's previous turn")
	live := fs.Bool("live", false, "lazymem's clock follows the stream while it ingests, so its working memory embeds the latest turns as in a live conversation (within its bounds)")
	ctxSample := fs.Bool("context-sample", false, "lazymem's turns inherit a sample of their predecessor no longer than themselves (index.Options.ContextSample)")
	ctxWeight := fs.Float64("context-weight", 0, "weight `W` in (0, 1] of an inherited word (index.Options.ContextWeight; default 1)")
	corpus := fs.String("corpus", "agent", "`CORPUS`: agent (the planted-fact agent history) or zipf (side by side with Bleve per query class)")
	perClass := fs.Int("per-class", 100, "with --corpus zipf: queries per class/filter cell")
	rounds := fs.Int("rounds", 3, "with --corpus zipf: timed passes over the queries")
	dir := fs.String("dir", "", "with --corpus zipf: scratch `DIR` for both indexes (default: a temporary one, removed)")
	cache := fs.Bool("cache", false, "with --corpus zipf: keep the built indexes under --dir and reuse them on the next run with the same corpus (empty --dir after changing either engine)")
	vocab := fs.Int("vocab", 0, "with --corpus zipf: vocabulary size (default 50000)")
	exponent := fs.Float64("exponent", 0, "with --corpus zipf: Zipf exponent, above 1 (default 1.1)")
	agents := fs.Int("agents", 0, "with --corpus zipf: agents (default 100)")
	cjkShare := fs.Float64("cjk-share", 0, "with --corpus zipf: share of agents writing Chinese script (default 0.1, negative for none)")
	minWords := fs.Int("min-words", 0, "with --corpus zipf: fewest words a record (default 8)")
	maxWords := fs.Int("max-words", 0, "with --corpus zipf: most words a record (default 48, or --min-words if larger)")
	sessionTurns := fs.Int("session-turns", 0, "with --corpus zipf: mean records a session (default 20)")
	days := fs.Int("days", 0, "with --corpus zipf: days the records span, at least 8 (default 90)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("bench: unexpected argument %q", pos[0])
	}
	switch *corpus {
	case "agent":
	case "zipf":
		n, err := workload.ParseScale(*scale)
		if err != nil {
			return usagef("bench: --scale: %v", err)
		}
		if *scale == "10k" && !flagSet(fs, "scale") {
			n = 200000
		}
		if *cache && *dir == "" {
			return usagef("bench: --cache needs --dir")
		}
		o := bench.ZipfOptions{
			Corpus: zipf.Config{Seed: *seed, Records: n, Vocab: *vocab, Exponent: *exponent,
				Agents: *agents, CJKShare: *cjkShare, MinWords: *minWords, MaxWords: *maxWords,
				SessionTurns: *sessionTurns, Days: *days},
			PerClass: *perClass, QuerySeed: *seed + 1, Dir: *dir, Cache: *cache,
			SessionContext: !*noContext,
		}
		return runZipfBench(o, *rounds, stdout, stderr)
	default:
		return usagef("bench: --corpus %q: want agent or zipf", *corpus)
	}
	if len(scales) == 0 {
		scales = stringList{*scale}
	} else if *asJSON {
		return usagef("bench: --json prints one report: use it with --scale, not --scales")
	}
	var cfgs []suite.Config
	for _, sc := range scales {
		n, err := workload.ParseScale(sc)
		if err != nil {
			return usagef("bench: --scale: %v", err)
		}
		cfg := suite.Config{
			Records: n, Queries: *queries, KeywordQueries: *keyword, Seed: *seed,
			Embedder: *emb, LatencyPerCall: *latency, Systems: systems, Progress: stderr,
			Candidates: *candidates, DisableSessionContext: *noContext,
			ContextSample: *ctxSample, ContextWeight: *ctxWeight, Live: *live,
		}
		cfg.EnsureDefaults()
		if err := cfg.Validate(); err != nil {
			return usageError{err.Error()}
		}
		cfgs = append(cfgs, cfg)
	}
	if *reportDir != "" && len(cfgs) < 2 {
		return usagef("bench: --report-dir needs --scales with at least two sizes")
	}
	var reps []*suite.Report
	for _, cfg := range cfgs {
		rep, err := suite.Run(ctx, cfg)
		if err != nil {
			return err
		}
		reps = append(reps, rep)
		if len(cfgs) > 1 {
			if _, err := io.WriteString(stdout, rep.Table()+"\n"); err != nil {
				return err
			}
		}
	}
	if len(cfgs) > 1 {
		if *reportDir == "" {
			return nil
		}
		return writeScalingReport(*reportDir, reps, "lazymem bench "+strings.Join(args, " "))
	}
	rep := reps[0]
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	_, err = io.WriteString(stdout, rep.Table())
	return err
}

const evalSynopsis = `eval locomo --data DIR [--embedder hash|replay:DIR|use[:DIR]|gloss[:DIR]|openai:MODEL[@BASEURL]] [--mode lazy|sparse|dense] [--k 1,5,10,25] [--json]
            [--fusion weighted|rrf] [--dense-weight W] [--candidates N] [--no-session-context]
            [--context-sample] [--context-weight W] [--no-captions]

Ingests every LoCoMo-format conversation file (*.json) of DIR into its own
agent scope (a turn's text followed by the caption of the image it shares,
which only the sparse stage sees; --no-captions stores the text alone), asks each question of categories 1-4 against its own
conversation, and reports evidence recall@k (the fraction of a question's
evidence turns found in the top k, averaged over questions), overall and per
category, with the embeddings computed and the turns stored. --mode may list
several modes (comma-separated); --json prints one JSON object per mode.
--fusion, --dense-weight, --candidates, --no-session-context,
--context-sample and --context-weight change the engine's defaults, for
ablations.`

func cmdEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "locomo" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			fmt.Fprintf(stderr, "Usage: lazymem %s\n", evalSynopsis)
			return nil
		}
		return usagef("eval: the only dataset is locomo: lazymem %s", strings.SplitN(evalSynopsis, "\n", 2)[0])
	}
	fs := newFlags("eval locomo", evalSynopsis, stderr)
	data := fs.String("data", "", "`DIR` of LoCoMo-format conversation files (required)")
	emb := fs.String("embedder", eval.DefaultEmbedder, "embedder `SPEC`: hash, replay:DIR (vectors from .fvecs beside the conversations), use[:DIR] (USE-lite in process; model from \"make use-model\", default .cache/use-lite or $LAZYMEM_USE_DIR), gloss[:DIR] (CC-CEDICT glosses embedded by USE-lite; dictionary from \"make cedict\"), or openai:MODEL[@BASEURL] (an OpenAI-compatible endpoint; key from $OPENAI_API_KEY)")
	modes := stringList{}
	fs.Var(&modes, "mode", "`MODES`: lazy, sparse or dense; comma-separated for several (default lazy)")
	ks := fs.String("k", "1,5,10,25", "cut-offs `KS` (comma-separated) to report recall at")
	asJSON := fs.Bool("json", false, "print one JSON object per mode")
	quiet := fs.Bool("quiet", false, "no progress lines on standard error")
	fusion := fs.String("fusion", "", "fusion of sparse and dense scores: weighted or rrf (default: the engine's, weighted)")
	denseWeight := fs.Float64("dense-weight", 0, "weight of the dense score in [0, 1] (default: the engine's)")
	candidates := fs.Int("candidates", 0, "BM25 candidates per question (default: the engine's, max(50, 5*K))")
	noContext := fs.Bool("no-session-context", false, "index each turn without its session's previous turn")
	noCaptions := fs.Bool("no-captions", false, "store each turn's text without the caption of the image it shares")
	ctxSample := fs.Bool("context-sample", false, "a turn inherits a sample of its predecessor no longer than itself (index.Options.ContextSample)")
	ctxWeight := fs.Float64("context-weight", 0, "weight `W` in (0, 1] of an inherited word (index.Options.ContextWeight; default 1)")
	pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usagef("eval locomo: unexpected argument %q", pos[0])
	case *data == "":
		return usagef("eval locomo: --data is required")
	}
	cfg := eval.Config{DataDir: *data, Embedder: *emb, Fusion: engine.Fusion(*fusion), DenseWeight: *denseWeight,
		Candidates: *candidates, DisableSessionContext: *noContext, ContextSample: *ctxSample, ContextWeight: *ctxWeight,
		NoCaptions: *noCaptions}
	if strings.HasPrefix(*emb, "openai:") || *emb == "gloss" || strings.HasPrefix(*emb, "gloss:") {
		// bench/eval knows the embedders of its own replays; an endpoint
		// or the gloss embedder is opened here, as the other commands
		// open it.
		if cfg.Embed, err = openEmbedder(*emb); err != nil {
			return err
		}
		cfg.Embedder = cfg.Embed.Name() // the table's label, without the URL
	}
	if !*quiet {
		cfg.Progress = stderr
	}
	if len(modes) == 0 {
		modes = stringList{string(engine.ModeLazy)}
	}
	for _, m := range modes {
		cfg.Modes = append(cfg.Modes, engine.Mode(m))
	}
	for _, s := range splitComma(*ks) {
		var k int
		if _, err := fmt.Sscan(s, &k); err != nil {
			return usagef("eval locomo: --k: %q is not a number", s)
		}
		cfg.Ks = append(cfg.Ks, k)
	}
	cfg.EnsureDefaults()
	if err := cfg.Validate(); err != nil {
		return usageError{err.Error()}
	}
	start := time.Now()
	rep, err := eval.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if *asJSON {
		return rep.WriteJSON(stdout)
	}
	if err := rep.WriteTable(stdout); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n%d conversations, %v\n", rep.Conversations, time.Since(start).Round(time.Millisecond))
	return nil
}

// writeScalingReport writes scaling.md and its two plots into dir.
func writeScalingReport(dir string, reps []*suite.Report, command string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	plots := []struct {
		file, title, y string
		f              func(*suite.SystemReport) float64
	}{
		{"scaling-latency.svg", "recall latency p50 vs corpus size", "p50 (ms)", func(s *suite.SystemReport) float64 { return s.P50Millis }},
		{"scaling-embeddings.svg", "texts embedded (ingest + queries) vs corpus size", "texts embedded", func(s *suite.SystemReport) float64 { return float64(s.Embed.Texts) }},
	}
	var names []string
	for _, p := range plots {
		f, err := os.Create(filepath.Join(dir, p.file))
		if err != nil {
			return err
		}
		err = suite.WriteSVG(f, p.title, "records", p.y, suite.ScalingSeries(reps, p.f))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		names = append(names, p.file)
	}
	f, err := os.Create(filepath.Join(dir, "scaling.md"))
	if err != nil {
		return err
	}
	err = suite.WriteScalingMarkdown(f, reps, command, names)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// runZipfBench builds both engines over the Zipf corpus and prints the
// per-class side-by-side table.
func runZipfBench(o bench.ZipfOptions, rounds int, stdout, stderr io.Writer) error {
	if o.Dir == "" {
		d, err := os.MkdirTemp("", "lazymem-bench-zipf-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		o.Dir = d
	} else if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "zipf: generating %d records and building both indexes under %s\n", o.Corpus.Records, o.Dir)
	s, err := bench.ZipfSideBySide(o)
	if err != nil {
		if errors.Is(err, zipf.ErrConfig) || errors.Is(err, bench.ErrOptions) {
			return usageError{err.Error()}
		}
		return err
	}
	defer s.Close()
	fmt.Fprintf(stderr, "zipf: timing %d queries x %d rounds on both engines\n", len(s.Corpus.Queries), rounds)
	r, err := s.RunClasses(10, rounds)
	if err != nil {
		return err
	}
	r.Corpus = o.Corpus.Describe()
	_, err = io.WriteString(stdout, r.Markdown())
	return err
}

// flagSet reports whether the command line gave flag name.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
