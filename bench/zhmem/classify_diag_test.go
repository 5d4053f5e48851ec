//go:build diag

package zhmem_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/engine"
)

// TestDiagMisses writes, for every question of the set in DIAG_ZH_SET whose
// first evidence is not in the lazy top 5, the evidence's lazy rank (K=10)
// and its rank in a sparse recall of K=1000 (0: BM25 does not match it), to
// $DIAG_OUT/misses.txt: a miss whose sparse rank is 0 or beyond the
// candidate budget never reached the selective stage.
func TestDiagMisses(t *testing.T) {
	ctx := context.Background()
	s, db, texts, out := openDiagZh(t, "misses.txt")
	now := s.Last.AddDate(0, 0, 1)
	rank := func(res *engine.Result, ev []string) int {
		for i, m := range res.Memories {
			if slices.Contains(ev, m.Meta["key"][0]) {
				return i + 1
			}
		}
		return 0
	}
	for _, q := range s.Questions {
		lz, err := db.Recall(ctx, engine.Query{Agent: s.Agent, Text: q.Text, K: 10, Mode: engine.ModeLazy, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		r := rank(lz, q.Evidence)
		if r >= 1 && r <= 5 {
			continue
		}
		sp, err := db.Recall(ctx, engine.Query{Agent: s.Agent, Text: q.Text, K: 1000, Mode: engine.ModeSparse, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		sp10, _ := db.Recall(ctx, engine.Query{Agent: s.Agent, Text: q.Text, K: 10, Mode: engine.ModeSparse, Now: now})
		lz50, _ := db.Recall(ctx, engine.Query{Explain: true, Agent: s.Agent, Text: q.Text, K: 50, Candidates: lz.Stats.Candidates, Mode: engine.ModeLazy, Now: now})
		fmt.Fprintf(out, "== %s %s lazy=%d sparse10=%d lazy50=%d sparse1000=%d/%d cands=%d Q: %s [%s]\n   text: %s\n", q.ID, q.Kind, r, rank(sp10, q.Evidence), rank(lz50, q.Evidence), rank(sp, q.Evidence), len(sp.Memories), lz.Stats.Candidates, q.Text, q.Note, lz.Stats.Text)
		for _, e := range q.Evidence {
			fmt.Fprintf(out, "   EV %s %s\n", e, texts[e])
			for i, m := range lz50.Memories {
				if m.Meta["key"][0] == e {
					fmt.Fprintf(out, "      at %d s=%.3f sp=%.2f d=%.2f %v\n", i+1, m.Score, m.Sparse, m.Dense, m.Reasons)
				}
			}
		}
		for i, m := range lz.Memories[:min(3, len(lz.Memories))] {
			fmt.Fprintf(out, "   #%d %s %s: %s\n", i+1, m.Meta["key"][0], fmt.Sprintf("%s s=%.3f sp=%.2f d=%.2f", m.Role, m.Score, m.Sparse, m.Dense), strings.ReplaceAll(m.Text, "\n", " "))
			fmt.Fprintf(out, "      %v\n", m.Reasons)
		}
	}
}
