package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lazymem/lazymem/engine"
)

var allModes = []engine.Mode{engine.ModeSparse, engine.ModeLazy, engine.ModeDense}

// recallIDs returns the ids a recall of text over agent finds in every mode.
func recallIDs(t *testing.T, db *engine.DB, agent, text string) map[engine.Mode][]uint64 {
	t.Helper()
	out := map[engine.Mode][]uint64{}
	for _, m := range allModes {
		res := recall(t, db, engine.Query{Agent: agent, Text: text, Mode: m, K: 50, SessionTurns: -1})
		out[m] = ids(res.Memories)
	}
	return out
}

func TestForgetSelectorErrors(t *testing.T) {
	db := openT(t, t.TempDir(), nil)
	defer db.Close()
	load(t, db)
	ctx := context.Background()
	for _, c := range []struct {
		sel  engine.Selector
		want string
	}{
		{engine.Selector{}, "lazymem: selector.agent: missing"},
		{engine.Selector{Sessions: []string{"s1"}}, "lazymem: selector.agent: missing"},
		{engine.Selector{IDs: []uint64{0}}, "lazymem: selector.ids[0]: out of range"},
		{engine.Selector{Agent: "a1", Sessions: []string{""}}, "lazymem: selector.sessions[0]: empty"},
		{engine.Selector{Agent: "a1", Since: t0, Until: t0}, "lazymem: selector.until: out of range"},
	} {
		_, err := db.Forget(ctx, c.sel)
		if !errors.Is(err, engine.ErrInvalid) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Forget(%+v) = %v, want %q", c.sel, err, c.want)
		}
	}
	if m := db.Metrics(); m.Index.Docs != uint64(len(corpus())) || m.Forgotten != 0 {
		t.Fatalf("a refused selector changed the store: %+v", m.Index)
	}
}

func TestForgetSession(t *testing.T) {
	dir := t.TempDir()
	db := openT(t, dir, nil)
	all := load(t, db)
	ctx := context.Background()
	// Session s3 of a1 is records 5 and 6 (ids from 1).
	res, err := db.Forget(ctx, engine.Selector{Agent: "a1", Sessions: []string{"s3"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Forgotten != 2 || fmt.Sprint(res.Ranges) != "[{5 6}]" {
		t.Fatalf("Forget = %+v, want 2 records, ids 5..6", res)
	}
	check := func(db *engine.DB) {
		t.Helper()
		_, errNever := db.Get(ctx, 1000)
		for _, id := range all {
			r, err := db.Get(ctx, id)
			if id == 5 || id == 6 {
				if !errors.Is(err, engine.ErrNotFound) ||
					strings.Replace(err.Error(), fmt.Sprint(id), "1000", 1) != errNever.Error() {
					t.Fatalf("Get(%d) of a forgotten record = %v; a never-assigned id gives %v", id, err, errNever)
				}
				continue
			}
			if err != nil || r.Text != corpus()[id-1].Text {
				t.Fatalf("Get(%d) = %q, %v: an unforgotten record changed", id, r.Text, err)
			}
		}
		for m, got := range recallIDs(t, db, "a1", "connection pool circuit breaker checkout exhausted") {
			if slices.Contains(got, 5) || slices.Contains(got, 6) {
				t.Fatalf("%s recall found a forgotten record: %v", m, got)
			}
			if len(got) == 0 {
				t.Fatalf("%s recall found nothing: the other records are gone too", m)
			}
		}
		for m, got := range recallIDs(t, db, "a2", "connection pool") {
			if fmt.Sprint(got) != "[12]" {
				t.Fatalf("%s recall of a2 = %v, want [12]", m, got)
			}
		}
	}
	check(db)
	if _, err := db.Forget(ctx, engine.Selector{IDs: []uint64{5, 6, 999}}); err != nil {
		t.Fatal(err)
	} // forgetting again: nothing, no error
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openT(t, dir, nil)
	defer db.Close()
	check(db)
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	check(db)
}

// TestForgetSuccessorContext: an answer indexed with its question's words
// (session context) stops matching them once the question is forgotten,
// and only the answer is indexed again; so after a reopen and after a
// compaction.
func TestForgetSuccessorContext(t *testing.T) {
	dir := t.TempDir()
	db, err := engine.Open(dir, engine.Options{DisableEmbedder: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { db.Close() }()
	ctx := context.Background()
	got0, err := db.AppendBatch(ctx, []engine.Record{
		{Agent: "c", Session: "s1", Role: "Mel", Text: "Which adoption agency did you pick?"},
		{Agent: "c", Session: "s1", Role: "Caroline", Text: "The one in Denver, they were lovely."},
		{Agent: "c", Session: "s2", Role: "Caroline", Text: "I painted a sunrise."},
	})
	if err != nil {
		t.Fatal(err)
	}
	q := engine.Query{Agent: "c", Text: "adoption agency", Mode: engine.ModeSparse, SessionTurns: -1, FallbackScan: -1}
	if got := ids(recall(t, db, q).Memories); len(got) != 2 {
		t.Fatalf("before: %v, want the question and its answer", got)
	}
	res, err := db.Forget(ctx, engine.Selector{Agent: "c", IDs: []uint64{got0[0]}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Forgotten != 1 || res.Reindexed != 1 {
		t.Fatalf("Forget = %+v, want 1 forgotten, 1 re-indexed (the answer)", res)
	}
	check := func(when string) {
		t.Helper()
		if got := recall(t, db, q).Memories; len(got) != 0 {
			t.Fatalf("%s: %v: the answer still matches its forgotten question's words", when, texts(got))
		}
		if got := recall(t, db, engine.Query{Agent: "c", Text: "Denver", Mode: engine.ModeSparse}).Memories; len(got) != 1 {
			t.Fatalf("%s: the answer itself is gone: %v", when, got)
		}
	}
	check("after")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = engine.Open(dir, engine.Options{DisableEmbedder: true}); err != nil {
		t.Fatal(err)
	}
	check("reopened")
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	check("compacted")
}

// TestForgetSelectorFilters: roles, metadata and a time range narrow an
// agent's records, as in a query.
func TestForgetSelectorFilters(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		sel  engine.Selector
		want []uint64 // ids forgotten (corpus ids from 1)
	}{
		{"role", engine.Selector{Agent: "a1", Roles: []string{"tool"}}, []uint64{8}},
		{"where", engine.Selector{Agent: "a1", Where: map[string][]string{"tags": {"incident", "todo"}}}, []uint64{5, 7}},
		{"time", engine.Selector{Agent: "a1", Since: t0.AddDate(0, 0, -1).Add(-12 * time.Hour), Until: t0.Add(-4 * time.Hour)}, []uint64{7, 8}},
		{"ids of the agent only", engine.Selector{Agent: "a2", IDs: []uint64{1, 12}}, []uint64{12}},
		{"session and role", engine.Selector{Agent: "a1", Sessions: []string{"s1", "s2"}, Roles: []string{"assistant"}}, []uint64{2, 4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := openT(t, t.TempDir(), nil)
			defer db.Close()
			load(t, db)
			res, err := db.Forget(ctx, c.sel)
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for _, r := range res.Ranges {
				for id := r.First; id <= r.Last; id++ {
					got = append(got, id)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) || res.Forgotten != len(c.want) {
				t.Fatalf("forgot %v (%d), want %v", got, res.Forgotten, c.want)
			}
			for id := uint64(1); id <= 12; id++ {
				_, err := db.Get(ctx, id)
				if slices.Contains(c.want, id) != errors.Is(err, engine.ErrNotFound) {
					t.Fatalf("Get(%d) = %v", id, err)
				}
			}
		})
	}
}
