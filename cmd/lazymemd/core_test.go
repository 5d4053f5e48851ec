package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/cmd/internal/wire"
)

// TestCoreRoutes drives value feedback and core memory over HTTP: a
// consolidation of named records stores units, GET /v1/core lists them,
// a core-tier recall returns them as kind "core" with their unit, and
// feedback judges that recall's memories by record or unit id.
func TestCoreRoutes(t *testing.T) {
	ts, _ := newTestServer(t, 1<<20)
	var ids struct{ IDs []uint64 }
	if st := call(t, "POST", ts.URL+"/v1/records", `{"records":[
		{"agent":"a1","session":"s1","role":"ann","text":"We decided to move the billing service to Postgres 16."},
		{"agent":"a1","session":"s1","role":"bo","text":"Bo will write the migration script by Friday."}]}`, &ids); st != 200 || len(ids.IDs) != 2 {
		t.Fatalf("append: %d %v", st, ids)
	}
	var rep wire.ConsolidateReport
	if st := call(t, "POST", ts.URL+"/v1/consolidate", fmt.Sprintf(`{"agent":"a1","ids":[%d,%d]}`, ids.IDs[0], ids.IDs[1]), &rep); st != 200 || rep.Selected == 0 || len(rep.Units) == 0 {
		t.Fatalf("consolidate: %d %+v", st, rep)
	}
	var core struct {
		Agent string
		Units []wire.Unit
	}
	if st := call(t, "GET", ts.URL+"/v1/core?agent=a1", "", &core); st != 200 || core.Agent != "a1" || len(core.Units) != len(rep.Units) {
		t.Fatalf("core: %d %+v, want the %d units", st, core, len(rep.Units))
	}
	for _, u := range core.Units {
		if u.ID == 0 || u.Agent != "a1" || len(u.SourceIDs) == 0 || u.Type == "" {
			t.Errorf("unit %+v", u)
		}
	}
	var res wire.Result
	if st := call(t, "POST", ts.URL+"/v1/recall", `{"agent":"a1","text":"billing Postgres","tier":"core"}`, &res); st != 200 || len(res.Memories) == 0 || res.RecallID == 0 {
		t.Fatalf("core recall: %d %+v", st, res)
	}
	m := res.Memories[0]
	if m.Kind != "core" || m.Unit == nil || m.Unit.ID == 0 {
		t.Fatalf("core recall's memory: %+v", m)
	}
	var fb map[string]int
	if st := call(t, "POST", ts.URL+"/v1/feedback", fmt.Sprintf(`{"agent":"a1","recall_id":%d,"ids":[%d],"signal":1}`, res.RecallID, m.Unit.ID), &fb); st != 200 || fb["judged"] != 1 || fb["signal"] != 1 {
		t.Fatalf("feedback on a unit: %d %v", st, fb)
	}
	// An id the recall did not return names the field.
	var e errorReply
	if st := call(t, "POST", ts.URL+"/v1/feedback", fmt.Sprintf(`{"agent":"a1","recall_id":%d,"ids":[%d,424242],"signal":-1}`, res.RecallID, m.Unit.ID), &e); st != 400 || e.Error.Field != "feedback.ids[1]" ||
		!strings.HasPrefix(e.Error.Message, "lazymem: feedback.ids[1]: ") {
		t.Errorf("feedback on an id the recall did not return: %d %+v", st, e.Error)
	}
	// Another agent's handle does not see a1's recall.
	e = errorReply{}
	if st := call(t, "POST", ts.URL+"/v1/feedback", fmt.Sprintf(`{"agent":"zz","recall_id":%d,"ids":[%d],"signal":1}`, res.RecallID, m.Unit.ID), &e); st != 404 || e.Error.Code != "not_found" {
		t.Errorf("feedback on another agent's recall: %d %+v", st, e.Error)
	}
	for _, c := range []struct{ method, path, body, field string }{
		{"POST", "/v1/feedback", `{"agent":"a1","ids":[1],"signal":2}`, "feedback.signal"},
		{"POST", "/v1/feedback", `{"agent":"a1","signal":1}`, "feedback.ids"},
		{"POST", "/v1/feedback", `{"agent":"a1","ids":"1","signal":1}`, "feedback.ids"},
		{"POST", "/v1/consolidate", `{"agent":"a1","sesion":"s1"}`, "consolidate.sesion"},
		{"POST", "/v1/consolidate", `{}`, "consolidate.agent"},
		{"GET", "/v1/core", ``, "agent"},
		{"GET", "/v1/core?agent=a1&history=yes", ``, "history"},
	} {
		e = errorReply{}
		if st := call(t, c.method, ts.URL+c.path, c.body, &e); st != 400 || e.Error.Field != c.field || !strings.HasPrefix(e.Error.Message, "lazymem: "+c.field+":") {
			t.Errorf("%s %s %s: %d %+v, want 400 naming %s", c.method, c.path, c.body, st, e.Error, c.field)
		}
	}
	var hist struct{ Units []json.RawMessage }
	if st := call(t, "GET", ts.URL+"/v1/core?agent=a1&history=true", "", &hist); st != 200 || len(hist.Units) < len(core.Units) {
		t.Errorf("history: %d %d units", st, len(hist.Units))
	}
}
