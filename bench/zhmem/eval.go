package zhmem

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/engine/embed"
)

// DefaultKs are the cut-offs reported when Config.Ks is empty.
var DefaultKs = []int{1, 5, 10}

// Config is one evaluation run.
type Config struct {
	// Mode of every recall. Default engine.ModeLazy.
	Mode engine.Mode
	// Embedder for ModeLazy and ModeDense. Default: the engine's (the hash
	// embedder). Ignored in ModeSparse, which opens the store without one.
	Embedder embed.Embedder
	// Ks are the cut-offs of R@k, each in [1, engine.MaxK]. Default
	// DefaultKs.
	Ks []int
	// Dir is where the store is created; it must not hold one. Default: a
	// new temporary directory, removed at the end.
	Dir string
	// DenseWeight is every query's engine.Query.DenseWeight, in [0, 1].
	// Default 0: the engine's (0.2 with weighted fusion, a weight chosen
	// for the hash embedder on LoCoMo).
	DenseWeight float64
	// Candidates is every query's engine.Query.Candidates, in
	// [0, engine.MaxCandidates]. Default 0: the engine's (50 for K=10).
	Candidates int
}

// Report is the outcome of one run.
type Report struct {
	Mode     engine.Mode
	Embedder string // the embedder's name; "" in ModeSparse
	// Questions asked and Records stored.
	Questions, Records int
	// Recall is R@k averaged over every question.
	Recall map[int]float64
	// ByKind is R@k averaged over the questions of each kind.
	ByKind map[string]map[int]float64
	// KindCount is the number of questions of each kind.
	KindCount map[string]int
	// Embedded is the number of texts the recalls embedded (questions
	// included; appending embeds nothing).
	Embedded int
	// Ranks is, per question id, the 1-based rank of each evidence record
	// in the top max(Ks), 0 when absent, in evidence order.
	Ranks map[string][]int
}

func (c *Config) ensureDefaults() error {
	if c.Mode == "" {
		c.Mode = engine.ModeLazy
	}
	switch c.Mode {
	case engine.ModeLazy, engine.ModeSparse, engine.ModeDense:
	default:
		return fmt.Errorf("%w: mode: %q, want lazy, sparse or dense", ErrConfig, string(c.Mode))
	}
	if len(c.Ks) == 0 {
		c.Ks = slices.Clone(DefaultKs)
	}
	for i, k := range c.Ks {
		if k < 1 || k > engine.MaxK {
			return fmt.Errorf("%w: ks[%d]: %d, want 1..%d", ErrConfig, i, k, engine.MaxK)
		}
	}
	if c.DenseWeight < 0 || c.DenseWeight > 1 {
		return fmt.Errorf("%w: dense weight: %g, want 0..1", ErrConfig, c.DenseWeight)
	}
	if c.Candidates < 0 || c.Candidates > engine.MaxCandidates {
		return fmt.Errorf("%w: candidates: %d, want 0..%d", ErrConfig, c.Candidates, engine.MaxCandidates)
	}
	return nil
}

