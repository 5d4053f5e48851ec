//go:build diag

package zhmem_test

// Per-question diagnostics of the two retrieval sets the ranking rules are
// measured on: every question's evidence ranks, its searched text, its
// evidence and the top 3 memories, written to $DIAG_OUT/locomo.txt and
// $DIAG_OUT/zh.txt, and R@k overall, per LoCoMo category and per half of
// the LoCoMo conversations (26/41/43 and 30/42/44: a rule chosen on one
// half is checked on the other). Lazy mode, hash embedder, the engine's
// defaults except what the environment sets: XFD (Query.FeedbackDocs),
// XDW (DenseWeight), XSB (SpeakerBoost), XNOEXP (NoExpansion), XK (the
// Chinese questions' K, default 10). The LoCoMo
// files are read from $LAZYMEM_LOCOMO (default ../../../shared/data/locomo).
//
//	DIAG_OUT=/tmp/d go test -tags diag -run TestDiag -v ./bench/zhmem/

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/bench/locomo"
	"github.com/lazymem/lazymem/bench/zhmem"
	"github.com/lazymem/lazymem/engine"
)

// TestDiagLoCoMo writes every LoCoMo question's evidence ranks (lazy, hash)
// to $DIAG_OUT/locomo.txt and the overall R@k.
func TestDiagLoCoMo(t *testing.T) {
	ctx := context.Background()
	dir := os.Getenv("LAZYMEM_LOCOMO")
	if dir == "" {
		dir = "../../../shared/data/locomo"
	}
	convs, err := locomo.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	db, err := engine.Open(t.TempDir(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	texts := map[string]string{}
	for _, c := range convs {
		var recs []engine.Record
		for _, tr := range c.Turns() {
			recs = append(recs, engine.Record{Time: tr.Time, Agent: c.ID, Session: "session_" + strconv.Itoa(tr.Session), Role: tr.Speaker, Text: tr.Text, Meta: map[string][]string{"dia_id": {tr.DiaID}}})
			texts[c.ID+"/"+tr.DiaID] = tr.Speaker + ": " + tr.Text
		}
		if _, err := db.AppendBatch(ctx, recs); err != nil {
			t.Fatal(err)
		}
	}
	out, _ := os.Create(filepath.Join(os.Getenv("DIAG_OUT"), "locomo.txt"))
	defer out.Close()
	ks := []int{1, 5, 10, 25}
	sum := map[int]map[int]float64{}
	cnt := map[int]int{}
	half := [2]map[int]float64{{}, {}}
	hcnt := [2]int{}
	for ci, c := range convs {
		for _, qa := range c.QA {
			if qa.Category < 1 || qa.Category > 4 || len(qa.Evidence) == 0 {
				continue
			}
			fd, _ := strconv.Atoi(os.Getenv("XFD"))
			res, err := db.Recall(ctx, engine.Query{Agent: c.ID, Text: qa.Question, K: 25, Mode: engine.ModeLazy, NoExpansion: os.Getenv("XNOEXP") != "", FeedbackDocs: fd, DenseWeight: xf("XDW"), SpeakerBoost: xf("XSB")})
			if err != nil {
				t.Fatal(err)
			}
			ev := map[string]bool{}
			for _, e := range qa.Evidence {
				ev[e] = true
			}
			var ranks []int
			for i, m := range res.Memories {
				if ev[m.Meta["dia_id"][0]] {
					ranks = append(ranks, i+1)
				}
			}
			if sum[qa.Category] == nil {
				sum[qa.Category] = map[int]float64{}
			}
			cnt[qa.Category]++
			for _, k := range ks {
				n := 0
				for _, r := range ranks {
					if r <= k {
						n++
					}
				}
				sum[qa.Category][k] += float64(n) / float64(len(ev))
				half[ci%2][k] += float64(n) / float64(len(ev))
			}
			hcnt[ci%2]++
			fmt.Fprintf(out, "== %s cat%d ranks=%v/%d Q: %s\n   A: %s\n   text: %s\n", c.ID, qa.Category, ranks, len(ev), qa.Question, qa.Answer, res.Stats.Text)
			for _, e := range qa.Evidence {
				fmt.Fprintf(out, "   EV %s %s\n", e, texts[c.ID+"/"+e])
			}
			for i, m := range res.Memories[:min(3, len(res.Memories))] {
				fmt.Fprintf(out, "   #%d %s %s: %s\n", i+1, m.Meta["dia_id"][0], m.Role, m.Text)
			}
		}
	}
	all := map[int]float64{}
	n := 0
	for cat := 1; cat <= 4; cat++ {
		line := fmt.Sprintf("cat %d (%d):", cat, cnt[cat])
		for _, k := range ks {
			line += fmt.Sprintf(" R@%d %.3f", k, sum[cat][k]/float64(cnt[cat]))
			all[k] += sum[cat][k]
		}
		n += cnt[cat]
		t.Log(line)
		fmt.Fprintln(out, line)
	}
	line := "all:"
	for _, k := range ks {
		line += fmt.Sprintf(" R@%d %.3f", k, all[k]/float64(n))
	}
	for h := range 2 {
		line += fmt.Sprintf(" | half%d", h)
		for _, k := range ks {
			line += fmt.Sprintf(" %.3f", half[h][k]/float64(hcnt[h]))
		}
	}
	t.Log(line)
	fmt.Fprintln(out, line)
}

// openDiagZh loads the Chinese set named by DIAG_ZH_SET (default testdata)
// into a new store and creates $DIAG_OUT/name. It returns the set, the open
// store, every record's "role: text" by key, and the output file; the store
// and the file are closed when the test ends.
func openDiagZh(t *testing.T, name string) (*zhmem.Set, *engine.DB, map[string]string, *os.File) {
	t.Helper()
	s, err := zhmem.Load(cmp.Or(os.Getenv("DIAG_ZH_SET"), "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	db, err := engine.Open(t.TempDir(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	texts := map[string]string{}
	var recs []engine.Record
	for _, r := range s.Records {
		recs = append(recs, engine.Record{Time: r.Time, Agent: r.Agent, Session: r.Session, Role: r.Role, Text: r.Text, Meta: r.Meta})
		texts[r.Key()] = r.Role + ": " + r.Text
	}
	if _, err := db.AppendBatch(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(os.Getenv("DIAG_OUT"), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	return s, db, texts, out
}

// TestDiagZh writes every Chinese question's evidence ranks (lazy, hash)
// and the top five: of the set in DIAG_ZH_SET (default testdata; the
// second set is testdata/second).
func TestDiagZh(t *testing.T) {
	ctx := context.Background()
	s, db, texts, out := openDiagZh(t, "zh.txt")
	ks := []int{1, 5, 10}
	all := map[int]float64{}
	now := s.Last.AddDate(0, 0, 1)
	for _, q := range s.Questions {
		res, err := db.Recall(ctx, engine.Query{Agent: s.Agent, Text: q.Text, K: max(10, int(xf("XK"))), Mode: cmp.Or(engine.Mode(os.Getenv("XMODE")), engine.ModeLazy), Now: now})
		if err != nil {
			t.Fatal(err)
		}
		var ranks []int
		for i, m := range res.Memories {
			if slices.Contains(q.Evidence, m.Meta["key"][0]) {
				ranks = append(ranks, i+1)
			}
		}
		for _, k := range ks {
			n := 0
			for _, r := range ranks {
				if r <= k {
					n++
				}
			}
			all[k] += float64(n) / float64(len(q.Evidence))
		}
		fmt.Fprintf(out, "== %s %s ranks=%v/%d Q: %s  [%s]\n   text: %s\n   stats: candidates %d\n", q.ID, q.Kind, ranks, len(q.Evidence), q.Text, q.Note, res.Stats.Text, res.Stats.Candidates)
		for _, e := range q.Evidence {
			fmt.Fprintf(out, "   EV %s %s\n", e, texts[e])
		}
		for i, m := range res.Memories[:min(5, len(res.Memories))] {
			fmt.Fprintf(out, "   #%d %s %s: %s\n", i+1, m.Meta["key"][0], m.Role, strings.ReplaceAll(m.Text, "\n", " "))
		}
	}
	line := "all:"
	for _, k := range ks {
		line += fmt.Sprintf(" R@%d %.3f", k, all[k]/float64(len(s.Questions)))
	}
	t.Log(line)
	fmt.Fprintln(out, line)
}

func xf(name string) float64 {
	v, _ := strconv.ParseFloat(os.Getenv(name), 64)
	return v
}
