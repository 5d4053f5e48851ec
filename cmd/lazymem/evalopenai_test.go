package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lazymem/lazymem/bench/eval"
	"github.com/lazymem/lazymem/bench/zhmem"
	"github.com/lazymem/lazymem/engine/embed"
)

// hashEndpoint is an OpenAI-compatible /v1/embeddings endpoint that
// answers with the engine's own hash embedder's vectors, so a run through
// it must rank exactly as the built-in hash embedder does.
type hashEndpoint struct {
	srv   *httptest.Server
	hash  *embed.Hash
	mu    sync.Mutex
	texts map[string]bool
}

func newHashEndpoint(t *testing.T) *hashEndpoint {
	t.Helper()
	h, err := embed.NewHash(embed.HashOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e := &hashEndpoint{hash: h, texts: map[string]bool{}}
	e.srv = httptest.NewServer(http.HandlerFunc(e.serve))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *hashEndpoint) serve(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil || req.Model != "fake" {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	e.mu.Lock()
	for _, t := range req.Input {
		e.texts[t] = true
	}
	e.mu.Unlock()
	vs, err := e.hash.Embed(r.Context(), req.Input)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	type item struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	resp := struct {
		Data []item `json:"data"`
	}{}
	for i, v := range vs {
		resp.Data = append(resp.Data, item{Index: i, Embedding: v})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// sent reports whether the endpoint was asked to embed a text holding s.
func (e *hashEndpoint) sent(s string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for t := range e.texts {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}

// TestEvalZhOpenAI: evalzh --embedder openai:MODEL@URL sends the set's
// texts to the endpoint, names the embedder in the report, and, the
// endpoint serving the hash embedder's vectors, recalls exactly what the
// built-in hash embedder recalls.
func TestEvalZhOpenAI(t *testing.T) {
	ep := newHashEndpoint(t)
	data := filepath.Join("..", "..", "bench", "zhmem", "testdata")
	runJSON := func(args ...string) []zhmem.Report {
		t.Helper()
		var out, errb bytes.Buffer
		if err := cmdEvalZh(context.Background(), append([]string{"--data", data, "--json"}, args...), &out, &errb); err != nil {
			t.Fatalf("%q: %v\n%s", args, err, errb.String())
		}
		var reps []zhmem.Report
		if err := json.Unmarshal(out.Bytes(), &reps); err != nil {
			t.Fatal(err)
		}
		return reps
	}
	// The same fusion settings for both: an OpenAI-compatible endpoint
	// recommends a semantic embedder's (embed.FusionAdvisor), the hash
	// embedder a lexical one's; the test compares the vectors.
	fusion := []string{"--dense-weight", "0.2", "--candidates", "50"}
	hash := runJSON(append([]string{"--embedder", "hash"}, fusion...)...)[0]
	remote := runJSON(append([]string{"--embedder", "openai:fake@" + ep.srv.URL + "/v1"}, fusion...)...)[0]
	if remote.Embedder != "openai:fake" {
		t.Errorf("embedder %q, want openai:fake", remote.Embedder)
	}
	// A record text and a question text reached the endpoint.
	for _, s := range []string{"朵朵今年五岁", "孩子多大了"} {
		if !ep.sent(s) {
			t.Errorf("the endpoint never embedded a text holding %q", s)
		}
	}
	for id, want := range hash.Ranks {
		if got := remote.Ranks[id]; !equalInts(got, want) {
			t.Errorf("%s: evidence ranks %v through the endpoint, %v with the built-in hash embedder", id, got, want)
		}
	}

	// --dense-weight and --candidates are checked like the other flags.
	for _, args := range [][]string{{"--dense-weight", "2"}, {"--candidates", "-1"}} {
		var out, errb bytes.Buffer
		err := cmdEvalZh(context.Background(), append([]string{"--data", data}, args...), &out, &errb)
		if _, ok := err.(usageError); !ok {
			t.Errorf("%q: err = %v, want a usage error", args, err)
		}
	}
}

// TestEvalLoCoMoOpenAI: eval locomo --embedder openai:MODEL@URL runs through
// the endpoint and, the endpoint serving the hash embedder's vectors,
// reports the built-in hash embedder's recall.
func TestEvalLoCoMoOpenAI(t *testing.T) {
	ep := newHashEndpoint(t)
	data := filepath.Join("..", "..", "bench", "eval", "testdata", "tiny")
	run := func(spec string) *eval.RunReport {
		t.Helper()
		var out, errb bytes.Buffer
		// The same fusion settings for both (see TestEvalZhOpenAI).
		if err := cmdEval(context.Background(), []string{"locomo", "--data", data, "--embedder", spec, "--dense-weight", "0.2", "--candidates", "50", "--json", "--quiet"}, &out, &errb); err != nil {
			t.Fatalf("%s: %v\n%s", spec, err, errb.String())
		}
		var rep eval.RunReport
		if err := json.NewDecoder(&out).Decode(&rep); err != nil {
			t.Fatalf("%s: %v\n%s", spec, err, out.String())
		}
		return &rep
	}
	hash := run("hash")
	remote := run("openai:fake@" + ep.srv.URL + "/v1")
	if len(ep.texts) == 0 {
		t.Error("the endpoint embedded nothing")
	}
	for k, want := range hash.Recall {
		if got := remote.Recall[k]; got != want {
			t.Errorf("R@%d %v through the endpoint, %v with the built-in hash embedder", k, got, want)
		}
	}
	var out, errb bytes.Buffer
	if err := cmdEval(context.Background(), []string{"locomo", "--data", data, "--embedder", "openai:fake@" + ep.srv.URL + "/v1", "--quiet"}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "| openai:fake | lazy | all |") {
		t.Errorf("the table does not name the embedder openai:fake:\n%s", out.String())
	}
	err := cmdEval(context.Background(), []string{"locomo", "--data", data, "--embedder", "openai:"}, &out, &errb)
	if _, ok := err.(usageError); !ok {
		t.Errorf("openai: without a model: err = %v, want a usage error", err)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestRecallWithOpenAI: recall --embedder openai:MODEL@URL works against an
// endpoint; before embedspec probed the dimension, engine.Open refused the
// embedder ("has Dim 0") in every command.
func TestRecallWithOpenAI(t *testing.T) {
	ep := newHashEndpoint(t)
	db := filepath.Join(t.TempDir(), "mem")
	if code, _, errs := runCLI(t, goodJSONL, "ingest", "--db", db, "-"); code != 0 {
		t.Fatalf("ingest: code %d: %s", code, errs)
	}
	code, out, errs := runCLI(t, "", "recall", "--db", db, "--agent", "a1", "--embedder", "openai:fake@"+ep.srv.URL+"/v1", "--json", "connection pool size")
	if code != 0 {
		t.Fatalf("recall: code %d: %s", code, errs)
	}
	var res struct {
		Memories []struct {
			Text  string  `json:"text"`
			Dense float64 `json:"dense"`
		} `json:"memories"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) == 0 || !strings.Contains(res.Memories[0].Text, "connection pool") || res.Memories[0].Dense == 0 {
		t.Errorf("recall through the endpoint: %s", out)
	}
	if !ep.sent("connection pool size") {
		t.Error("the question never reached the endpoint")
	}
}
