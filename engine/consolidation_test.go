package engine_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/engine/consolidate"
)

// standup is one session: a decision, a fact below the value threshold,
// and chatter. Index 1 is the decision, 3 the fact.
func standup() []engine.Record {
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	return []engine.Record{
		{Time: at(0), Agent: "a1", Session: "s1", Role: "Alice", Text: "Morning everyone, let's start."},
		{Time: at(1), Agent: "a1", Session: "s1", Role: "Alice", Text: "We decided to move the database migration to Thursday."},
		{Time: at(2), Agent: "a1", Session: "s1", Role: "Bob", Text: "Sounds good."},
		{Time: at(3), Agent: "a1", Session: "s1", Role: "Bob", Text: "The staging replica runs Postgres 16 on port 5433."},
		{Time: at(4), Agent: "a1", Session: "s1", Role: "Alice", Text: "Nice weather today."},
	}
}

func citing(units []consolidate.Unit, id uint64) bool {
	for _, u := range units {
		if containsID(u.SourceIDs, id) {
			return true
		}
	}
	return false
}

// consolidateUnits consolidates agent a1's records with o and returns the
// units written.
func consolidateUnits(t *testing.T, db *engine.DB, o engine.ConsolidateOptions) []consolidate.Unit {
	t.Helper()
	rep, err := db.Consolidate(context.Background(), "a1", o)
	if err != nil {
		t.Fatal(err)
	}
	return rep.Units
}

// TestConsolidationTriggers: each trigger, alone, turns its record into a
// unit; the fact below the threshold is not consolidated by the value
// trigger alone.
func TestConsolidationTriggers(t *testing.T) {
	ctx := context.Background()
	const decision, fact = 1, 3
	for _, tc := range []struct {
		name string
		opts engine.CoreOptions
		// act pulls the trigger and returns the units it produced.
		act func(t *testing.T, db *engine.DB, ids []uint64) []consolidate.Unit
		// want and notWant index records of standup that the units must
		// and must not cite.
		want, notWant []int
	}{
		{
			name: "end of session: value threshold",
			act: func(t *testing.T, db *engine.DB, _ []uint64) []consolidate.Unit {
				rep, err := db.EndSession(ctx, "a1", "s1")
				if err != nil {
					t.Fatal(err)
				}
				return rep.Units
			},
			want: []int{decision}, notWant: []int{fact},
		},
		{
			name: "returned in the top k three times",
			act: func(t *testing.T, db *engine.DB, ids []uint64) []consolidate.Unit {
				for range 3 {
					res := recall(t, db, engine.Query{Agent: "a1", Text: "postgres staging port", K: 1})
					if len(res.Memories) != 1 || res.Memories[0].ID != ids[fact] {
						t.Fatalf("recall returned %v, want the fact %d", texts(res.Memories), ids[fact])
					}
				}
				return consolidateUnits(t, db, engine.ConsolidateOptions{})
			},
			want: []int{decision, fact},
		},
		{
			name: "returned twice is not enough",
			act: func(t *testing.T, db *engine.DB, ids []uint64) []consolidate.Unit {
				for range 2 {
					recall(t, db, engine.Query{Agent: "a1", Text: "postgres staging port", K: 1})
				}
				return consolidateUnits(t, db, engine.ConsolidateOptions{})
			},
			want: []int{decision}, notWant: []int{fact},
		},
		{
			name: "positive feedback",
			act: func(t *testing.T, db *engine.DB, ids []uint64) []consolidate.Unit {
				res := recall(t, db, engine.Query{Agent: "a1", Text: "postgres staging port", K: 3})
				if err := db.Feedback(ctx, res.RecallID, []uint64{ids[fact]}, +1); err != nil {
					t.Fatal(err)
				}
				return consolidateUnits(t, db, engine.ConsolidateOptions{})
			},
			want: []int{decision, fact},
		},
		{
			name: "explicit ids",
			act: func(t *testing.T, db *engine.DB, ids []uint64) []consolidate.Unit {
				return consolidateUnits(t, db, engine.ConsolidateOptions{IDs: []uint64{ids[fact]}})
			},
			want: []int{decision, fact},
		},
		{
			name: "idle timeout",
			opts: engine.CoreOptions{IdleTimeout: 20 * time.Millisecond, FlushInterval: 5 * time.Millisecond},
			act: func(t *testing.T, db *engine.DB, _ []uint64) []consolidate.Unit {
				// Wait for the background pass, whatever the machine's
				// speed; the test fails only if it never happens.
				for range 2000 {
					units, err := db.Core(ctx, "a1", true)
					if err != nil {
						t.Fatal(err)
					}
					if len(units) > 0 {
						return units
					}
					time.Sleep(5 * time.Millisecond)
				}
				t.Fatal("the idle session was never consolidated")
				return nil
			},
			want: []int{decision}, notWant: []int{fact},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := engine.Open(t.TempDir(), engine.Options{Clock: func() time.Time { return t0 }, Core: tc.opts})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			ids, err := db.AppendBatch(ctx, standup())
			if err != nil {
				t.Fatal(err)
			}
			units := tc.act(t, db, ids)
			for _, i := range tc.want {
				if !citing(units, ids[i]) {
					t.Errorf("no unit cites record %d %q; units %+v", ids[i], standup()[i].Text, units)
				}
			}
			for _, i := range tc.notWant {
				if citing(units, ids[i]) {
					t.Errorf("a unit cites record %d %q", ids[i], standup()[i].Text)
				}
			}
		})
	}
}

