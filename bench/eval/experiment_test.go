package eval

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/engine"
)

// TestExperiments measures what moves LoCoMo evidence recall: engine-side
// changes simulated from this package (per-conversation BM25 statistics,
// the speaker in the indexed text, BM25 k1/b) and query-side ones
// (candidate count, fusion, dense weight, a boost for the speaker the
// question names). Opt-in, it takes a few minutes:
//
//	LAZYMEM_EVAL_EXPERIMENTS=1 go test ./bench/eval -run TestExperiments -v -timeout 30m
//
// LAZYMEM_EVAL_EXPERIMENTS may also be a regexp selecting variants by name.
func TestExperiments(t *testing.T) {
	sel := os.Getenv("LAZYMEM_EVAL_EXPERIMENTS")
	if sel == "" {
		t.Skip("set LAZYMEM_EVAL_EXPERIMENTS=1 (or a regexp of variant names) to run the experiments")
	}
	if sel == "1" {
		sel = ""
	}
	re := regexp.MustCompile(sel)
	dir := dataDir(t)
	replay := "replay:" + dir
	all := []engine.Mode{engine.ModeSparse, engine.ModeDense, engine.ModeLazy}
	lazy := []engine.Mode{engine.ModeLazy}
	sparseLazy := []engine.Mode{engine.ModeSparse, engine.ModeLazy}

	type variant struct {
		name  string
		modes []engine.Mode
		edit  func(c *Config)
		// hashOnly: the variant changes the text the question is embedded
		// from, which the replay embedder has no vector for.
		hashOnly bool
	}
	variants := []variant{
		{"base", all, func(*Config) {}, false},
		{"per-conversation-idf", sparseLazy, func(c *Config) { c.x.perConversation = true }, false},
		{"speaker-in-text", all, speakerInText, false},
		{"speaker-in-text+per-conv", sparseLazy, func(c *Config) { speakerInText(c); c.x.perConversation = true }, false},
		{"strip-speaker-names", all, func(c *Config) { c.Rewrite = stripNames }, true},
	}
	for _, n := range []int{50, 100, 400, 1000} {
		variants = append(variants, variant{fmt.Sprintf("candidates=%d", n), lazy, func(c *Config) { c.Candidates = n }, false})
	}
	for _, w := range []float64{0.2, 0.3, 0.4, 0.6} {
		variants = append(variants, variant{fmt.Sprintf("rrf-dense-weight=%.1f", w), lazy, func(c *Config) { c.DenseWeight = w }, false})
	}
	for _, w := range []float64{0.2, 0.3, 0.5} {
		variants = append(variants, variant{fmt.Sprintf("weighted-dense-weight=%.1f", w), lazy, func(c *Config) {
			c.Fusion, c.DenseWeight = engine.FusionWeighted, w
		}, false})
	}
	for _, kb := range [][2]float64{{0.9, 0.4}, {1.2, 0.5}, {1.5, 0.75}, {1.2, 0.9}} {
		variants = append(variants, variant{fmt.Sprintf("bm25-k1=%.1f-b=%.2f", kb[0], kb[1]), sparseLazy, func(c *Config) {
			c.x.options = func(o *engine.Options) { o.Index.K1, o.Index.B = kb[0], kb[1] }
		}, false})
	}
	for _, boost := range []float64{1.5, 2, 3} {
		variants = append(variants, variant{fmt.Sprintf("speaker-boost=%.1f", boost), sparseLazy, func(c *Config) {
			c.x.recall = speakerBoost(boost, 0)
		}, false})
		variants = append(variants, variant{fmt.Sprintf("speaker-in-text+speaker-boost=%.1f", boost), sparseLazy, func(c *Config) {
			speakerInText(c)
			c.x.recall = speakerBoost(boost, 0)
		}, false})
	}

	var out strings.Builder
	fmt.Fprintf(&out, "| variant | embedder | mode | R@1 | R@5 | R@10 | R@25 | embedded |\n|---|---|---|---:|---:|---:|---:|---:|\n")
	for _, v := range variants {
		if !re.MatchString(v.name) {
			continue
		}
		for _, spec := range []string{"hash", replay} {
			if v.hashOnly && spec != "hash" {
				continue
			}
			cfg := Config{DataDir: dir, Embedder: spec, Modes: v.modes}
			v.edit(&cfg)
			rep, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatalf("%s %s: %v", v.name, spec, err)
			}
			label := spec
			if spec == replay {
				label = "replay"
			}
			for _, run := range rep.Runs {
				line := fmt.Sprintf("| %s | %s | %s | %.3f | %.3f | %.3f | %.3f | %d |\n", v.name, label, run.Mode,
					run.Recall[1], run.Recall[5], run.Recall[10], run.Recall[25], run.Embedded)
				out.WriteString(line)
				t.Log(strings.TrimSpace(line))
			}
		}
	}
	t.Logf("\n%s", out.String())
}

// speakerInText simulates indexing the speaker with the text: the stored
// text is "Speaker: text" (so BM25 sees the name), and the constructed text
// is that text as is (so it is still "Speaker: text", the replay key).
func speakerInText(c *Config) {
	c.x.record = func(r *engine.Record) { r.Text = r.Role + ": " + r.Text }
	c.Construct = func(r *engine.Record) string { return r.Text }
}

// namedSpeakers returns the conversation's speakers whose name occurs in
// the question as a word.
func namedSpeakers(conv Conversation, question string) []string {
	var named []string
	words := strings.FieldsFunc(question, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
	for _, s := range conv.Speakers {
		if s != "" && slices.Contains(words, s) {
			named = append(named, s)
		}
	}
	return named
}

// stripNames removes the speakers' names from the question.
func stripNames(conv Conversation, question string) engine.Query {
	q := question
	for _, s := range namedSpeakers(conv, question) {
		q = regexp.MustCompile(`\b`+regexp.QuoteMeta(s)+`('s)?\b`).ReplaceAllString(q, "")
	}
	return engine.Query{Text: strings.Join(strings.Fields(q), " ")}
}

// speakerBoost re-ranks a recall: memories spoken by a speaker the
// question names get their score multiplied by boost. The recall asks for
// depth memories (0: the engine's candidate count) so the boost can lift
// records from below the cut.
func speakerBoost(boost float64, depth int) func(ctx context.Context, db *engine.DB, conv Conversation, q engine.Query) (*engine.Result, error) {
	return func(ctx context.Context, db *engine.DB, conv Conversation, q engine.Query) (*engine.Result, error) {
		k := q.K
		if depth == 0 {
			depth = max(q.Candidates, engine.DefaultCandidates)
		}
		q.K = max(k, depth)
		res, err := db.Recall(ctx, q)
		if err != nil {
			return nil, err
		}
		named := namedSpeakers(conv, q.Text)
		if len(named) == 0 {
			res.Memories = res.Memories[:min(k, len(res.Memories))]
			return res, nil
		}
		for i := range res.Memories {
			if slices.Contains(named, res.Memories[i].Role) {
				res.Memories[i].Score *= boost
			}
		}
		slices.SortStableFunc(res.Memories, func(a, b engine.Memory) int {
			switch {
			case a.Score > b.Score:
				return -1
			case a.Score < b.Score:
				return 1
			}
			return 0
		})
		res.Memories = res.Memories[:min(k, len(res.Memories))]
		return res, nil
	}
}
