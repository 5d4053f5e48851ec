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
