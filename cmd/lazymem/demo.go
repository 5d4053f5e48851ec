package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/engine"
)

const demoSynopsis = `demo synthetic [--records N] [--agents N] [--seed S] [--db DIR]

Generates a realistic history of several agents (user, assistant and tool
turns over 90 days, with facts planted among the chit-chat), ingests it into
a fresh store, and asks it questions about the planted facts, showing each
recall's stages and what they cost. The store goes to a temporary directory
that is removed afterwards, unless --db is given.`

// cmdDemo runs the meeting assistant ("demo" or "demo meeting") or the
// synthetic multi-agent history ("demo synthetic").
func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "synthetic":
			return cmdDemoSynthetic(ctx, args[1:], stdout, stderr)
		case "meeting":
			return cmdDemoMeeting(ctx, args[1:], stdout, stderr)
		}
	}
	return cmdDemoMeeting(ctx, args, stdout, stderr)
}

func cmdDemoSynthetic(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo synthetic", demoSynopsis, stderr)
	records := fs.Int("records", 100000, "records to generate")
	agents := fs.Int("agents", 20, "agents (tenants) in the history")
	seed := fs.Int64("seed", 42, "generator seed (same seed, same history)")
	dir := fs.String("db", "", "keep the store in `DIR` (must not exist yet)")
	embedder := fs.String("embedder", "hash", embedderUsage)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usagef("demo: unexpected argument %q", pos[0])
	case *records < 1000 || *records > 10000000:
		return usagef("demo: --records must be in [1000, 10000000], got %d", *records)
	case *agents < 1 || *agents > 10000:
		return usagef("demo: --agents must be in [1, 10000], got %d", *agents)
	}
	if *dir == "" {
		tmp, err := os.MkdirTemp("", "lazymem-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		*dir = tmp
	} else if _, err := os.Stat(*dir); err == nil {
		return usagef("demo: --db %s already exists; the demo writes a fresh store", *dir)
	}

	cfg := workload.Config{Seed: *seed, Records: *records, Agents: *agents, Sessions: 40}
	fmt.Fprintf(stdout, "lazymem demo: %d records of %d agents over 90 days (seed %d), store in %s\n\n", *records, *agents, *seed, *dir)

	// 1. Write: append everything, durably, in batches. No embedding.
	emb, err := openEmbedder(*embedder)
	if err != nil {
		return err
	}
	db, err := engine.Open(*dir, engine.Options{Embedder: emb})
	if err != nil {
		return err
	}
	defer db.Close()
	gen := workload.New(cfg)
	var r workload.Record
	batch := make([]engine.Record, 0, 1000)
	pr := newProgress(stderr, "ingest", 0)
	start := time.Now()
	var textBytes int64
	n := 0
	for gen.Next(&r) {
		batch = append(batch, engine.Record{Time: r.Time, Agent: r.Agent, Session: r.Session, Role: r.Role, Text: r.Text, Meta: r.Meta})
		textBytes += int64(len(r.Text))
		if len(batch) == cap(batch) {
			if _, err := db.AppendBatch(ctx, batch); err != nil {
				return err
			}
			n += len(batch)
			batch = batch[:0]
			pr.update(int64(n), 0)
		}
	}
	if len(batch) > 0 {
		if _, err := db.AppendBatch(ctx, batch); err != nil {
			return err
		}
		n += len(batch)
	}
	pr.done()
	ingest := time.Since(start)
	m := db.Metrics()
	fmt.Fprintf(stdout, "1. write: %d records appended durably in %v (%.0f records/s, generation included), %s of text.\n",
		n, ingest.Round(time.Millisecond), float64(n)/ingest.Seconds(), human(textBytes))
	fmt.Fprintf(stdout, "   Only cheap structures were built: a compressed log (%d segments sealed so far) and bitmap/BM25 postings.\n", m.Log.Segments)
	fmt.Fprintf(stdout, "   Embeddings computed at write time: %d (eager RAG would have computed %d).\n\n", m.Cache.Computed, n)

	// 2. Recall planted facts: lazy, then the same questions sparse and dense.
	qs := workload.New(cfg).Queries(300)
	picked := pickQueries(qs)
	now := cfg.Start
	if now.IsZero() {
		now = workload.DefaultStart
	}
	now = now.Add(90 * 24 * time.Hour)
	fmt.Fprintf(stdout, "2. recall: questions about facts planted in the history (labels known by construction).\n\n")
	totals := map[engine.Mode]*demoTotals{}
	for _, mode := range []engine.Mode{engine.ModeLazy, engine.ModeSparse, engine.ModeDense} {
		totals[mode] = &demoTotals{}
	}
	for i, q := range picked {
		fmt.Fprintf(stdout, "Q%d (%s, agent %s): %q\n", i+1, q.Kind, q.Agent, q.Text)
		for _, mode := range []engine.Mode{engine.ModeLazy, engine.ModeSparse, engine.ModeDense} {
			res, err := db.Recall(ctx, engine.Query{
				Text: q.Text, Agent: q.Agent, Since: q.Since, Until: q.Until, K: 5, Mode: mode, Now: now,
			})
			if err != nil {
				return err
			}
			rank := relevantRank(res.Memories, q.Relevant)
			t := totals[mode]
			t.n++
			t.embedded += res.Stats.Embedded
			t.total += res.Stats.Durations.Total
			if rank > 0 {
				t.found++
			}
			found := "not in the top 5"
			if rank > 0 {
				found = fmt.Sprintf("found at rank %d", rank)
			}
			fmt.Fprintf(stdout, "   %-6s %-18s %6d filtered  %4d candidates  %6d embedded  %8v\n",
				mode, found, res.Stats.Filtered, res.Stats.Candidates, res.Stats.Embedded, round(res.Stats.Durations.Total))
			if mode == engine.ModeLazy && len(res.Memories) > 0 {
				top := res.Memories[0]
				fmt.Fprintf(stdout, "          top: [%s] %s: %s\n", top.Time.Format("2006-01-02 15:04"), top.Role, truncate(oneLine(top.Text), 110))
				d := res.Stats.Durations
				fmt.Fprintf(stdout, "          lazy stages: filter %v, broad %v, fetch %v, embed %v, score %v\n",
					round(d.Filter), round(d.Broad), round(d.Fetch), round(d.Embed), round(d.Score))
			}
		}
		fmt.Fprintln(stdout)
	}
	fmt.Fprintf(stdout, "Summary over %d questions (top 5):\n", len(picked))
	for _, mode := range []engine.Mode{engine.ModeLazy, engine.ModeSparse, engine.ModeDense} {
		t := totals[mode]
		fmt.Fprintf(stdout, "   %-6s found %d/%d, %d texts embedded, mean latency %v\n", mode, t.found, t.n, t.embedded, round(t.total/time.Duration(max(1, t.n))))
	}
	fmt.Fprintln(stdout, "   (dense ran after lazy, so it reused lazy's cached embeddings: its count is only the rest)")

	// 3. The cache: the same lazy recall again embeds nothing.
	if len(picked) > 0 {
		q := picked[0]
		res, err := db.Recall(ctx, engine.Query{Text: q.Text, Agent: q.Agent, Since: q.Since, Until: q.Until, K: 5, Now: now})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\n3. cache: Q1 again in lazy mode: %d embedded, %d from cache, %v.\n", res.Stats.Embedded, res.Stats.CacheHits, round(res.Stats.Durations.Total))
		fmt.Fprintf(stdout, "\n4. context for a prompt (FormatContext, 600 chars):\n%s\n", indent(engine.FormatContext(res.Memories, 600), "   "))
	}
	m = db.Metrics()
	fmt.Fprintf(stdout, "\nIn all: %d records stored, %d embeddings ever computed (%.2f%% of the records).\n",
		m.Log.Next-1, m.Cache.Computed, 100*float64(m.Cache.Computed)/float64(max(1, n)))
	return db.Close()
}

type demoTotals struct {
	n, found, embedded int
	total              time.Duration
}

// pickQueries takes two questions of each kind, in a stable order.
func pickQueries(qs []workload.Query) []workload.Query {
	var out []workload.Query
	count := map[string]int{}
	for _, q := range qs {
		if len(q.Relevant) == 0 || count[q.Kind] >= 2 {
			continue
		}
		count[q.Kind]++
		out = append(out, q)
	}
	slices.SortStableFunc(out, func(a, b workload.Query) int { return strings.Compare(a.Kind, b.Kind) })
	return out
}

// relevantRank is the 1-based rank of the first relevant record in mems,
// or 0. Ids are ordinals + 1 in a fresh store.
func relevantRank(mems []engine.Memory, relevant []int) int {
	for i, m := range mems {
		for _, o := range relevant {
			if m.ID == uint64(o)+1 {
				return i + 1
			}
		}
	}
	return 0
}

func indent(s, pre string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = pre + l
	}
	return strings.Join(lines, "\n")
}
