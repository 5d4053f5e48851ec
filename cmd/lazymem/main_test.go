package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lazymem/lazymem/internal/testenv"
)

func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

const goodJSONL = `{"time":"2026-05-01T10:00:00Z","agent":"a1","session":"s1","role":"user","text":"Let's set the connection pool size to 32 for billing-api","meta":{"tags":["db","infra"],"intent":"decision"}}
{"time":"2026-05-01T10:01:00Z","agent":"a1","session":"s1","role":"assistant","text":"Done: HikariCP maximumPoolSize=32 on billing-api."}

{"time":"2026-05-02T09:00:00Z","agent":"a1","session":"s2","role":"user","text":"lunch was great today","meta":{"tags":"chitchat"}}
{"time":"2026-05-02T09:00:00Z","agent":"a2","session":"x","role":"user","text":"the connection pool of another agent"}
`

func TestIngestRecallStats(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mem")
	code, out, errs := runCLI(t, goodJSONL, "ingest", "--db", db, "-")
	if code != 0 {
		t.Fatalf("ingest: code %d, stderr %s", code, errs)
	}
	if !strings.Contains(out, "ingested 4 records") {
		t.Fatalf("ingest output: %s", out)
	}
	code, out, errs = runCLI(t, "", "recall", "--db", db, "--agent", "a1", "--json", "connection pool size")
	if code != 0 {
		t.Fatalf("recall: code %d, stderr %s", code, errs)
	}
	var res struct {
		Memories []struct {
			ID      uint64              `json:"id"`
			Time    time.Time           `json:"time"`
			Agent   string              `json:"agent"`
			Session string              `json:"session"`
			Role    string              `json:"role"`
			Text    string              `json:"text"`
			Meta    map[string][]string `json:"meta"`
			Score   *float64            `json:"score"`
			Sparse  *float64            `json:"sparse"`
			Dense   *float64            `json:"dense"`
		} `json:"memories"`
		Stats map[string]any `json:"stats"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("recall --json is not the documented object: %v\n%s", err, out)
	}
	if len(res.Memories) == 0 || res.Memories[0].ID != 1 || res.Memories[0].Agent != "a1" {
		t.Fatalf("recall: want record 1 first, got %+v", res.Memories)
	}
	m := res.Memories[0]
	if m.Score == nil || m.Sparse == nil || m.Dense == nil || m.Meta["intent"][0] != "decision" || m.Role != "user" {
		t.Fatalf("recall: fields missing: %+v", m)
	}
	for _, mm := range res.Memories {
		if mm.Agent != "a1" {
			t.Fatalf("recall leaked agent %s", mm.Agent)
		}
	}
	if _, ok := res.Stats["embedded"]; !ok {
		t.Fatalf("stats lack embedded: %v", res.Stats)
	}
	// Filters and human output.
	code, out, _ = runCLI(t, "", "recall", "--db", db, "--agent", "a1", "--where", "tags=chitchat", "lunch")
	if code != 0 || !strings.Contains(out, "lunch was great") || strings.Contains(out, "HikariCP") {
		t.Fatalf("recall --where: code %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "", "stats", "--db", db)
	if code != 0 || !strings.Contains(out, "records       4") || !strings.Contains(out, "health        ok") || !strings.Contains(out, "embed cache   hash") {
		t.Fatalf("stats: code %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, "", "stats", "--db", db, "--json")
	var st struct {
		Scope string `json:"scope"`
		Log   struct {
			Records uint64 `json:"records"`
			NextID  uint64 `json:"next_id"`
		} `json:"log"`
		Index struct {
			Docs    uint64   `json:"docs"`
			Repairs []string `json:"repairs"`
		} `json:"index"`
	}
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || st.Scope != "store" || st.Log.Records != 4 || st.Log.NextID != 5 || st.Index.Docs != 4 || st.Index.Repairs == nil {
		t.Fatalf("stats --json: code %d %v\n%s", code, err, out)
	}
	if strings.ContainsAny(strings.Join(regexp.MustCompile(`"([^"]+)":`).FindAllString(out, -1), ""), "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
		t.Fatalf("stats --json has keys that are not snake case:\n%s", out)
	}
}

