package eval

import (
	"strings"
	"testing"

	"github.com/lazymem/lazymem/bench/locomo"
	"github.com/lazymem/lazymem/engine"
)

// TestCaptions: a turn that shares an image is stored with its caption
// after its text, and embedded as if it had none: the engine hands
// Construct the stored text with pleasantries stripped, and withoutCaptions
// gives back "Speaker: " and the turn's own text stripped the same way, so a
// replay of the dataset's turn vectors finds it. A turn without a caption
// is constructed as by the engine's default.
func TestCaptions(t *testing.T) {
	conv := &locomo.Conversation{ID: "c1", Sessions: []locomo.Session{{N: 1, Turns: []locomo.Turn{
		{Speaker: "Ann", DiaID: "D1:1", Text: "Thanks, Mel! Art gives me joy. ", BlipCaption: "a photo of flowers"},
		{Speaker: "Ann", DiaID: "D1:2", Text: "Look at this", BlipCaption: "a photo of a lake"},
		{Speaker: "Bob", DiaID: "D1:3", Text: "Nice lake!"},
	}}}}
	construct := withoutCaptions([]*locomo.Conversation{conv})
	for _, tr := range conv.Turns() {
		stored := turnText(tr)
		if tr.BlipCaption != "" && !strings.HasSuffix(stored, tr.BlipCaption+"]") {
			t.Errorf("%s: stored %q, want the caption after the text", tr.DiaID, stored)
		}
		if tr.BlipCaption == "" && stored != tr.Text {
			t.Errorf("%s: stored %q, want the text alone", tr.DiaID, stored)
		}
		r := engine.Record{Agent: conv.ID, Role: tr.Speaker, Meta: map[string][]string{"dia_id": {tr.DiaID}}}
		r.Text = engine.StripPleasantries(stored) // what the engine passes to Construct
		got := construct(&r)
		bare := engine.Record{Role: tr.Speaker, Text: engine.StripPleasantries(tr.Text)}
		if want := engine.DefaultConstruct(&bare); got != want {
			t.Errorf("%s: embedded %q, want %q", tr.DiaID, got, want)
		}
	}
}
