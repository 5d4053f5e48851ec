package engine_test

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/engine/embed"
	"github.com/lazymem/lazymem/internal/testembed"
)

// scenarioOracle is a perfect dense embedder for one scenario set: a
// record's vector is the unit vector of its own axis, the question being
// asked gets the normalized sum of its expected records' axes, so the
// cosine is 1 between a question and an expected record and 0 with every
// other record. It stands for a semantic, multilingual embedder that
// understood every paraphrase and every translation: what the issue's
// "cross-lingual with the test double" asks of the engine around it (its
// lexical narrowing, its sources, fusion), not of a model.
//
// The engine embeds a record as "Role: Text" (DefaultConstruct), with
// pleasantries stripped; a text is a record's when it is one of those
// forms or the rest of a record's text after its role; any other text is
// the question (set with ask before each recall), however the engine
// rewrote it.
type scenarioOracle struct {
	byText map[string]int // "Role: Text" and Text -> axis
	recs   []scenarioRecord
	expect map[string][]int // question id -> axes
	dim    int

	mu       sync.Mutex
	axes     []int // the current question's
	asQuery  int   // texts embedded as the question
	embedded int
}

func newScenarioOracle(recs []scenarioRecord, qs []scenarioQuestion) *scenarioOracle {
	o := &scenarioOracle{byText: map[string]int{}, recs: recs, expect: map[string][]int{}, dim: len(recs) + 1}
	byKey := map[string]int{}
	for i, r := range recs {
		o.byText[r.Text] = i
		o.byText[r.Role+": "+r.Text] = i
		byKey[r.Meta["key"][0]] = i
	}
	for _, q := range qs {
		for _, k := range q.Expect {
			o.expect[q.ID] = append(o.expect[q.ID], byKey[k])
		}
	}
	return o
}

// ask makes q the question the next texts that are no record's stand for.
func (o *scenarioOracle) ask(q scenarioQuestion) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.axes = o.expect[q.ID]
	if len(o.axes) == 0 { // graded by rule: a direction no record has
		o.axes = []int{o.dim - 1}
	}
}

func (o *scenarioOracle) Name() string { return "scenario-oracle" }
func (o *scenarioOracle) Dim() int     { return o.dim }

func (o *scenarioOracle) Embed(_ context.Context, texts []string) ([][]float32, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		o.embedded++
		v := make([]float32, o.dim)
		if a, ok := o.record(t); ok {
			v[a] = 1
		} else {
			o.asQuery++
			for _, a := range o.axes {
				v[a] = 1 / float32(len(o.axes))
			}
		}
		out[i] = v
	}
	return out, nil
}

// record finds the record t was made of: exactly, or as the text after a
// record's role prefix that the record's text holds (pleasantries cut).
func (o *scenarioOracle) record(t string) (int, bool) {
	if a, ok := o.byText[t]; ok {
		return a, true
	}
	for a, r := range o.recs {
		if rest, ok := strings.CutPrefix(t, r.Role+": "); ok && rest != "" && strings.Contains(r.Text, strings.TrimSpace(rest)) {
			return a, true
		}
	}
	return 0, false
}

// scenarioSets lists testdata's scenario sets, the first one first.
func scenarioSets(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("testdata", "scenarios*"))
	if err != nil {
		t.Fatal(err)
	}
	var sets []string
	for _, d := range dirs {
		sets = append(sets, filepath.Base(d))
	}
	slices.SortFunc(sets, func(a, b string) int { // scenarios, scenarios2, ..., scenarios36
		return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
	})
	return sets
}