// Evaluate runs every question of s against a fresh store holding s's
// records.
func Evaluate(ctx context.Context, s *Set, cfg Config) (rep *Report, err error) {
	if err := cfg.ensureDefaults(); err != nil {
		return nil, err
	}
	dir := cfg.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "zhmem-*"); err != nil {
			return nil, err
		}
		defer func() {
			if rerr := os.RemoveAll(dir); err == nil && rerr != nil {
				err = rerr
			}
		}()
	}
	opts := engine.Options{DisableEmbedder: cfg.Mode == engine.ModeSparse}
	if cfg.Mode != engine.ModeSparse {
		// The engine's default, built here so the report can name it.
		if opts.Embedder = cfg.Embedder; opts.Embedder == nil {
			if opts.Embedder, err = embed.NewHash(embed.HashOptions{}); err != nil {
				return nil, err
			}
		}
	}
	db, err := engine.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := db.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	recs := make([]engine.Record, len(s.Records))
	for i, r := range s.Records {
		recs[i] = engine.Record{Time: r.Time, Agent: r.Agent, Session: r.Session, Role: r.Role, Text: r.Text, Meta: r.Meta}
	}
	if _, err := db.AppendBatch(ctx, recs); err != nil {
		return nil, err
	}

	rep = &Report{
		Mode: cfg.Mode, Questions: len(s.Questions), Records: len(s.Records),
		Recall: map[int]float64{}, ByKind: map[string]map[int]float64{}, KindCount: map[string]int{},
		Ranks: make(map[string][]int, len(s.Questions)),
	}
	if opts.Embedder != nil {
		rep.Embedder = opts.Embedder.Name()
	}
	kmax := slices.Max(cfg.Ks)
	now := s.Last.Add(24 * time.Hour)
	for _, q := range s.Questions {
		res, err := db.Recall(ctx, engine.Query{Agent: s.Agent, Text: q.Text, K: kmax, Mode: cfg.Mode, Now: now,
			DenseWeight: cfg.DenseWeight, Candidates: cfg.Candidates})
		if err != nil {
			return nil, fmt.Errorf("zhmem: question %s: %w", q.ID, err)
		}
		rep.Embedded += res.Stats.Embedded
		ranks := evidenceRanks(res.Memories, q.Evidence)
		rep.Ranks[q.ID] = ranks
		if rep.ByKind[q.Kind] == nil {
			rep.ByKind[q.Kind] = map[int]float64{}
		}
		rep.KindCount[q.Kind]++
		for _, k := range cfg.Ks {
			r := recallAt(ranks, k)
			rep.Recall[k] += r
			rep.ByKind[q.Kind][k] += r
		}
	}
	for _, k := range cfg.Ks {
		rep.Recall[k] /= float64(len(s.Questions))
		for kind, m := range rep.ByKind {
			m[k] /= float64(rep.KindCount[kind])
		}
	}
	return rep, nil
}

// evidenceRanks returns, for each evidence key, the 1-based rank of its
// record among ms, 0 when absent.
func evidenceRanks(ms []engine.Memory, evidence []string) []int {
	ranks := make([]int, len(evidence))
	for i, m := range ms {
		for _, key := range m.Meta[KeyField] {
			if j := slices.Index(evidence, key); j >= 0 && ranks[j] == 0 {
				ranks[j] = i + 1
			}
		}
	}
	return ranks
}

// recallAt is the share of evidence ranked within the top k.
func recallAt(ranks []int, k int) float64 {
	hit := 0
	for _, r := range ranks {
		if r >= 1 && r <= k {
			hit++
		}
	}
	return float64(hit) / float64(len(ranks))
}

// WriteTable writes reports side by side as a markdown table: one row per
// report and kind.
func WriteTable(w io.Writer, reps ...*Report) error {
	if len(reps) == 0 {
		return nil
	}
	ks := slices.Sorted(maps.Keys(reps[0].Recall))
	var b strings.Builder
	b.WriteString("| mode | embedder | questions | kind |")
	for _, k := range ks {
		fmt.Fprintf(&b, " R@%d |", k)
	}
	b.WriteString(" embedded |\n| --- | --- | ---: | --- |")
	for range ks {
		b.WriteString(" ---: |")
	}
	b.WriteString(" ---: |\n")
	for _, r := range reps {
		emb := r.Embedder
		if emb == "" {
			emb = "-"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | all |", r.Mode, emb, r.Questions)
		for _, k := range ks {
			fmt.Fprintf(&b, " %.3f |", r.Recall[k])
		}
		fmt.Fprintf(&b, " %d |\n", r.Embedded)
		for _, kind := range slices.Sorted(maps.Keys(r.ByKind)) {
			fmt.Fprintf(&b, "| %s | %s | %d | %s |", r.Mode, emb, r.KindCount[kind], kind)
			for _, k := range ks {
				fmt.Fprintf(&b, " %.3f |", r.ByKind[kind][k])
			}
			b.WriteString(" |\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