func TestIngestBadLines(t *testing.T) {
	bad := goodJSONL + `{"agent":"a1","text":"no time is fine"}
{"agent":"a1","text":"bad time","time":"yesterday"}
{"text":"no agent"}
not json at all
{"agent":"a1","text":"meta of wrong type","meta":{"tags":[1,2]}}
{"agent":"a1","text":"unknown field","colour":"red"}
{"agent":"a1","text":"reserved key","meta":{"\u0000x":"v"}}
{"agent":"a1","text":"far future","time":"9999-12-31T00:00:00Z"}
{"agent":"a1","text":"year one","time":"0001-01-01T00:00:00Z"}
`
	dir := t.TempDir()
	f := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(f, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "mem")
	// Reject (default): nothing written, every bad line named.
	code, _, errs := runCLI(t, "", "ingest", "--db", db, f)
	if code == 0 {
		t.Fatal("ingest of a file with bad lines succeeded in reject mode")
	}
	for _, want := range []string{"in.jsonl:7:", "in.jsonl:8:", "in.jsonl:9:", "in.jsonl:10:", "in.jsonl:11:", "in.jsonl:12:", "in.jsonl:13:", "in.jsonl:14:", `"time"`, "outside the storable range", "NUL", "agent", "meta.tags", "colour", "nothing was written"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if strings.Contains(errs, "in.jsonl:6:") {
		t.Errorf("good line 6 reported as bad:\n%s", errs)
	}
	_, out, _ := runCLI(t, "", "stats", "--db", db)
	if !strings.Contains(out, "records       0") {
		t.Fatalf("reject mode wrote records:\n%s", out)
	}
	// Skip: the good lines are stored.
	code, out, errs = runCLI(t, "", "ingest", "--db", db, "--bad", "skip", f)
	if code != 0 || !strings.Contains(out, "ingested 5 records (8 bad lines skipped)") {
		t.Fatalf("skip mode: code %d\n%s\n%s", code, out, errs)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"ingest", "x.jsonl"},
		{"ingest", "--db", "d"},
		{"ingest", "--db", "d", "--bad", "maybe", "-"},
		{"recall", "--db", "d", "q"},
		{"recall", "--agent", "a", "q"},
		{"recall", "--db", "d", "--agent", "a", "--since", "last tuesday", "q"},
		{"recall", "--db", "d", "--agent", "a", "--where", "novalue", "q"},
		{"stats"},
		{"demo", "synthetic", "--records", "5"},
		{"demo", "--utterances", "5"},
		{"consolidate", "--db", "d"},
		{"core", "--agent", "a"},
		{"feedback", "--db", "d", "--up"},
		{"feedback", "--db", "d", "--up", "--down", "1"},
		{"feedback", "--db", "d", "--up", "x"},
		{"bench", "--scale", "lots"},
		{"eval"},
		{"eval", "squad"},
		{"eval", "locomo"},
		{"eval", "locomo", "--data", "x", "--k", "ten"},
	} {
		code, _, errs := runCLI(t, "", args...)
		if code != 2 {
			t.Errorf("%q: exit %d, want 2 (stderr %s)", args, code, errs)
		}
		if errs == "" {
			t.Errorf("%q: no message", args)
		}
	}
	if code, out, _ := runCLI(t, "", "help"); code != 0 || !strings.Contains(out, "Commands:") {
		t.Errorf("help: %d %s", code, out)
	}
}

func TestRecallBadQuery(t *testing.T) {
	db := filepath.Join(t.TempDir(), "mem")
	if code, _, errs := runCLI(t, goodJSONL, "ingest", "--db", db, "-"); code != 0 {
		t.Fatal(errs)
	}
	code, _, errs := runCLI(t, "", "recall", "--db", db, "--agent", "a1", "--mode", "psychic", "q")
	if code != 1 || !strings.Contains(strings.ToLower(errs), "mode") {
		t.Fatalf("bad mode: code %d, %s", code, errs)
	}
	code, _, errs = runCLI(t, "", "recall", "--db", db, "--agent", "a1", "--since", "2026-06-01", "--until", "2026-05-01", "q")
	if code != 1 || !strings.Contains(strings.ToLower(errs), "since") {
		t.Fatalf("since > until: code %d, %s", code, errs)
	}
}

func TestDemoSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("demo run skipped in -short")
	}
	code, out, errs := runCLI(t, "", "demo", "synthetic", "--records", "3000", "--agents", "3")
	if code != 0 {
		t.Fatalf("demo: code %d\n%s", code, errs)
	}
	for _, want := range []string{"1. write", "2. recall", "3. cache", "0 embedded", "embeddings ever computed"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}

