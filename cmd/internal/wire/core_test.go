package wire

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/engine/consolidate"
)

// TestCoreCoversEngine fails when a unit or a consolidation report gains a
// field the JSON does not carry.
func TestCoreCoversEngine(t *testing.T) {
	for _, c := range []struct {
		engine, wire any
		renamed      map[string]string
	}{
		{consolidate.Unit{}, Unit{}, nil},
		{consolidate.ActionItem{}, ActionItem{}, nil},
		{engine.ConsolidateReport{}, ConsolidateReport{}, map[string]string{"Duration": "Micros"}},
	} {
		et, wt := reflect.TypeOf(c.engine), reflect.TypeOf(c.wire)
		for i := range et.NumField() {
			name := et.Field(i).Name
			if n, ok := c.renamed[name]; ok {
				name = n
			}
			if _, ok := wt.FieldByName(name); !ok {
				t.Errorf("%s.%s has no counterpart in wire.%s", et, et.Field(i).Name, wt.Name())
			}
		}
		if wt.NumField() != et.NumField() {
			t.Errorf("wire.%s has %d fields, the engine's %d", wt.Name(), wt.NumField(), et.NumField())
		}
	}
}

// TestUnitJSON: a unit's JSON has every field, [] for empty lists and 0
// for a live unit's superseded_by, never null; a due time only when said.
func TestUnitJSON(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	bare := FromUnit(&consolidate.Unit{ID: 3, Type: consolidate.TypeDecision, Topic: "db", Content: "use pebble", SourceIDs: []uint64{1}, Time: t0, Confidence: 0.9, Agent: "a"})
	b, err := json.Marshal(bare)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":3,"type":"decision","topic":"db","content":"use pebble","action_items":[],"participants":[],"source_ids":[1],"time":"2026-05-01T09:00:00Z","confidence":0.9,"supersedes":[],"superseded_by":0,"agent":"a"}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	u := FromUnit(&consolidate.Unit{Type: consolidate.TypeActionItem, ActionItems: []consolidate.ActionItem{{Owner: "ann", Task: "ship", Due: t0}, {Owner: "bo", Task: "test"}}})
	b, _ = json.Marshal(u.ActionItems)
	if got := string(b); got != `[{"owner":"ann","task":"ship","due":"2026-05-01T09:00:00Z"},{"owner":"bo","task":"test"}]` {
		t.Errorf("action items %s", got)
	}
	rep, _ := json.Marshal(FromConsolidateReport(&engine.ConsolidateReport{Duration: 1500 * time.Microsecond}))
	if got := string(rep); strings.Contains(got, "null") || !strings.Contains(got, `"duration_us":1500`) {
		t.Errorf("empty report %s", got)
	}
}
