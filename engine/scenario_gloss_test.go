package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/engine/embed/gloss"
	"github.com/lazymem/lazymem/engine/embed/use"
	"github.com/lazymem/lazymem/internal/testenv"
)

// glossFloors are the scenario classes' figures with the gloss embedder
// (CC-CEDICT glosses embedded by USE-lite, its recommended fusion), rounded
// down: TestScenariosGloss fails below them. Measured when set (92
// questions; docs/benchmarks/zh-embedders.md): the crosslingual class is
// where the hash embedder is, 0.50/0.67, the lexicon's other-script terms
// finding the same three answers; speaker 0.67/1.00, paraphrase
// 0.56/1.00, recency 0.43/1.00 are below the hash embedder's 0.78, 0.67
// and 0.71 at hit@1 (a larger dense weight, 0.35, and a dense view less
// lexical than the hash embedder's). Paraphrase fell to 0.44/1.00 with the
// session-neighbour candidates (recall_neighbors.go), merged after these
// floors were set: one of its nine questions moved from rank 1 into the
// top 5; the hash embedder's classes did not move. Raised when an agenda's
// "today" stopped counting as a stated time: recency 0.71, previous 0.88.
var glossFloors = map[string][2]float64{ // class: {hit@1, hit@5}
	"time":         {0.82, 1.00},
	"inherited":    {0.85, 1.00},
	"speaker":      {0.66, 1.00},
	"paraphrase":   {0.44, 1.00},
	"lowinfo":      {0.50, 1.00},
	"recency":      {0.71, 1.00},
	"previous":     {0.88, 1.00},
	"crosslingual": {0.50, 0.66},
	"tenancy":      {1.00, 1.00},
	"nonempty":     {1.00, 1.00},
}

// TestScenariosGloss asks the scenario suite with the gloss embedder, the
// one Chinese-capable and cross-lingual embedder that runs in process: the
// crosslingual class (English questions about a Chinese meeting, a Chinese
// question about an English chat), which TestScenarios answers with the
// lexical hash embedder only, is graded against glossFloors, and in dense
// mode (the embedder alone) against a floor of its own; every class is
// logged.
func TestScenariosGloss(t *testing.T) {
	if testing.Short() {
		t.Skip("embeds with USE-lite")
	}
	cdir := os.Getenv("LAZYMEM_CEDICT_DIR")
	if cdir == "" {
		cdir = filepath.Join("..", gloss.DefaultDir)
	}
	d, err := gloss.LoadDict(cdir)
	if err != nil {
		testenv.Missing(t, "CC-CEDICT absent in %s (set LAZYMEM_CEDICT_DIR or run make cedict): %v", cdir, err)
	}
	udir := os.Getenv("LAZYMEM_USE_DIR")
	if udir == "" {
		udir = filepath.Join("..", use.DefaultDir)
	}
	u, err := use.New(udir, use.Options{})
	if err != nil {
		testenv.Missing(t, "USE-lite model absent in %s (set LAZYMEM_USE_DIR or run make use-model): %v", udir, err)
	}
	g, err := gloss.New(d, u, gloss.Options{})
	if err != nil {
		t.Fatal(err)
	}

	db, qs := scenarioStore(t, engine.Options{Embedder: g})
	ctx := context.Background()
	run := askScenarios(t, db, qs, func(q scenarioQuestion, o scenarioOutcome, _ *engine.Result) {
		if len(o.foreign) > 0 {
			t.Errorf("%s %q (agent %s) returned records of another agent: %v", q.ID, q.Text, q.Agent, o.foreign)
		}
		if q.Class == "crosslingual" || !o.hit5 {
			t.Logf("%s rank %d [%s] %q (expect %v): got %v", q.ID, o.rank, q.Class, q.Text, q.Expect, o.top)
		}
	})
	// The embedder alone, without BM25 or the lexicon: dense mode.
	var dense scenarioTally
	for _, q := range qs {
		if q.Class != "crosslingual" {
			continue
		}
		res, err := db.Recall(ctx, engine.Query{
			Agent: q.Agent, Text: q.Text, CurrentSession: q.Session, K: q.K,
			Now: scenarioNow, ParseTime: true, Mode: engine.ModeDense,
		})
		if err != nil {
			t.Fatalf("%s %q: %v", q.ID, q.Text, err)
		}
		o := gradeScenario(q, res)
		dense.add(o)
		t.Logf("dense: %s rank %d %q (expect %v): got %v", q.ID, o.rank, q.Text, q.Expect, o.top)
	}
	h1, h5 := dense.rates()
	t.Logf("crosslingual, dense mode: hit@1 %.2f hit@5 %.2f", h1, h5)
	// Measured 0.00/0.17 (one of six in the top 5): the embedder alone is
	// weakly cross-lingual; the lazy figures owe more to BM25 and the
	// lexicon's other-script terms.
	if h5 < 0.16 {
		t.Errorf("gloss: crosslingual in dense mode hit@5 %.2f, floor 0.16", h5)
	}
	t.Log("\n" + strings.Replace(scenarioTable(run), "hash embedder", g.Name()+" embedder", 1))
	for c, f := range glossFloors {
		h1, h5 := run.all[c].rates()
		if h1 < f[0] || h5 < f[1] {
			t.Errorf("gloss: class %s regressed: hit@1 %.2f hit@5 %.2f, floor %.2f / %.2f", c, h1, h5, f[0], f[1])
		}
	}
}
