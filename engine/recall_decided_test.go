package engine

import (
	"context"
	"testing"
	"time"
)

// TestDecisionsAsked: a question asking only what was decided ranks the
// meeting's decisions above its agenda and its other turns holding 定;
// with a topic named, the rule stays out.
func TestDecisionsAsked(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC)
	recs := append(turns("a", "m1", t0,
		[2]string{"陈静", "大家早，今天要定目的地、人数和酒店。"},
		[2]string{"王芳", "杭州的酒店一直定不下来，我看了好几家都满了。"},
		[2]string{"李明", "目的地改成厦门，机票我来订。"},
		[2]string{"陈静", "好。"},
	), Record{Agent: "a", Session: "c1", Role: "user", Text: "帮我查一下明天的天气。", Time: t0.Add(48 * time.Hour)})
	db := memStore(t, t0.Add(49*time.Hour), recs)
	for _, mode := range []Mode{ModeSparse, ModeLazy} {
		res, err := db.Recall(ctx, Query{Agent: "a", Text: "上次开会最后定了什么？", K: 3, Mode: mode, Now: t0.Add(49 * time.Hour), Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Memories) == 0 || res.Memories[0].Text != recs[2].Text {
			t.Errorf("%s: top %v: want the decision %q (%v)", mode, res.Memories, recs[2].Text, res.Stats.Notes)
		}
	}
	for text, want := range map[string]bool{
		"那就改去厦门吧，机票我来订。": true, "Let's go with Porto.": true, "The sync moved to Friday.": true,
		"I'll handle the permit.": true, "大家早，今天要定目的地、人数和酒店。": false, "改到周五吗？": false, "杭州的酒店都满了。": false,
	} {
		if got := decisionTurn(text); got != want {
			t.Errorf("decisionTurn(%q) = %v, want %v", text, got, want)
		}
	}
}

// TestDecisionTopicOutweighsFrame: in "what did we decide about the
// connection pool?" the topic names the record; a neighbouring turn that
// says "decided" about something else, and inherits the topic's words
// from the turn before it, ranks below the record that holds the topic
// itself. Before the [current] words weighed half, the other decision
// ranked first (BM25 7.47 against 3.66: "decide" counted 6 times, the
// topic's words 4). Lazy mode (the default) only: in a store of four
// records "decid" is in 2 and the topic's words in 3 (inherited ones
// count), so BM25 alone still ranks the other decision first; the dense
// score settles it.
func TestDecisionTopicOutweighsFrame(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2027, 3, 1, 10, 0, 0, 0, time.UTC)
	recs := turns("a", "s7", t0,
		[2]string{"user", "Let's set the connection pool size to 32 for billing-api"},
		[2]string{"assistant", "Done. billing-api now uses a pool of 32 connections."},
		[2]string{"user", "We decided to ship the release on Friday. Alice will write the changelog by Thursday."},
		[2]string{"user", "I prefer dark mode in all dashboards."},
	)
	db := memStore(t, t0.Add(24*time.Hour), recs)
	res, err := db.Recall(ctx, Query{Agent: "a", Text: "what did we decide about the connection pool yesterday?", ParseTime: true, K: 3, Now: t0.Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) == 0 || res.Memories[0].Text != recs[0].Text {
		t.Errorf("top %v: want %q", res.Memories, recs[0].Text)
	}
}

// TestExpansionDropsOwnStems: an expansion term that the analyzer makes
// into one of the query's own terms ("decided" for "decide") is not added:
// it would weigh the lexicon's word above the query's other words.
func TestExpansionDropsOwnStems(t *testing.T) {
	own := ownTerms("what did we decide about the pool")
	got := notOwn([]string{"decided", "decision", "agreed", "决定"}, own)
	want := []string{"decision", "agreed", "决定"}
	if len(got) != len(want) {
		t.Fatalf("notOwn = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("notOwn = %v, want %v", got, want)
		}
	}
}
