//go:build diag

package eval

// Leave-one-conversation-out diagnostics of LoCoMo: each conversation in a
// store of its own (as `lazymem eval locomo --data DIR` with one file in
// DIR), lazy mode with the hash embedder unless LOCO_MODE/LOCO_EMBEDDER
// say otherwise, R@1/5/10/25 per conversation and per category, and every
// question's evidence ranks in the top 50 with the evidence and the top 3
// memories in $DIAG_OUT/perconv.txt. A ranking rule is judged by how many
// of the conversations it helps and hurts, not by the mean alone.
//
//	DIAG_OUT=/tmp/d go test -tags diag -run TestDiagPerConversation -v ./bench/eval/

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/bench/locomo"
	"github.com/lazymem/lazymem/engine"
)

func TestDiagPerConversation(t *testing.T) {
	ctx := context.Background()
	convs, err := locomo.Load(dataDir(t))
	if err != nil {
		t.Fatal(err)
	}
	mode := engine.ModeLazy
	if m := os.Getenv("LOCO_MODE"); m != "" {
		mode = engine.Mode(m)
	}
	spec := os.Getenv("LOCO_EMBEDDER")
	if spec == "" {
		spec = "hash"
	}
	emb, err := newEmbedder(spec, convs)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(os.Getenv("DIAG_OUT"), "perconv.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	ks := []int{1, 5, 10, 25}
	const depth = 50
	all := make([]float64, len(ks))
	nall := 0
	var neighbours, candidates int
	cat := map[int][]float64{}
	ncat := map[int]int{}
	for _, c := range convs {
		db, err := engine.Open(t.TempDir(), engine.Options{Embedder: emb, Construct: withoutCaptions(convs)})
		if err != nil {
			t.Fatal(err)
		}
		texts := map[string]string{}
		var recs []engine.Record
		for _, tr := range c.Turns() {
			recs = append(recs, engine.Record{Time: tr.Time, Agent: c.ID, Session: "session_" + strconv.Itoa(tr.Session), Role: tr.Speaker, Text: turnText(tr), Meta: map[string][]string{"dia_id": {tr.DiaID}}})
			texts[tr.DiaID] = tr.Speaker + ": " + turnText(tr)
		}
		if _, err := db.AppendBatch(ctx, recs); err != nil {
			t.Fatal(err)
		}
		sum := make([]float64, len(ks))
		n := 0
		for _, qa := range c.QA {
			if qa.Category < 1 || qa.Category > 4 || len(qa.Evidence) == 0 {
				continue
			}
			if r, ok := emb.(*questionReplay); ok {
				r.ask(qa.Question)
			}
			// R@k from a recall of K 25, as `lazymem eval` asks (some rules
			// read the top 3K); the ranks to 50 from a second recall.
			res, err := db.Recall(ctx, engine.Query{Agent: c.ID, Text: qa.Question, K: ks[len(ks)-1], Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			deep, err := db.Recall(ctx, engine.Query{Agent: c.ID, Text: qa.Question, K: depth, Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			ev := map[string]bool{}
			for _, e := range qa.Evidence {
				ev[e] = true
			}
			rankOf := func(ms []engine.Memory) []int {
				var ranks []int
				for i, m := range ms {
					if ev[m.Meta["dia_id"][0]] {
						ranks = append(ranks, i+1)
					}
				}
				return ranks
			}
			ranks, ranks50 := rankOf(res.Memories), rankOf(deep.Memories)
			neighbours += res.Stats.Neighbours
			candidates += res.Stats.Candidates
			if cat[qa.Category] == nil {
				cat[qa.Category] = make([]float64, len(ks))
			}
			for j, k := range ks {
				h := 0
				for _, r := range ranks {
					if r <= k {
						h++
					}
				}
				v := float64(h) / float64(len(ev))
				sum[j] += v
				all[j] += v
				cat[qa.Category][j] += v
			}
			n++
			nall++
			ncat[qa.Category]++
			fmt.Fprintf(out, "== %s cat%d ranks=%v/%d ranks50=%v Q: %s\n   A: %s\n   text: %s\n", c.ID, qa.Category, ranks, len(ev), ranks50, qa.Question, qa.Answer, res.Stats.Text)
			at := map[string]int{}
			for i, m := range deep.Memories {
				at[m.Meta["dia_id"][0]] = i + 1
			}
			for _, e := range qa.Evidence {
				fmt.Fprintf(out, "   EV %s r=%d %s\n", e, at[e], texts[e])
			}
			for i, m := range res.Memories[:min(3, len(res.Memories))] {
				fmt.Fprintf(out, "   #%d %s %s: %s\n", i+1, m.Meta["dia_id"][0], m.Role, strings.ReplaceAll(m.Text, "\n", " "))
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		line := fmt.Sprintf("conv %s (%d):", c.ID, n)
		for j := range ks {
			line += fmt.Sprintf(" %.3f", sum[j]/float64(n))
		}
		t.Log(line)
		fmt.Fprintln(out, line)
	}
	for cc := 1; cc <= 4; cc++ {
		line := fmt.Sprintf("cat %d (%d):", cc, ncat[cc])
		for j := range ks {
			line += fmt.Sprintf(" %.3f", cat[cc][j]/float64(ncat[cc]))
		}
		t.Log(line)
		fmt.Fprintln(out, line)
	}
	line := fmt.Sprintf("all (%d):", nall)
	for j := range ks {
		line += fmt.Sprintf(" %.3f", all[j]/float64(nall))
	}
	t.Log(line)
	fmt.Fprintln(out, line)
	t.Logf("per recall (K 25): %.1f candidates, %.1f of them session neighbours", float64(candidates)/float64(nall), float64(neighbours)/float64(nall))
}
