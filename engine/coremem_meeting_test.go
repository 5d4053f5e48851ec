package engine_test

import (
	"context"
	"testing"

	"github.com/lazymem/lazymem/bench/meeting"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/engine/consolidate"
)

// ingestMeeting appends the generated meeting as one agent's session and
// returns the record id of each utterance.
func ingestMeeting(t testing.TB, db *engine.DB, m *meeting.Meeting) []uint64 {
	t.Helper()
	recs := make([]engine.Record, 0, len(m.Utterances))
	for _, u := range m.Utterances {
		recs = append(recs, engine.Record{Time: u.Time, Agent: "meet", Session: "review", Role: u.Speaker, Text: u.Text,
			Meta: map[string][]string{engine.DefaultRoleMetaKey: {u.Role}}})
	}
	ids, err := db.AppendBatch(context.Background(), recs)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestMeetingCoreFirst is the acceptance check of the core memory on the
// generated meeting: after the meeting is consolidated, every post-meeting
// decision question ranks a core unit first, that unit cites the first
// evidence moment, and a superseded unit never ranks above its successor.
func TestMeetingCoreFirst(t *testing.T) {
	ctx := context.Background()
	m, err := meeting.Generate(meeting.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	db := openT(t, t.TempDir(), nil)
	defer db.Close()
	ids := ingestMeeting(t, db, m)
	rep, err := db.EndSession(ctx, "meet", "review")
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Units) == 0 || len(rep.Superseded) == 0 {
		t.Fatalf("consolidation gave %d units, %d superseded; want some of each", len(rep.Units), len(rep.Superseded))
	}
	t.Logf("labelled %d, selected %d, units %d, superseded %v", rep.Labelled, rep.Selected, len(rep.Units), rep.Superseded)
	evidence := func(key string) uint64 { return ids[m.Keys[key]] }

	// The English question's evidence is said in Chinese: the lexicon's
	// other-script terms (launch -> 上线, 发布) bridge it for BM25; the hash
	// embedder alone would not.
	decisions := []string{
		"我们关于产品上线时间达成了什么共识？",
		"预算问题最后怎么处理的？",
		"What did we agree on for the launch date?",
	}
	for _, qt := range decisions {
		var q *meeting.Question
		for i := range m.Questions {
			if m.Questions[i].Text == qt {
				q = &m.Questions[i]
			}
		}
		if q == nil {
			t.Fatalf("question %q not in the meeting", qt)
		}
		res := recall(t, db, engine.Query{Agent: "meet", Text: qt, K: 10, Explain: true})
		if len(res.Memories) == 0 {
			t.Fatalf("%q: no memories", qt)
		}
		top := res.Memories[0]
		if top.Kind != engine.KindCore || top.Unit == nil {
			t.Errorf("%q: first memory is %s %q, want a core unit", qt, top.Kind, top.Text)
			continue
		}
		want := evidence(q.Evidence[0])
		if !containsID(top.Unit.SourceIDs, want) {
			t.Errorf("%q: top unit %q cites %v, want the %s record %d", qt, top.Unit.Content, top.Unit.SourceIDs, q.Evidence[0], want)
		}
		if !top.Unit.Live() {
			t.Errorf("%q: top unit %d is superseded", qt, top.Unit.ID)
		}
		// A superseded unit never ranks above its successor.
		rank := map[uint64]int{}
		for i, mem := range res.Memories {
			if mem.Unit != nil {
				rank[mem.Unit.ID] = i
			}
		}
		for _, mem := range res.Memories {
			if u := mem.Unit; u != nil && !u.Live() {
				if r, ok := rank[u.SupersededBy]; !ok || r > rank[u.ID] {
					t.Errorf("%q: superseded unit %d at rank %d, its successor %d at rank %d (ok %v)", qt, u.ID, rank[u.ID], u.SupersededBy, r, ok)
				}
			}
		}
	}

	// A question naming a unit type lists the live units of that type,
	// whatever words they share with it.
	res := recall(t, db, engine.Query{Agent: "meet", Text: "会上有哪些待办事项？", K: 10})
	actions := 0
	for _, mem := range res.Memories {
		if mem.Unit != nil && mem.Unit.Type == consolidate.TypeActionItem && mem.Unit.Live() {
			actions++
		}
	}
	if actions < 3 {
		t.Errorf("会上有哪些待办事项？ returned %d live action items, want at least 3: %v", actions, texts(res.Memories))
	}

	// The launch date: the live unit is the revision, and the first
	// decision is kept as history.
	units, err := db.Core(ctx, "meet", true)
	if err != nil {
		t.Fatal(err)
	}
	var revised, first *consolidate.Unit
	for i := range units {
		u := &units[i]
		if containsID(u.SourceIDs, evidence(meeting.KeyLaunchRevised)) && u.Type == consolidate.TypeDecision {
			revised = u
		}
		if containsID(u.SourceIDs, evidence(meeting.KeyLaunchDecision)) && u.Type == consolidate.TypeDecision {
			first = u
		}
	}
	switch {
	case revised == nil || first == nil:
		t.Fatalf("no unit for the launch decision (%v) or its revision (%v)", first, revised)
	case !revised.Live() || first.Live() || first.SupersededBy == 0:
		t.Errorf("launch decision %d live=%v superseded_by=%d; revision %d live=%v", first.ID, first.Live(), first.SupersededBy, revised.ID, revised.Live())
	}

	// Tier core returns units only, tier raw records only.
	for _, tc := range []struct {
		tier engine.Tier
		kind string
	}{{engine.TierCore, engine.KindCore}, {engine.TierRaw, engine.KindRaw}} {
		res := recall(t, db, engine.Query{Agent: "meet", Text: decisions[0], Tier: tc.tier})
		if len(res.Memories) == 0 {
			t.Errorf("tier %s: no memories", tc.tier)
		}
		for _, mem := range res.Memories {
			if mem.Kind != tc.kind {
				t.Errorf("tier %s: memory of kind %s", tc.tier, mem.Kind)
			}
		}
	}
}

func containsID(ids []uint64, id uint64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