// TestConsolidateTwiceIsIdempotent: a record becomes units once.
func TestConsolidateTwiceIsIdempotent(t *testing.T) {
	ctx := context.Background()
	db := openT(t, t.TempDir(), nil)
	defer db.Close()
	if _, err := db.AppendBatch(ctx, standup()); err != nil {
		t.Fatal(err)
	}
	first, err := db.Consolidate(ctx, "a1", engine.ConsolidateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := db.Consolidate(ctx, "a1", engine.ConsolidateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Units) == 0 || len(again.Units) != 0 || again.Selected != 0 {
		t.Errorf("first run %d units; second run %d units from %d records, want none", len(first.Units), len(again.Units), again.Selected)
	}
}

// TestCoreSurvivesReopen: units, their supersession and the value counts
// are in dir/core after a reopen.
func TestCoreSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openT(t, dir, nil)
	ids, err := db.AppendBatch(ctx, standup())
	if err != nil {
		t.Fatal(err)
	}
	res := recall(t, db, engine.Query{Agent: "a1", Text: "postgres staging port", K: 1})
	if err := db.Feedback(ctx, res.RecallID, []uint64{ids[3]}, -1); err != nil {
		t.Fatal(err)
	}
	rep, err := db.EndSession(ctx, "a1", "s1")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openT(t, dir, nil)
	defer db.Close()
	units, err := db.Core(ctx, "a1", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(units) != len(rep.Units) {
		t.Fatalf("after reopen %d units, want %d", len(units), len(rep.Units))
	}
	v, err := db.Value(ctx, ids[3])
	if err != nil {
		t.Fatal(err)
	}
	if v.TopK != 1 || v.Negative != 1 || !v.Labelled || v.Queued {
		t.Errorf("value after reopen %+v, want topk 1, one negative, labelled, not queued", v)
	}
	d, err := db.Value(ctx, ids[1])
	if err != nil {
		t.Fatal(err)
	}
	if !d.Consolidated || len(d.Types) == 0 || d.Types[0] != consolidate.TypeDecision || d.Score < 0.5 {
		t.Errorf("decision value %+v, want consolidated, a decision, score >= 0.5", d)
	}
	// Labels are filterable metadata.
	res = recall(t, db, engine.Query{Agent: "a1", Where: map[string][]string{engine.TypeMetaKey: {"decision"}}, Tier: engine.TierRaw})
	if len(res.Memories) != 1 || res.Memories[0].ID != ids[1] {
		t.Errorf("where type=decision returned %v, want the decision", texts(res.Memories))
	}
}

func TestFeedbackErrors(t *testing.T) {
	ctx := context.Background()
	db := openT(t, t.TempDir(), nil)
	defer db.Close()
	ids, err := db.AppendBatch(ctx, standup())
	if err != nil {
		t.Fatal(err)
	}
	res := recall(t, db, engine.Query{Agent: "a1", Text: "postgres staging port", K: 1})
	for _, tc := range []struct {
		name     string
		recallID uint64
		ids      []uint64
		signal   int
		want     error
	}{
		{"signal 0", res.RecallID, ids[3:4], 0, engine.ErrRange},
		{"no ids", res.RecallID, nil, 1, engine.ErrMissing},
		{"unknown recall", res.RecallID + 100, ids[3:4], 1, engine.ErrNotFound},
		{"id not returned", res.RecallID, ids[0:1], 1, engine.ErrUnknown},
		{"no such record", 0, []uint64{999}, 1, engine.ErrUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := db.Feedback(ctx, tc.recallID, tc.ids, tc.signal); !errors.Is(err, tc.want) {
				t.Errorf("Feedback = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestCoreConcurrent: recalls, feedback, appends and consolidations at
// once (run it with -race); every unit stored cites records of its agent.
func TestCoreConcurrent(t *testing.T) {
	ctx := context.Background()
	db, err := engine.Open(t.TempDir(), engine.Options{Clock: func() time.Time { return t0 },
		Core: engine.CoreOptions{FlushInterval: time.Millisecond, Background: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				switch w {
				case 0:
					if _, err := db.AppendBatch(ctx, standup()); err != nil {
						errs <- err
					}
				case 1:
					res, err := db.Recall(ctx, engine.Query{Agent: "a1", Text: "database migration thursday"})
					if err != nil {
						errs <- err
						continue
					}
					if len(res.Memories) > 0 && res.Memories[0].Kind == engine.KindRaw {
						if err := db.Feedback(ctx, res.RecallID, []uint64{res.Memories[0].ID}, 1-2*(i%2)); err != nil {
							errs <- err
						}
					}
				default:
					if _, err := db.Consolidate(ctx, "a1", engine.ConsolidateOptions{}); err != nil {
						errs <- err
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	units, err := db.Core(ctx, "a1", true)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]bool{}
	for _, u := range units {
		if u.Agent != "a1" || len(u.SourceIDs) == 0 || seen[u.ID] {
			t.Errorf("bad unit %+v", u)
		}
		seen[u.ID] = true
	}
}

// TestCoreTenantScope: one agent's units never reach another agent's
// recall, listing or feedback.
func TestCoreTenantScope(t *testing.T) {
	ctx := context.Background()
	db := openT(t, t.TempDir(), nil)
	defer db.Close()
	recs := standup()
	for _, r := range standup() {
		r.Agent = "b1"
		recs = append(recs, r)
	}
	if _, err := db.AppendBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	rep, err := db.EndSession(ctx, "a1", "s1")
	if err != nil || len(rep.Units) == 0 {
		t.Fatalf("EndSession a1: %v, %v", rep, err)
	}
	if units, err := db.Core(ctx, "b1", true); err != nil || len(units) != 0 {
		t.Fatalf("b1's core memory: %v, %v", units, err)
	}
	res := recall(t, db, engine.Query{Agent: "b1", Text: "database migration thursday"})
	for _, m := range res.Memories {
		if m.Agent != "b1" || m.Unit != nil {
			t.Errorf("b1's recall returned %+v", m)
		}
	}
	if err := db.Feedback(ctx, res.RecallID, []uint64{rep.Units[0].ID}, 1); !errors.Is(err, engine.ErrUnknown) {
		t.Errorf("feedback naming a1's unit through b1's recall: %v", err)
	}
	res = recall(t, db, engine.Query{Agent: "a1", Text: "database migration thursday", Tier: engine.TierCore})
	if len(res.Memories) == 0 || res.Memories[0].Unit == nil || res.Memories[0].Agent != "a1" {
		t.Errorf("a1's core recall: %v", texts(res.Memories))
	}
}

// TestForgetReachesCoreMemory: forgetting a unit's only source deletes the
// unit; retention keeps what a live unit cites and expires the rest.
func TestForgetReachesCoreMemory(t *testing.T) {
	ctx := context.Background()
	now := t0.Add(30 * 24 * time.Hour)
	db, err := engine.Open(t.TempDir(), engine.Options{Clock: func() time.Time { return now },
		Retention: engine.RetentionOptions{Window: 7 * 24 * time.Hour, Interval: -1}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ids, err := db.AppendBatch(ctx, standup())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := db.Consolidate(ctx, "a1", engine.ConsolidateOptions{IDs: []uint64{ids[3]}})
	if err != nil {
		t.Fatal(err)
	}
	if !citing(rep.Units, ids[1]) || !citing(rep.Units, ids[3]) {
		t.Fatalf("units %+v: want the decision and the fact", rep.Units)
	}
	// Forget the decision: its unit goes, and recall no longer finds it.
	if _, err := db.Forget(ctx, engine.Selector{IDs: []uint64{ids[1]}}); err != nil {
		t.Fatal(err)
	}
	units, err := db.Core(ctx, "a1", true)
	if err != nil {
		t.Fatal(err)
	}
	if citing(units, ids[1]) || !citing(units, ids[3]) {
		t.Fatalf("after Forget: %+v, want the fact's unit only", units)
	}
	res := recall(t, db, engine.Query{Agent: "a1", Text: "database migration thursday"})
	for _, m := range res.Memories {
		if strings.Contains(m.Text, "migration") {
			t.Errorf("recall still returns the forgotten decision: %+v", m)
		}
	}
	// Retention (everything is 30 days old): the fact a live unit cites
	// stays, the rest expires.
	n, err := db.ApplyRetention(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("retention expired %d records, want 3 (all but the cited fact)", n)
	}
	if _, err := db.Get(ctx, ids[3]); err != nil {
		t.Errorf("the cited fact: %v", err)
	}
	if _, err := db.Get(ctx, ids[0]); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("an uncited old record: %v, want ErrNotFound", err)
	}
}

// TestCompactPurgesForgottenUnits: after Forget and Compact no byte of a
// unit built from the forgotten record is left in the core store's files
// (checked to be there before, so the check can fail).
func TestCompactPurgesForgottenUnits(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openT(t, dir, nil)
	defer db.Close()
	secret := "We decided to rename the project to Bluefinch-7731."
	ids, err := db.AppendBatch(ctx, []engine.Record{
		{Time: t0, Agent: "a1", Session: "s1", Role: "Alice", Text: "Morning."},
		{Time: t0.Add(time.Minute), Agent: "a1", Session: "s1", Role: "Alice", Text: secret},
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := db.EndSession(ctx, "a1", "s1")
	if err != nil || !citing(rep.Units, ids[1]) {
		t.Fatalf("EndSession: %+v, %v", rep, err)
	}
	const needle = "Bluefinch-7731"
	found := func() []string {
		var in []string
		err := filepath.WalkDir(filepath.Join(dir, "core"), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if bytes.Contains(b, []byte(needle)) {
				in = append(in, filepath.Base(p))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if len(found()) == 0 {
		t.Fatal("the unit's content is not in the core store's files before Forget: the check below could not fail")
	}
	if _, err := db.Forget(ctx, engine.Selector{IDs: ids[1:2]}); err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if in := found(); len(in) > 0 {
		t.Errorf("after Forget and Compact %q is still in %v", needle, in)
	}
}

// TestAgentDBCore: a scoped handle consolidates, lists and judges only its
// own agent's memories; a backup carries the core memory.
func TestAgentDBCore(t *testing.T) {
	ctx := context.Background()
	db := openT(t, t.TempDir(), nil)
	defer db.Close()
	recs := standup()
	for _, r := range standup() {
		r.Agent = "b1"
		recs = append(recs, r)
	}
	ids, err := db.AppendBatch(ctx, recs)
	if err != nil {
		t.Fatal(err)
	}
	a, b := db.Agent("a1", engine.Quota{}), db.Agent("b1", engine.Quota{})
	if _, err := a.EndSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if units, err := b.Core(ctx, true); err != nil || len(units) != 0 {
		t.Fatalf("b1 sees %v, %v", units, err)
	}
	res, err := a.Recall(ctx, engine.Query{Text: "database migration thursday"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Feedback(ctx, res.RecallID, []uint64{ids[1]}, 1); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("b1's feedback on a1's recall: %v, want ErrNotFound", err)
	}
	if err := b.Feedback(ctx, 0, []uint64{ids[1]}, 1); !errors.Is(err, engine.ErrUnknown) {
		t.Errorf("b1's feedback on a1's record: %v, want ErrUnknown", err)
	}
	if err := a.Feedback(ctx, 0, []uint64{ids[1]}, 1); err != nil {
		t.Errorf("a1's feedback on its record: %v", err)
	}
	if _, err := b.Value(ctx, ids[1]); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("b1 reads a1's value: %v", err)
	}
	backup := filepath.Join(t.TempDir(), "copy")
	if err := db.Backup(ctx, backup); err != nil {
		t.Fatal(err)
	}
	want, _ := db.Core(ctx, "a1", true)
	cp := openT(t, backup, nil)
	defer cp.Close()
	got, err := cp.Core(ctx, "a1", true)
	if err != nil || len(got) != len(want) || len(got) == 0 {
		t.Errorf("backup holds %d units (%v), want %d", len(got), err, len(want))
	}
}

// TestConsolidateEcho: through the engine (whose input leaves a selected
// turn's Role empty when it is the speaker), an assistant's "Noted: …"
// restating the user's turn makes no unit of its own; the user's unit
// cites both and is live.
func TestConsolidateEcho(t *testing.T) {
	db, err := engine.Open(t.TempDir(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	if _, err := db.AppendBatch(context.Background(), []engine.Record{
		{Time: t0, Agent: "a1", Session: "s7", Role: "user", Text: "Let's set the connection pool size to 32 for billing-api"},
		{Time: t0.Add(time.Minute), Agent: "a1", Session: "s7", Role: "assistant", Text: "Noted: connection pool size 32 for billing-api."},
	}); err != nil {
		t.Fatal(err)
	}
	rep, err := db.Consolidate(context.Background(), "a1", engine.ConsolidateOptions{IDs: []uint64{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	// The user's proposal, confirmed by the assistant, is the decision.
	if len(rep.Units) != 1 || !rep.Units[0].Live() || !slices.Equal(rep.Units[0].SourceIDs, []uint64{1, 2}) ||
		rep.Units[0].Type != consolidate.TypeDecision || rep.Units[0].Content != "set the connection pool size to 32 for billing-api" {
		t.Errorf("units %+v, want one live decision of the user's words citing both turns", rep.Units)
	}
}

// TestConsolidateDueInClockZone: "by Friday 3pm" said in Shanghai is due at
// 15:00 Shanghai time, the zone of the engine's clock; the log keeps
// instants and reads them back in UTC, where the due time had been
// resolved (15:00 UTC, 23:00 in Shanghai).
func TestConsolidateDueInClockZone(t *testing.T) {
	cst := time.FixedZone("CST", 8*3600)
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, cst) // a Tuesday
	db, err := engine.Open(t.TempDir(), engine.Options{Clock: func() time.Time { return t0.Add(time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.AppendBatch(context.Background(), []engine.Record{
		{Time: t0, Agent: "a1", Session: "s1", Role: "lead", Text: "Alice will send the revised budget to finance by Friday 3pm."},
	}); err != nil {
		t.Fatal(err)
	}
	rep, err := db.Consolidate(context.Background(), "a1", engine.ConsolidateOptions{IDs: []uint64{1}})
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 12, 4, 15, 0, 0, 0, cst)
	var items []consolidate.ActionItem
	for _, u := range rep.Units {
		items = append(items, u.ActionItems...)
	}
	if len(items) != 1 || !items[0].Due.Equal(want) {
		t.Fatalf("action items %+v, want one due %v", items, want)
	}
}

// TestCoreUnitNeedsOwnWords: a core unit takes its source's evidence only
// when it holds one of the query's words itself. "We decided to ship the
// release on Friday. Alice will write the changelog by Thursday." inherits
// "pool" from the turn before it (session context); its units (the
// decision, the action item) had ranked second and third for "pool", above
// the record that set the pool size.
func TestCoreUnitNeedsOwnWords(t *testing.T) {
	db := poolStore(t, 24*time.Hour,
		engine.Record{Session: "s7", Role: "user", Text: "We decided to ship the release on Friday. Alice will write the changelog by Thursday."},
		engine.Record{Session: "s7", Role: "user", Text: "I prefer dark mode in all dashboards."})
	ctx := context.Background()
	if _, err := db.Consolidate(ctx, "a1", engine.ConsolidateOptions{IDs: []uint64{1, 2, 3, 4}}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		text string
		want string // a word the top memory must hold
	}{{"pool", "pool"}, {"changelog", "changelog"}} {
		res, err := db.Recall(ctx, engine.Query{Agent: "a1", Text: q.text, K: 5})
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range res.Memories {
			if i < 2 && !strings.Contains(m.Text, q.want) {
				t.Errorf("%q: memory %d is %s %q, which does not say %q", q.text, i+1, m.Kind, m.Text, q.want)
			}
		}
	}
}

// TestConsolidateQueuesAcceptedProposal: a proposal another speaker accepts
// is queued for consolidation by value (neither turn labels a decision
// alone) and becomes a decision; one the next turn answers otherwise is
// not queued.
func TestConsolidateQueuesAcceptedProposal(t *testing.T) {
	db := poolStore(t, time.Hour,
		engine.Record{Session: "s8", Role: "user", Text: "Let's set the cache size to 2 GB for search-api"},
		engine.Record{Session: "s8", Role: "assistant", Text: "That host has only 4 GB; 1 GB would be safer."})
	ctx := context.Background()
	rep, err := db.Consolidate(ctx, "a1", engine.ConsolidateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var decisions []string
	for _, u := range rep.Units {
		if u.Type == consolidate.TypeDecision {
			decisions = append(decisions, u.Content)
		}
	}
	if !slices.Equal(decisions, []string{"set the connection pool size to 32 for billing-api"}) {
		t.Errorf("decisions %q, want the accepted proposal's alone", decisions)
	}
}

// poolStore opens a store whose clock reads 2026-12-06 10:00 UTC plus
// later, holding agent a1's README pool pair in session s7 ("Let's set
// the connection pool size to 32 for billing-api", the assistant's
// "Done. …") and then more, one minute apart (agent a1 unless given).
func poolStore(t *testing.T, later time.Duration, more ...engine.Record) *engine.DB {
	t.Helper()
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	db, err := engine.Open(t.TempDir(), engine.Options{Clock: func() time.Time { return t0.Add(later) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	recs := append([]engine.Record{
		{Agent: "a1", Session: "s7", Role: "user", Text: "Let's set the connection pool size to 32 for billing-api"},
		{Agent: "a1", Session: "s7", Role: "assistant", Text: "Done. billing-api now uses a pool of 32 connections."},
	}, more...)
	for i := range recs {
		recs[i].Time = t0.Add(time.Duration(i) * time.Minute)
		if recs[i].Agent == "" {
			recs[i].Agent = "a1"
		}
	}
	if _, err := db.AppendBatch(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestCoreUnitBelowNewerAnswer: a decision unit does not outrank, by its
// core boost, a newer record that revises one of its sources ("Actually
// make the pool size 64…" two days after the pool of 32 became a unit):
// the supersession that passes the source passes the unit too.
func TestCoreUnitBelowNewerAnswer(t *testing.T) {
	db := poolStore(t, 72*time.Hour)
	ctx := context.Background()
	if _, err := db.Consolidate(ctx, "a1", engine.ConsolidateOptions{IDs: []uint64{1, 2}}); err != nil {
		t.Fatal(err)
	}
	later := time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC)
	if _, err := db.AppendBatch(ctx, []engine.Record{
		{Agent: "a1", Session: "s9", Role: "user", Time: later, Text: "Actually make the pool size 64 for billing-api, 32 was too small under load."},
		{Agent: "a1", Session: "s9", Role: "assistant", Time: later.Add(time.Minute), Text: "OK, 64 it is."},
	}); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []engine.Mode{engine.ModeSparse, engine.ModeLazy} {
		res, err := db.Recall(ctx, engine.Query{Agent: "a1", Text: "what pool size did we pick?", K: 3, Mode: mode, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		// The unit ranks below the record of 64.
		unit, newer := -1, -1
		for i, m := range res.Memories {
			if m.Kind == engine.KindCore && unit < 0 {
				unit = i
			}
			if strings.Contains(m.Text, "64") && newer < 0 {
				newer = i
			}
		}
		if newer < 0 || unit >= 0 && unit < newer {
			for _, m := range res.Memories {
				t.Logf("%s %.3f %v %s", m.Kind, m.Score, m.Reasons, m.Text)
			}
			t.Errorf("%s: core unit at %d, the pool of 64 at %d: want the unit below it", mode, unit, newer)
		}
	}
}

// TestUnitTextOwnerAndDue: an action item's memory says who does it and by
// when, also when its content is the task alone ("给出压测报告").
func TestUnitTextOwnerAndDue(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 14, 0, 0, 0, time.FixedZone("CST", 8*3600))
	db, err := engine.Open(t.TempDir(), engine.Options{Clock: func() time.Time { return t0.Add(time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.AppendBatch(ctx, []engine.Record{
		{Agent: "a", Session: "m", Role: "王磊", Time: t0, Text: "压测这块张伟负责，周五前给出压测报告。"},
		{Agent: "a", Session: "m", Role: "张伟", Time: t0.Add(time.Minute), Text: "好的，周五前给出压测报告。"},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Consolidate(ctx, "a", engine.ConsolidateOptions{IDs: []uint64{1, 2}}); err != nil {
		t.Fatal(err)
	}
	res, err := db.Recall(ctx, engine.Query{Agent: "a", Text: "压测报告谁负责？", K: 5, Now: t0.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range res.Memories {
		if m.Kind != engine.KindCore || m.Unit == nil || len(m.Unit.ActionItems) == 0 {
			continue
		}
		a := m.Unit.ActionItems[0]
		if !strings.Contains(m.Text, a.Owner) || a.Due.IsZero() || !strings.Contains(m.Text, a.Due.UTC().Format("2006-01-02 15:04")) {
			t.Errorf("action item memory %q: want its owner %q and due %v in the text", m.Text, a.Owner, a.Due)
		}
		return
	}
	t.Fatalf("no action item among %d memories", len(res.Memories))
}
