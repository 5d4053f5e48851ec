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

	for _, a := range []float64{0.1, 0.25, 0.5} {
		variants = append(variants, variant{fmt.Sprintf("neighbors=%.2f", a), sparseLazy, func(c *Config) {
			c.x.recall = neighbors(a, c.x.recall)
		}, false})
		variants = append(variants, variant{fmt.Sprintf("speaker-boost=2+neighbors=%.2f", a), sparseLazy, func(c *Config) {
			c.x.recall = neighbors(a, speakerBoost(2, 0))
		}, false})
	}
	variants = append(variants,
		variant{"strip-speaker-names+speaker-boost=2", all, func(c *Config) { c.Rewrite = stripNames; c.x.recall = speakerBoost(2, 0) }, true},
	)
	for _, a := range []float64{0.25, 0.5} {
		variants = append(variants,
			variant{fmt.Sprintf("strip-speaker-names+speaker-boost=2+neighbors=%.2f", a), all, func(c *Config) {
				c.Rewrite = stripNames
				c.x.recall = neighbors(a, speakerBoost(2, 0))
			}, true},
			variant{fmt.Sprintf("combo:per-conv+k1=0.9-b=0.4+boost=2+neighbors=%.2f+weighted=0.2", a), sparseLazy, func(c *Config) {
				c.x.perConversation = true
				c.x.options = func(o *engine.Options) { o.Index.K1, o.Index.B = 0.9, 0.4 }
				c.x.recall = neighbors(a, speakerBoost(2, 0))
				c.Fusion, c.DenseWeight = engine.FusionWeighted, 0.2
			}, false},
			variant{fmt.Sprintf("combo:speaker-in-text+per-conv+k1=0.9-b=0.4+neighbors=%.2f+weighted=0.2", a), sparseLazy, func(c *Config) {
				speakerInText(c)
				c.x.perConversation = true
				c.x.options = func(o *engine.Options) { o.Index.K1, o.Index.B = 0.9, 0.4 }
				c.x.recall = neighbors(a, nil)
				c.Fusion, c.DenseWeight = engine.FusionWeighted, 0.2
			}, false},
		)
	}
	for _, a := range []float64{0.25, 0.5} {
		variants = append(variants, variant{fmt.Sprintf("combo:strip-speaker-names+per-conv+k1=0.9-b=0.4+boost=2+neighbors=%.2f+weighted=0.2", a), all, func(c *Config) {
			c.Rewrite = stripNames
			c.x.perConversation = true
			c.x.options = func(o *engine.Options) { o.Index.K1, o.Index.B = 0.9, 0.4 }
			c.x.recall = neighbors(a, speakerBoost(2, 0))
			c.Fusion, c.DenseWeight = engine.FusionWeighted, 0.2
		}, true})
	}
	for _, a := range []float64{0, 0.25} {
		for _, span := range []int{1, 2} {
			variants = append(variants, variant{fmt.Sprintf("combo:expand-docs=%d+per-conv+k1=0.9-b=0.4+boost=2+neighbors=%.2f+weighted=0.2", span, a), sparseLazy, func(c *Config) {
				expandDocs(c, span)
				c.x.perConversation = true
				c.x.options = func(o *engine.Options) { o.Index.K1, o.Index.B = 0.9, 0.4; o.MaxFieldBytes = 1 << 16 }
				c.x.recall = neighbors(a, speakerBoost(2, 0))
				c.Fusion, c.DenseWeight = engine.FusionWeighted, 0.2
			}, false})
		}
	}
	// Ablations of the expansion combo: one ingredient at a time on top of
	// document expansion (span 1).
	kb := func(o *engine.Options) { o.Index.K1, o.Index.B = 0.9, 0.4; o.MaxFieldBytes = 1 << 16 }
	big := func(o *engine.Options) { o.MaxFieldBytes = 1 << 16 }
	variants = append(variants,
		variant{"expand-docs=1", all, func(c *Config) { expandDocs(c, 1); c.x.options = big }, false},
		variant{"expand-docs=1+per-conv", sparseLazy, func(c *Config) { expandDocs(c, 1); c.x.options = big; c.x.perConversation = true }, false},
		variant{"expand-docs=1+k1=0.9-b=0.4", sparseLazy, func(c *Config) { expandDocs(c, 1); c.x.options = kb }, false},
		variant{"expand-docs=1+boost=2", sparseLazy, func(c *Config) { expandDocs(c, 1); c.x.options = big; c.x.recall = speakerBoost(2, 0) }, false},
		variant{"expand-docs=1+weighted=0.2", lazy, func(c *Config) {
			expandDocs(c, 1)
			c.x.options = big
			c.Fusion, c.DenseWeight = engine.FusionWeighted, 0.2
		}, false},
		variant{"expand-docs=1+boost=2+weighted=0.2", sparseLazy, func(c *Config) {
			expandDocs(c, 1)
			c.x.options = big
			c.x.recall = speakerBoost(2, 0)
			c.Fusion, c.DenseWeight = engine.FusionWeighted, 0.2
		}, false},
		variant{"expand-docs=1+k1=0.9-b=0.4+boost=2+weighted=0.2", sparseLazy, func(c *Config) {
			expandDocs(c, 1)
			c.x.options = kb
			c.x.recall = speakerBoost(2, 0)
			c.Fusion, c.DenseWeight = engine.FusionWeighted, 0.2
		}, false},
	)
	// Names stripped from the BM25 text only (the dense side keeps the
	// question as written, so the replay embedder can serve it).
	variants = append(variants,
		variant{"strip-bm25-only+boost=2+weighted=0.2", lazy, func(c *Config) {
			c.x.recall = stripBM25(0.2, 2)
		}, false},
		variant{"expand-docs=1+strip-bm25-only+boost=2+weighted=0.2", lazy, func(c *Config) {
			expandDocs(c, 1)
			c.x.options = big
			c.x.recall = stripBM25(0.2, 2)
		}, false},
		variant{"combo:expand-docs=1+per-conv+k1=0.9-b=0.4+strip-bm25-only+boost=2+weighted=0.2", lazy, func(c *Config) {
			expandDocs(c, 1)
			c.x.perConversation = true
			c.x.options = kb
			c.x.recall = stripBM25(0.2, 2)
		}, false},
	)
	for _, w := range []float64{0.1, 0.15, 0.2, 0.25} {
		variants = append(variants, variant{fmt.Sprintf("weighted-dense-weight=%.2f", w), lazy, func(c *Config) {
			c.Fusion, c.DenseWeight = engine.FusionWeighted, w
		}, false})
		variants = append(variants, variant{fmt.Sprintf("rrf-dense-weight=%.2f", w), lazy, func(c *Config) { c.DenseWeight = w }, false})
		variants = append(variants, variant{fmt.Sprintf("combo:per-conv+k1=0.9-b=0.4+boost=2+weighted=%.2f", w), sparseLazy, func(c *Config) {
			c.x.perConversation = true
			c.x.options = func(o *engine.Options) { o.Index.K1, o.Index.B = 0.9, 0.4 }
			c.x.recall = speakerBoost(2, 0)
			c.Fusion, c.DenseWeight = engine.FusionWeighted, w
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
func speakerBoost(boost float64, depth int) recallFunc {
	return func(ctx context.Context, db *engine.DB, conv Conversation, question string, q engine.Query) (*engine.Result, error) {
		k := q.K
		if depth == 0 {
			depth = max(q.Candidates, engine.DefaultCandidates)
		}
		q.K = max(k, depth)
		res, err := db.Recall(ctx, q)
		if err != nil {
			return nil, err
		}
		named := namedSpeakers(conv, question)
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

// neighbors re-ranks a recall by its conversational context: a turn's score
// gains alpha times the scores of the turns just before and after it in its
// session (dia_ids Ds:t-1 and Ds:t+1), and a neighbor of a recalled turn
// that was not recalled enters with alpha times that turn's score. It
// simulates an engine stage that fetches each candidate's session
// neighbors.
func neighbors(alpha float64, inner recallFunc) recallFunc {
	return func(ctx context.Context, db *engine.DB, conv Conversation, question string, q engine.Query) (*engine.Result, error) {
		k := q.K
		q.K = max(k, q.Candidates, engine.DefaultCandidates)
		var res *engine.Result
		var err error
		if inner != nil {
			res, err = inner(ctx, db, conv, question, q)
		} else {
			res, err = db.Recall(ctx, q)
		}
		if err != nil {
			return nil, err
		}
		score := map[string]float64{}
		for _, m := range res.Memories {
			score[m.Meta["dia_id"][0]] = m.Score
		}
		next := map[string]float64{}
		for id, s := range score {
			next[id] += s
			var sess, turn int
			if _, err := fmt.Sscanf(id, "D%d:%d", &sess, &turn); err != nil {
				continue
			}
			for _, d := range []int{-1, 1} {
				next[fmt.Sprintf("D%d:%d", sess, turn+d)] += alpha * s
			}
		}
		ids := make([]string, 0, len(next))
		for id := range next {
			ids = append(ids, id)
		}
		slices.SortFunc(ids, func(a, b string) int {
			switch {
			case next[a] > next[b]:
				return -1
			case next[a] < next[b]:
				return 1
			}
			return strings.Compare(a, b)
		})
		ms := make([]engine.Memory, 0, k)
		for _, id := range ids[:min(k, len(ids))] {
			ms = append(ms, engine.Memory{Record: engine.Record{Meta: map[string][]string{"dia_id": {id}}}, Score: next[id]})
		}
		res.Memories = ms
		return res, nil
	}
}

// expandDocs simulates document expansion: the indexed text of a turn is its
// own text followed by the texts of the span turns before it in its session
// (where a question and its answer often sit), while the constructed text
// stays "Speaker: own text" (kept in meta "orig").
func expandDocs(c *Config, span int) {
	c.x.records = func(recs []engine.Record) {
		orig := make([]string, len(recs))
		for i := range recs {
			orig[i] = recs[i].Text
		}
		for i := range recs {
			recs[i].Meta["orig"] = []string{orig[i]}
			for j := i - 1; j >= 0 && j >= i-span && recs[j].Session == recs[i].Session; j-- {
				recs[i].Text += " " + orig[j]
			}
		}
	}
	c.Construct = func(r *engine.Record) string { return r.Role + ": " + r.Meta["orig"][0] }
}

// stripBM25 simulates a lazy recall whose BM25 text has the speakers' names
// removed while the dense side embeds the question as written: a sparse
// recall of the stripped text gives the candidates and their BM25 scores, a
// lazy recall of the full question the dense scores (candidates it did not
// reach get the lowest dense score); both are fused as FusionWeighted does,
// then the named speakers' records are boosted.
func stripBM25(w, boost float64) recallFunc {
	return func(ctx context.Context, db *engine.DB, conv Conversation, question string, q engine.Query) (*engine.Result, error) {
		k := q.K
		depth := max(q.Candidates, engine.DefaultCandidates)
		sq := q
		sq.Text, sq.Mode, sq.K = stripNames(conv, question).Text, engine.ModeSparse, depth
		sparse, err := db.Recall(ctx, sq)
		if err != nil {
			return nil, err
		}
		lq := q
		lq.Text, lq.Mode, lq.K = question, engine.ModeLazy, depth
		full, err := db.Recall(ctx, lq)
		if err != nil {
			return nil, err
		}
		dense := map[uint64]float64{}
		minD, maxD := 1.0, -1.0
		for _, m := range full.Memories {
			dense[m.ID] = m.Dense
			minD, maxD = min(minD, m.Dense), max(maxD, m.Dense)
		}
		var maxS float64
		for _, m := range sparse.Memories {
			maxS = max(maxS, m.Sparse)
		}
		named := namedSpeakers(conv, question)
		ms := sparse.Memories
		for i := range ms {
			d, ok := dense[ms[i].ID]
			if !ok {
				d = minD
			}
			var sn, dn float64
			if maxS > 0 {
				sn = ms[i].Sparse / maxS
			}
			if maxD > minD {
				dn = (d - minD) / (maxD - minD)
			}
			ms[i].Score = (1-w)*sn + w*dn
			if slices.Contains(named, ms[i].Role) {
				ms[i].Score *= boost
			}
		}
		slices.SortStableFunc(ms, func(a, b engine.Memory) int {
			switch {
			case a.Score > b.Score:
				return -1
			case a.Score < b.Score:
				return 1
			}
			return 0
		})
		sparse.Memories = ms[:min(k, len(ms))]
		sparse.Stats.Embedded = full.Stats.Embedded
		return sparse, nil
	}
}
