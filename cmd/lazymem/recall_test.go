package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/cmd/internal/wire"
	"github.com/lazymem/lazymem/engine"
)

// recallFlagOf maps each field of the daemon's JSON query (wire.Query, by
// JSON name) to the recall flag that sets it, a value for the flag, and
// the engine.Query field the flag must change.
var recallFlagOf = map[string]struct{ flag, value, field string }{
	"agent":             {"agent", "a9", "Agent"},
	"agents":            {"also-agent", "a2,a3", "Agents"},
	"sessions":          {"session", "s1", "Sessions"},
	"roles":             {"role", "user", "Roles"},
	"since":             {"since", "2026-05-01T00:00:00Z", "Since"},
	"until":             {"until", "2026-06-01T00:00:00Z", "Until"},
	"where":             {"where", "tag=db", "Where"},
	"not":               {"not", "tag=chitchat", "Not"},
	"k":                 {"k", "3", "K"},
	"candidates":        {"candidates", "70", "Candidates"},
	"current_session":   {"current-session", "s2", "CurrentSession"},
	"session_turns":     {"session-turns", "2", "SessionTurns"},
	"mode":              {"mode", "sparse", "Mode"},
	"fusion":            {"fusion", "rrf", "Fusion"},
	"dense_weight":      {"dense-weight", "0.4", "DenseWeight"},
	"speaker_boost":     {"speaker-boost", "3", "SpeakerBoost"},
	"recency_half_life": {"recency", "72h", "RecencyHalfLife"},
	"recency_weight":    {"recency-weight", "0.5", "RecencyWeight"},
	"now":               {"now", "2026-06-01T00:00:00Z", "Now"},
	"parse_time":        {"no-time-parse", "true", "ParseTime"},
	"synonyms":          {"synonyms", "", "Synonyms"}, // value: a file the test writes
	"explain":           {"explain", "true", "Explain"},
	"tier":              {"tier", "core", "Tier"},
	"fallback_scan":     {"fallback-scan", "-1", "FallbackScan"},
	"no_expansion":      {"no-expansion", "true", "NoExpansion"},
	"feedback_docs":     {"feedback-docs", "3", "FeedbackDocs"},
	"max_dense_scan":    {"max-dense-scan", "1000", "MaxDenseScan"},
}

// noRecallFlag lists the wire.Query fields that have no recall flag, each
// with the reason.
var noRecallFlag = map[string]string{
	"text": "the query text is recall's positional argument",
}

// TestRecallFlagsCoverQuery fails when the daemon's query gains a field
// recall has no flag for, and checks that every flag reaches its engine
// field: setting it changes that field of the built query.
func TestRecallFlagsCoverQuery(t *testing.T) {
	synFile := filepath.Join(t.TempDir(), "syn.json")
	if err := os.WriteFile(synFile, []byte(`{"automobile": ["car"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	build := func(args ...string) engine.Query {
		t.Helper()
		fs, f := newRecallFlags(io.Discard)
		pos, err := parseFlags(fs, append([]string{"--db", "x", "--agent", "a1"}, args...))
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		q, err := f.query(pos)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return q
	}
	base := reflect.ValueOf(build("q"))
	check := func(flagName, value, field string) {
		t.Helper()
		if value == "" {
			value = synFile
		}
		got := reflect.ValueOf(build("--"+flagName+"="+value, "q")).FieldByName(field)
		if !got.IsValid() {
			t.Fatalf("engine.Query has no field %s", field)
		}
		if reflect.DeepEqual(got.Interface(), base.FieldByName(field).Interface()) {
			t.Errorf("--%s=%s left Query.%s at %v", flagName, value, field, got)
		}
	}
	wt := reflect.TypeOf(wire.Query{})
	for i := range wt.NumField() {
		name, _, _ := strings.Cut(wt.Field(i).Tag.Get("json"), ",")
		if _, ok := noRecallFlag[name]; ok {
			continue
		}
		m, ok := recallFlagOf[name]
		if !ok {
			t.Errorf("wire.Query field %q has no recall flag: add one (or list it in noRecallFlag with the reason)", name)
			continue
		}
		check(m.flag, m.value, m.field)
	}
	if len(recallFlagOf)+len(noRecallFlag) != wt.NumField() {
		t.Errorf("recallFlagOf and noRecallFlag hold %d fields, wire.Query has %d: remove the stale ones",
			len(recallFlagOf)+len(noRecallFlag), wt.NumField())
	}
	covered := map[string]bool{"Text": true}
	for _, m := range recallFlagOf {
		covered[m.field] = true
	}
	et := reflect.TypeOf(engine.Query{})
	for i := range et.NumField() {
		if f := et.Field(i); f.IsExported() && !covered[f.Name] {
			t.Errorf("engine.Query field %s has no recall flag", f.Name)
		}
	}
}

func TestRecallRecencyFlag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{{"", "0s"}, {"off", "-1ns"}, {"36h", "36h0m0s"}} {
		d, err := parseRecency(tc.in)
		if err != nil || d.String() != tc.want {
			t.Errorf("parseRecency(%q) = %v, %v; want %s", tc.in, d, err, tc.want)
		}
	}
	for _, in := range []string{"0s", "-1h", "soon", "7d"} {
		if _, err := parseRecency(in); err == nil {
			t.Errorf("parseRecency(%q): no error", in)
		}
	}
	db := filepath.Join(t.TempDir(), "mem")
	if code, _, errs := runCLI(t, "", "recall", "--db", db, "--agent", "a1", "--recency", "soon", "q"); code != 2 || !strings.Contains(errs, "--recency") {
		t.Fatalf("bad --recency: code %d, stderr %s", code, errs)
	}
}

func TestRecallSynonymsFile(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "mem")
	const records = `{"time":"2026-05-01T10:00:00Z","agent":"a1","session":"s1","role":"user","text":"the car needs new tyres before the trip"}
{"time":"2026-05-01T10:01:00Z","agent":"a1","session":"s2","role":"user","text":"lunch was great today"}
{"time":"2026-05-01T10:02:00Z","agent":"a1","session":"s3","role":"user","text":"a cat sat on a mat"}
`
	if code, _, errs := runCLI(t, records, "ingest", "--db", db, "-"); code != 0 {
		t.Fatalf("ingest: code %d, stderr %s", code, errs)
	}
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	texts := func(args ...string) []string {
		t.Helper()
		code, out, errs := runCLI(t, "", append([]string{"recall", "--db", db, "--agent", "a1", "--mode", "sparse",
			"--fallback-scan", "-1", "--no-expansion", "--json", "zorblax automobile"}, args...)...)
		if code != 0 {
			t.Fatalf("recall %v: code %d, stderr %s", args, code, errs)
		}
		var res struct {
			Memories []struct{ Text string } `json:"memories"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		var ts []string
		for _, m := range res.Memories {
			ts = append(ts, m.Text)
		}
		return ts
	}
	if got := texts(); len(got) != 0 {
		t.Fatalf("without synonyms (and no fallback) recall found %q", got)
	}
	good := write("syn.json", `{"automobile": ["car", "vehicle"]}`)
	if got := texts("--synonyms", good); len(got) != 1 || !strings.Contains(got[0], "car needs") {
		t.Fatalf("with synonyms automobile -> car: %q, want the car record", got)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"notjson.json", `automobile: car`, "want a JSON object"},
		{"array.json", `["car"]`, "want a JSON object"},
		{"null.json", `null`, "got null"},
		{"nosyn.json", `{"automobile": []}`, `"automobile" has no synonyms`},
		{"emptysyn.json", `{"automobile": [" "]}`, "empty synonym"},
		{"emptykey.json", `{"": ["car"]}`, "empty word"},
		{"trailing.json", `{"a": ["b"]} {}`, "data after"},
	} {
		p := write(tc.name, tc.body)
		code, _, errs := runCLI(t, "", "recall", "--db", db, "--agent", "a1", "--synonyms", p, "q")
		if code != 2 || !strings.Contains(errs, p) || !strings.Contains(errs, tc.want) {
			t.Errorf("%s: code %d, stderr %q; want 2 naming the file and %q", tc.name, code, errs, tc.want)
		}
	}
	missing := filepath.Join(dir, "absent.json")
	if code, _, errs := runCLI(t, "", "recall", "--db", db, "--agent", "a1", "--synonyms", missing, "q"); code != 1 || !strings.Contains(errs, missing) {
		t.Errorf("missing file: code %d, stderr %q; want 1 naming the file", code, errs)
	}
}