func TestParseWhen(t *testing.T) {
	now := time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"":                     {},
		"2026-05-01T00:00:00Z": time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC),
		"7d":                   now.Add(-7 * 24 * time.Hour),
		"36h":                  now.Add(-36 * time.Hour),
		"2w":                   now.Add(-14 * 24 * time.Hour),
	} {
		got, err := parseWhen(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseWhen(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"soon", "-3d", "d", "1e400d"} {
		if _, err := parseWhen(bad, now); err == nil {
			t.Errorf("parseWhen(%q) accepted", bad)
		}
	}
}

func TestEvalLocomo(t *testing.T) {
	data := filepath.Join("..", "..", "..", "shared", "data", "locomo")
	if _, err := os.Stat(data); err != nil {
		testenv.Missing(t, "LoCoMo data not found at %s (it lives in ../shared beside the repository): %v", data, err)
	}
	if testing.Short() {
		t.Skip("full LoCoMo run skipped in -short")
	}
	code, out, errs := runCLI(t, "", "eval", "locomo", "--data", data, "--mode", "sparse", "--json", "--quiet")
	if code != 0 {
		t.Fatalf("eval: code %d: %s", code, errs)
	}
	var rep struct {
		Questions int                `json:"questions"`
		Recall    map[string]float64 `json:"recall"`
		ByCat     map[string]any     `json:"by_category"`
		Embedded  *int               `json:"embedded"`
		Turns     int                `json:"turns"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	if rep.Questions < 800 || rep.Turns < 3000 || len(rep.Recall) != 4 || len(rep.ByCat) != 4 || rep.Embedded == nil || *rep.Embedded != 0 {
		t.Fatalf("unexpected report: %+v", rep)
	}
	for k, r := range rep.Recall {
		if r <= 0 || r > 1 {
			t.Fatalf("recall@%s = %v", k, r)
		}
	}
}

func TestBenchScalesReport(t *testing.T) {
	if testing.Short() {
		t.Skip("bench run skipped in -short")
	}
	dir := t.TempDir()
	code, out, errs := runCLI(t, "", "bench", "--scales", "1000,2000", "--queries", "30", "--keyword-queries", "10",
		"--systems", "lazymem,flat", "--report-dir", dir)
	if code != 0 {
		t.Fatalf("bench: code %d: %s", code, errs)
	}
	if strings.Count(out, "lazy vs eager RAG: ") != 2 {
		t.Fatalf("want two tables:\n%s", out)
	}
	md, err := os.ReadFile(filepath.Join(dir, "scaling.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"scaling-latency.svg", "| lazymem |", "| flat |", "1000 records", "2000 records"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("scaling.md lacks %q", want)
		}
	}
	for _, f := range []string{"scaling-latency.svg", "scaling-embeddings.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !strings.HasPrefix(string(b), "<svg") {
			t.Errorf("%s: %v", f, err)
		}
	}
	if code, _, _ := runCLI(t, "", "bench", "--scale", "1000", "--report-dir", dir); code != 2 {
		t.Errorf("--report-dir without --scales: exit %d, want 2", code)
	}
}

// TestEmbedderFlag: recall and demo name a bad --embedder, and a use
// embedder without its model files says which file is missing.
func TestEmbedderFlag(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	code, _, errs := runCLI(t, "", "recall", "--db", dir, "--agent", "a", "--embedder", "word2vec", "x")
	if code != 2 || !strings.Contains(errs, `--embedder "word2vec"`) {
		t.Fatalf("bad embedder: code %d: %s", code, errs)
	}
	code, _, errs = runCLI(t, "", "demo", "--embedder", "hash:x")
	if code != 2 || !strings.Contains(errs, "hash takes no argument") {
		t.Fatalf("hash with an argument: code %d: %s", code, errs)
	}
	code, _, errs = runCLI(t, "", "recall", "--db", dir, "--agent", "a", "--embedder", "use:"+t.TempDir(), "x")
	if code != 1 || !strings.Contains(errs, "model.json") || strings.Contains(errs, "lazymem: lazymem:") {
		t.Fatalf("use without a model: code %d: %s", code, errs)
	}
}

// TestRecallWithUse: recall --embedder use over a store ingested without
// embedding, when the USE-lite model is there (make use-model).
func TestRecallWithUse(t *testing.T) {
	model := os.Getenv("LAZYMEM_USE_DIR")
	if model == "" {
		model = filepath.Join("..", "..", ".cache", "use-lite")
	}
	if _, err := os.Stat(filepath.Join(model, "model.json")); err != nil {
		testenv.Missing(t, "USE-lite model not in %s (make use-model): %v", model, err)
	}
	db := filepath.Join(t.TempDir(), "mem")
	if code, _, errs := runCLI(t, goodJSONL, "ingest", "--db", db, "-"); code != 0 {
		t.Fatalf("ingest: code %d: %s", code, errs)
	}
	code, out, errs := runCLI(t, "", "recall", "--db", db, "--agent", "a1", "--embedder", "use:"+model, "--json", "connection pool size")
	if code != 0 {
		t.Fatalf("recall: code %d: %s", code, errs)
	}
	var res struct {
		Memories []struct {
			ID    uint64  `json:"id"`
			Dense float64 `json:"dense"`
		} `json:"memories"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) == 0 || res.Memories[0].ID != 1 || res.Memories[0].Dense <= 0 {
		t.Fatalf("recall with use: %s", out)
	}
}
