package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const meetingJSONL = `{"time":"2026-05-01T10:00:00Z","agent":"a1","session":"s1","role":"Alice","text":"Morning, let's start."}
{"time":"2026-05-01T10:01:00Z","agent":"a1","session":"s1","role":"Alice","text":"We decided to move the database migration to Thursday."}
{"time":"2026-05-01T10:02:00Z","agent":"a1","session":"s1","role":"Bob","text":"Bob will write the rollback plan by Wednesday."}
{"time":"2026-05-01T10:03:00Z","agent":"a1","session":"s1","role":"Bob","text":"Nice weather today."}
`

// TestConsolidateCoreFeedback: consolidate builds units, core lists them
// with the documented JSON fields, recall --json marks memories with their
// kind, feedback takes record ids.
func TestConsolidateCoreFeedback(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mem")
	if code, _, errs := runCLI(t, meetingJSONL, "ingest", "--db", db, "-"); code != 0 {
		t.Fatal(errs)
	}
	code, out, errs := runCLI(t, "", "consolidate", "--db", db, "--agent", "a1", "--json")
	if code != 0 {
		t.Fatalf("consolidate: %d %s", code, errs)
	}
	var rep struct {
		Selected int              `json:"selected"`
		Units    []map[string]any `json:"units"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Selected < 2 || len(rep.Units) < 2 {
		t.Fatalf("consolidate report %s (err %v): want the decision and the action item", out, err)
	}
	code, out, errs = runCLI(t, "", "core", "--db", db, "--agent", "a1", "--json")
	if code != 0 {
		t.Fatalf("core: %d %s", code, errs)
	}
	var units []map[string]any
	if err := json.Unmarshal([]byte(out), &units); err != nil || len(units) != len(rep.Units) {
		t.Fatalf("core --json: %s (err %v)", out, err)
	}
	types := map[any]bool{}
	for _, u := range units {
		for _, f := range []string{"id", "type", "topic", "content", "action_items", "participants", "source_ids", "time", "confidence"} {
			if _, ok := u[f]; !ok {
				t.Errorf("unit %v lacks %q", u, f)
			}
		}
		types[u["type"]] = true
	}
	if !types["decision"] || !types["action_item"] {
		t.Errorf("unit types %v, want a decision and an action item", types)
	}
	code, out, errs = runCLI(t, "", "recall", "--db", db, "--agent", "a1", "--json", "when is the database migration?")
	if code != 0 {
		t.Fatalf("recall: %d %s", code, errs)
	}
	var res struct {
		Memories []struct {
			Kind string         `json:"kind"`
			Unit map[string]any `json:"unit"`
		} `json:"memories"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Memories) == 0 {
		t.Fatalf("recall --json: %s (err %v)", out, err)
	}
	if res.Memories[0].Kind != "core" || res.Memories[0].Unit["type"] != "decision" {
		t.Errorf("first memory %+v, want the core decision", res.Memories[0])
	}
	for _, m := range res.Memories {
		if m.Kind != "core" && m.Kind != "raw" {
			t.Errorf("memory kind %q", m.Kind)
		}
	}
	if code, out, errs = runCLI(t, "", "feedback", "--db", db, "--up", "4"); code != 0 || !strings.Contains(out, "+1") {
		t.Fatalf("feedback: %d %s %s", code, out, errs)
	}
	if code, _, errs = runCLI(t, "", "feedback", "--db", db, "--down", "99"); code != 1 || !strings.Contains(errs, "99") {
		t.Fatalf("feedback on a missing record: %d %s", code, errs)
	}
}

// TestDemoMeetingShort runs the meeting assistant on a short meeting: the
// post-meeting launch question is answered by a core unit first, and the
// comparison with eager RAG is printed.
func TestDemoMeetingShort(t *testing.T) {
	code, out, errs := runCLI(t, "", "demo", "meeting", "--utterances", "600")
	if code != 0 {
		t.Fatalf("demo meeting: code %d\n%s", code, errs)
	}
	for _, want := range []string{"1. during the meeting", "2. the meeting ends", "3. after the meeting", "4. lazy against eager",
		"hit@k, after the meeting", "Q: 我们关于产品上线时间达成了什么共识？\n   1. core decision [上线时间] 上线时间推迟到十二月二十二号"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}

// TestDemoMeetingWorkingMemory: on the meeting's clock the working memory
// embeds live utterances in the background, and the live questions then
// embed fewer texts than with it off; its embeddings are counted apart
// from the write path's (still none).
func TestDemoMeetingWorkingMemory(t *testing.T) {
	bg := regexp.MustCompile(`background: texts embedded +(\d+)`)
	perQ := regexp.MustCompile(`question: texts embedded \(mean\) +([0-9.]+)`)
	got := map[bool][2]float64{}
	for _, on := range []bool{true, false} {
		code, out, errs := runCLI(t, "", "demo", "meeting", "--utterances", "600", "--working-memory="+strconv.FormatBool(on))
		if code != 0 {
			t.Fatalf("demo meeting --working-memory=%v: code %d\n%s", on, code, errs)
		}
		b, q := bg.FindStringSubmatch(out), perQ.FindStringSubmatch(out)
		if b == nil || q == nil || !strings.Contains(out, "0 texts embedded at write time") {
			t.Fatalf("--working-memory=%v: output lacks the embedding rows:\n%s", on, out)
		}
		nb, _ := strconv.ParseFloat(b[1], 64)
		nq, _ := strconv.ParseFloat(q[1], 64)
		got[on] = [2]float64{nb, nq}
	}
	if got[true][0] == 0 || got[false][0] != 0 {
		t.Errorf("background embeddings on/off: %v / %v, want some / none", got[true][0], got[false][0])
	}
	if got[true][1] >= got[false][1] {
		t.Errorf("texts embedded per question: %v with working memory, %v without: want fewer with it", got[true][1], got[false][1])
	}
}