// TestRecallContext: --context prints engine.FormatContext of the recalled
// memories, within the budget.
func TestRecallContext(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mem")
	if code, _, errs := runCLI(t, goodJSONL, "ingest", "--db", db, "-"); code != 0 {
		t.Fatalf("ingest: code %d, stderr %s", code, errs)
	}
	args := []string{"recall", "--db", db, "--agent", "a1", "--mode", "sparse", "--now", "2026-05-03T00:00:00Z", "connection pool size"}
	code, out, errs := runCLI(t, "", append(args, "--context", "2000")...)
	if code != 0 {
		t.Fatalf("--context: code %d, stderr %s", code, errs)
	}
	if !strings.Contains(out, "[2026-05-01 10:00] (s1) user: Let's set the connection pool size to 32 for billing-api\n") {
		t.Fatalf("--context output is not the prompt block:\n%s", out)
	}
	if strings.Contains(out, "score") || strings.Contains(out, "BM25 hits") {
		t.Fatalf("--context printed the list, not the block:\n%s", out)
	}
	if strings.Contains(out, "another agent") {
		t.Fatalf("--context shows another agent's record:\n%s", out)
	}
	code, small, errs := runCLI(t, "", append(args, "--context", "60")...)
	if code != 0 {
		t.Fatalf("--context 60: code %d, stderr %s", code, errs)
	}
	if n := len([]rune(small)); n > 60 || n == 0 {
		t.Fatalf("--context 60 printed %d characters:\n%s", n, small)
	}
	for _, bad := range [][]string{{"--context", "-5"}, {"--context", "100", "--json"}} {
		if code, _, errs := runCLI(t, "", append(args, bad...)...); code != 2 {
			t.Errorf("%v: code %d, stderr %s; want a usage error", bad, code, errs)
		}
	}
}

// TestPrintResultExplain: --explain prints what the query also searched
// (each term once) and the recall's notes; without it, neither.
func TestPrintResultExplain(t *testing.T) {
	res := &engine.Result{Stats: engine.RecallStats{
		Mode: engine.ModeLazy, Expansion: "went gone went gone 去",
		Notes: []string{"0 BM25 hits: the latest records were ranked"},
	}}
	var b strings.Builder
	printResult(&b, res, true)
	for _, want := range []string{"also searched: went gone 去\n", "note: 0 BM25 hits: the latest records were ranked\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("explain output %q lacks %q", b.String(), want)
		}
	}
	b.Reset()
	printResult(&b, res, false)
	if strings.Contains(b.String(), "also searched") || strings.Contains(b.String(), "note:") {
		t.Errorf("output without --explain %q has the explanation", b.String())
	}
}