// TestScenarioOracle runs every scenario set with the oracle embedder,
// and with the oracle made weaker by noise (testembed.Noisy), each in
// dense mode and in lazy mode at the dense weights 0.2 (the hash
// embedder's), 0.35 and DefaultDenseWeight (0.5: what an embedder that
// recommends no fusion gets, as these test doubles do), and at the
// OpenAI-compatible embedder's recommendation (0.5, 200 candidates). Dense mode with the oracle must answer every
// class in the top 5 (the oracle's scores reach the ranking: at least
// 0.95 a class; a parsed time or speaker still filters); the other
// figures are the ceiling a semantic multilingual embedder of that
// quality could reach through the engine (docs/benchmarks/scenarios.md):
// logged, not asserted.
//
//	go test -run TestScenarioOracle -v ./engine/
func TestScenarioOracle(t *testing.T) {
	if testing.Short() {
		t.Skip("every scenario set, many passes")
	}
	type config struct {
		mode        engine.Mode
		denseWeight float64
		candidates  int
	}
	configs := []config{
		{engine.ModeDense, 0, 0},
		{engine.ModeLazy, 0.2, 0},
		{engine.ModeLazy, 0.35, 0},
		{engine.ModeLazy, 0, 0}, // DefaultDenseWeight: the oracle recommends no fusion
		{engine.ModeLazy, 0.5, 200},
	}
	sigmas := []float64{0, 1, 1.5, 2}
	type cell struct{ sigma, config int }
	totals := map[cell]map[string]*scenarioTally{}
	var misses []string // the oracle, lazy at the default fusion: paraphrase and crosslingual
	for _, set := range scenarioSets(t) {
		recs, qs := loadScenario(t, set)
		for si, sigma := range sigmas {
			o := newScenarioOracle(recs, qs)
			var emb embed.Embedder = o
			if sigma > 0 {
				emb = &testembed.Noisy{Inner: o, Sigma: sigma}
			}
			db, _ := scenarioSetStore(t, set, engine.Options{Embedder: emb})
			for ci, c := range configs {
				k := cell{si, ci}
				if totals[k] == nil {
					totals[k] = map[string]*scenarioTally{}
				}
				for _, q := range qs {
					o.ask(q)
					res, err := db.Recall(context.Background(), engine.Query{
						Agent: q.Agent, Text: q.Text, CurrentSession: q.Session, K: q.K,
						Now: q.now, ParseTime: true, Mode: c.mode, DenseWeight: c.denseWeight,
						Candidates: c.candidates,
					})
					if err != nil {
						t.Fatalf("%s %s %q: %v", set, q.ID, q.Text, err)
					}
					g := gradeScenario(q, res)
					if len(g.foreign) > 0 {
						t.Errorf("%s %s %q (agent %s) returned records of another agent: %v", set, q.ID, q.Text, q.Agent, g.foreign)
					}
					if totals[k][q.Class] == nil {
						totals[k][q.Class] = &scenarioTally{}
					}
					totals[k][q.Class].add(g)
					if sigma == 0 && c.mode == engine.ModeLazy && c.denseWeight == 0 && !g.hit5 && (q.Class == "paraphrase" || q.Class == "crosslingual") {
						misses = append(misses, fmt.Sprintf("%s %s [%s] %q: rank %d, candidates %d, hits %d", set, q.ID, q.Class, q.Text, g.rank, res.Stats.Candidates, res.Stats.Hits))
					}
				}
			}
			if o.asQuery > 2*len(qs)*len(configs) {
				t.Errorf("%s: %d of %d texts embedded as the question, for %d recalls: records not recognised", set, o.asQuery, o.embedded, len(qs)*len(configs))
			}
			db.Close()
		}
	}
	for class, tally := range totals[cell{0, 0}] {
		if _, h5 := tally.rates(); h5 < 0.95 {
			t.Errorf("dense oracle: class %s hit@5 %.3f, want at least 0.95", class, h5)
		}
	}
	// Acceptance 1's target with a multilingual double of high quality
	// (the perfect one, and with noise sigma 1: dense-only hit@5 .96 or
	// more in every class) at the engine's defaults: every class at hit@5
	// 0.8 or more (measured: the lowest .931 and .879, paraphrase and
	// crosslingual).
	for si := range []int{0, 1} {
		for class, tally := range totals[cell{si, slices.IndexFunc(configs, func(c config) bool {
			return c.mode == engine.ModeLazy && c.denseWeight == 0 && c.candidates == 0
		})}] {
			if _, h5 := tally.rates(); h5 < scenarioTargetHit5 {
				t.Errorf("lazy, defaults, double of sigma %g: class %s hit@5 %.3f, want at least %.2f", sigmas[si], class, h5, scenarioTargetHit5)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| sigma | class | n |")
	for _, c := range configs {
		w := fmt.Sprint(c.denseWeight)
		if c.denseWeight == 0 {
			w = fmt.Sprintf("default (%g)", engine.DefaultDenseWeight)
		}
		if c.mode == engine.ModeDense {
			w = ""
		}
		fmt.Fprintf(&b, " %s %s", c.mode, w)
		if c.candidates > 0 {
			fmt.Fprintf(&b, ", %d candidates", c.candidates)
		}
		b.WriteString(" |")
	}
	fmt.Fprintf(&b, "\n| ---: | --- | ---: |%s\n", strings.Repeat(" --- |", len(configs)))
	for si, sigma := range sigmas {
		for _, class := range scenarioClasses {
			if totals[cell{si, 0}][class] == nil {
				continue
			}
			fmt.Fprintf(&b, "| %g | %s | %d |", sigma, class, totals[cell{si, 0}][class].n)
			for ci := range configs {
				h1, h5 := totals[cell{si, ci}][class].rates()
				fmt.Fprintf(&b, " %.3f / %.3f |", h1, h5)
			}
			b.WriteString("\n")
		}
	}
	t.Log("scenario sets, oracle embedder (sigma: noise added), hit@1 / hit@5; a column is a mode and its dense weight:" + b.String())
	for _, m := range misses {
		t.Log("oracle, lazy at the default fusion, miss: " + m)
	}
}
