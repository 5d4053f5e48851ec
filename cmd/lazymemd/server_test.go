package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lazymem/lazymem/cmd/internal/wire"
	"github.com/lazymem/lazymem/engine"
)

var testNow = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// newTestServer serves a fresh store; the store closes with the test.
func newTestServer(t testing.TB, maxBody int64) (*httptest.Server, *engine.DB) {
	t.Helper()
	return newTestServerAgent(t, maxBody, "")
}

// newTestServerAgent is newTestServer with a default MCP agent.
func newTestServerAgent(t testing.TB, maxBody int64, mcpAgent string) (*httptest.Server, *engine.DB) {
	t.Helper()
	db, err := engine.Open(t.TempDir(), engine.Options{Clock: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	lim := defaultLimits()
	lim.maxBody = maxBody
	s := newServer(db, lim)
	s.clock, s.mcpAgent = func() time.Time { return testNow }, mcpAgent
	return serveTest(t, s, db), db
}

// serveTest serves s's routes until the test ends, then closes the server
// and db (a close error fails the test).
func serveTest(t testing.TB, s *server, db *engine.DB) *httptest.Server {
	ts := httptest.NewServer(s.routes())
	t.Cleanup(func() {
		ts.Close()
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	return ts
}

// statusOf sends one request with the Authorization header as given (none
// when empty) and returns its status.
func statusOf(t testing.TB, method, url, auth, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// call sends body (nil: none) and decodes the JSON reply into out (nil:
// skip); it returns the status.
func call(t testing.TB, method, url, body string, out any) int {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); method != http.MethodHead && !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%s %s: Content-Type %q, body %s", method, url, ct, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: reply %s: %v", method, url, b, err)
		}
	}
	return resp.StatusCode
}

type errorReply struct {
	Error apiError `json:"error"`
}

func TestAPI(t *testing.T) {
	ts, _ := newTestServer(t, defaultMaxBody)
	var health map[string]string
	if st := call(t, "GET", ts.URL+"/v1/health", "", &health); st != 200 || health["status"] != "ok" {
		t.Fatalf("health: %d %v", st, health)
	}
	var ids struct{ IDs []uint64 }
	st := call(t, "POST", ts.URL+"/v1/records", `{"agent":"a1","session":"s1","role":"user","time":"2026-04-30T09:00:00Z",
		"text":"the staging database keeps running out of connections","meta":{"project":"atlas"}}`, &ids)
	if st != 200 || len(ids.IDs) != 1 || ids.IDs[0] != 1 {
		t.Fatalf("append one: %d %v", st, ids)
	}
	st = call(t, "POST", ts.URL+"/v1/records", `{"records":[
		{"agent":"a1","session":"s1","role":"assistant","time":"2026-04-30T09:01:00Z","text":"raise the pool size to 50 and add a timeout"},
		{"agent":"a1","session":"s2","role":"user","time":"2026-04-30T15:00:00Z","text":"lunch was good","meta":{"project":"misc"}},
		{"agent":"a2","session":"s1","role":"user","text":"another agent's connection pool notes"}]}`, &ids)
	if st != 200 || fmt.Sprint(ids.IDs) != "[2 3 4]" {
		t.Fatalf("append batch: %d %v", st, ids)
	}
	var rec wire.StoredRecord
	if st := call(t, "GET", ts.URL+"/v1/records/2", "", &rec); st != 200 || rec.ID != 2 || rec.Role != "assistant" || !strings.Contains(rec.Text, "pool size") {
		t.Fatalf("get: %d %+v", st, rec)
	}
	if st := call(t, "GET", ts.URL+"/v1/records/4", "", &rec); st != 200 || !rec.Time.Equal(testNow) {
		t.Fatalf("a record without time takes the server's clock: %d %+v", st, rec)
	}
	var res wire.Result
	st = call(t, "POST", ts.URL+"/v1/recall", `{"agent":"a1","text":"database connection pool","k":5,"explain":true}`, &res)
	if st != 200 || len(res.Memories) == 0 {
		t.Fatalf("recall: %d %+v", st, res)
	}
	for _, m := range res.Memories {
		if m.Agent != "a1" {
			t.Fatalf("recall of a1 returned %+v", m)
		}
	}
	if res.Memories[0].ID != 1 && res.Memories[0].ID != 2 || len(res.Memories[0].Reasons) == 0 || res.Stats.Mode != "lazy" || res.Stats.Candidates == 0 {
		t.Fatalf("recall: top %+v, stats %+v", res.Memories[0], res.Stats)
	}
	// Filters and time expressions reach the engine.
	// (The engine never answers empty while records pass the filters: what
	// it returns then are the latest of them, none a BM25 hit.)
	res = wire.Result{}
	st = call(t, "POST", ts.URL+"/v1/recall", `{"agent":"a1","text":"connections","where":{"project":"misc"},"mode":"sparse"}`, &res)
	if st != 200 || res.Stats.Hits != 0 {
		t.Fatalf("recall with a where filter that excludes the hits: %d %+v", st, res)
	}
	for _, m := range res.Memories {
		if m.Sparse != 0 || !slices.Equal(m.Meta["project"], []string{"misc"}) {
			t.Fatalf("recall with a where filter that excludes the hits returned %+v", m)
		}
	}
	st = call(t, "POST", ts.URL+"/v1/recall", `{"agent":"a1","text":"what did we say yesterday about connections?","now":"2026-05-01T10:00:00Z"}`, &res)
	if st != 200 || res.Stats.TimeExpr != "yesterday" || res.Stats.Since == nil || len(res.Memories) == 0 {
		t.Fatalf("time expression: %d %+v", st, res.Stats)
	}
	res = wire.Result{}
	st = call(t, "POST", ts.URL+"/v1/recall", `{"agent":"a1","text":"what did we say yesterday?","now":"2026-05-01T10:00:00Z","parse_time":false}`, &res)
	if st != 200 || res.Stats.TimeExpr != "" {
		t.Fatalf("parse_time false: %d %+v", st, res.Stats)
	}
	var m map[string]any
	if st := call(t, "GET", ts.URL+"/v1/stats", "", &m); st != 200 {
		t.Fatalf("stats: %d", st)
	}
	if lg, _ := m["log"].(map[string]any); lg["next_id"] != 5.0 || lg["records"] != 4.0 || m["appended"] != 4.0 || m["recalls"] != 4.0 || m["scope"] != "store" {
		t.Fatalf("stats: %v", m)
	}
	assertSnakeCase(t, "stats", m)
	if st := call(t, "HEAD", ts.URL+"/v1/health", "", nil); st != 200 {
		t.Fatalf("HEAD health: %d", st)
	}
}

// TestAPIBadInput: every bad request gets its status, code and field, and
// leaves the store as it was.
func TestAPIBadInput(t *testing.T) {
	ts, db := newTestServer(t, 4096)
	if st := call(t, "POST", ts.URL+"/v1/records", `{"agent":"a","text":"the one good record"}`, nil); st != 200 {
		t.Fatal(st)
	}
	long := strings.Repeat("x", engine.DefaultMaxTextBytes+1)
	tsBig, _ := newTestServer(t, defaultMaxBody)
	for _, tc := range []struct {
		method, path, body string
		status             int
		code, field        string
		big                bool // on the server that takes large bodies
	}{
		{"POST", "/v1/records", `{"text":"no agent"}`, 400, "invalid", "record.agent", false},
		{"POST", "/v1/records", `{"agent":"a"}`, 400, "invalid", "record.text", false},
		{"POST", "/v1/records", `{"agent":"a","text":""}`, 400, "invalid", "record.text", false},
		{"POST", "/v1/records", `{"agent":"a","text":"x","time":"noon"}`, 400, "invalid", "record.time", false},
		{"POST", "/v1/records", `{"agent":"a","text":"x","meta":{"k":""}}`, 400, "invalid", "record.meta[\"k\"][0]", false},
		{"POST", "/v1/records", `{"agent":"a","text":"x","meta":{"k":7}}`, 400, "invalid", "record.meta.k", false},
		{"POST", "/v1/records", `{"agent":"a","text":"x","colour":"red"}`, 400, "invalid", "record.colour", false},
		{"POST", "/v1/records", `{"agent":"a","text":"x","meta":{"\u0000x":"v"}}`, 400, "invalid", `record.meta["\x00x"]`, false},
		{"POST", "/v1/records", `{"records":[{"agent":"a","text":"fine"},{"agent":"a","text":"x","meta":{"\u0000agent":"b"}}]}`, 400, "invalid", `records[1].meta["\x00agent"]`, false},
		{"POST", "/v1/records", `{"agent":"a","text":"x","time":"9999-12-31T00:00:00Z"}`, 400, "invalid", "record.time", false},
		{"POST", "/v1/records", `{"agent":"a","text":"x","time":"0001-01-01T00:00:00Z"}`, 400, "invalid", "record.time", false},
		{"POST", "/v1/records", `{"agent":"a","text":`, 400, "invalid", "record", false},
		{"POST", "/v1/records", "{\"agent\":\"a\",\"text\":\"\xff\"}", 400, "invalid", "record", false},
		{"POST", "/v1/records", ``, 400, "invalid", "body", false},
		{"POST", "/v1/recall", " \n", 400, "invalid", "body", false},
		{"POST", "/v1/records", `{"records":[{"agent":"a","text":"fine"},{"agent":"","text":"x"}]}`, 400, "invalid", "records[1].agent", false},
		{"POST", "/v1/records", `{"records":[{"agent":"a","text":"fine"},{"agent":"b"}]}`, 400, "invalid", "records[1].text", false},
		{"POST", "/v1/records", `{"records":[]}`, 400, "invalid", "records", false},
		{"POST", "/v1/records", `{"agent":"a","text":"` + long + `"}`, 400, "invalid", "record.text", true},
		{"POST", "/v1/records", `{"agent":"a","text":"` + strings.Repeat("y", 5000) + `"}`, 413, "too_large", "body", false},
		{"POST", "/v1/recall", `{"text":"x"}`, 400, "invalid", "query.agent", false},
		{"POST", "/v1/recall", `{"agent":"a","k":-1}`, 400, "invalid", "query.k", false},
		{"POST", "/v1/recall", `{"agent":"a","k":"ten"}`, 400, "invalid", "query.k", false},
		{"POST", "/v1/recall", `{"agent":"a","mode":"eager"}`, 400, "invalid", "query.mode", false},
		{"POST", "/v1/recall", `{"agent":"a","since":"2026-05-02T00:00:00Z","until":"2026-05-01T00:00:00Z"}`, 400, "invalid", "query.since", false},
		{"POST", "/v1/recall", `{"agent":"a","since":"last week"}`, 400, "invalid", "query.since", false},
		{"POST", "/v1/recall", `{"agent":"a","limit":3}`, 400, "invalid", "query.limit", false},
		{"POST", "/v1/recall", `[]`, 400, "invalid", "query", false},
		{"GET", "/v1/records/abc", ``, 400, "invalid", "id", false},
		{"GET", "/v1/records/0", ``, 400, "invalid", "id", false},
		{"GET", "/v1/records/999", ``, 404, "not_found", "", false},
		{"DELETE", "/v1/records", ``, 405, "method_not_allowed", "", false},
		{"GET", "/v1/recall", ``, 405, "method_not_allowed", "", false},
		{"GET", "/v2/recall", ``, 404, "not_found", "", false},
	} {
		url := ts.URL + tc.path
		if tc.big {
			url = tsBig.URL + tc.path
		}
		var e errorReply
		st := call(t, tc.method, url, tc.body, &e)
		if st != tc.status || e.Error.Code != tc.code || e.Error.Field != tc.field || e.Error.Message == "" {
			t.Errorf("%s %s %.60s: %d %+v, want %d code %q field %q", tc.method, tc.path, tc.body, st, e.Error, tc.status, tc.code, tc.field)
		}
		// The message starts as every message does and names the field
		// by the same path as "field".
		if !strings.HasPrefix(e.Error.Message, "lazymem: ") || tc.field != "" && !strings.HasPrefix(e.Error.Message, "lazymem: "+tc.field+":") {
			t.Errorf("%s %s %.60s: message %q, want it to start with %q", tc.method, tc.path, tc.body, e.Error.Message, "lazymem: "+tc.field+":")
		}
	}
	// Nothing was written, the good record is intact.
	if m := db.Metrics(); m.Log.Next != 2 || m.Appended != 1 {
		t.Fatalf("a bad request wrote: next %d appended %d", m.Log.Next, m.Appended)
	}
	r, err := db.Get(context.Background(), 1)
	if err != nil || r.Text != "the one good record" {
		t.Fatalf("the stored record: %+v, %v", r, err)
	}
}

// TestAPIConcurrent: appends and recalls from many clients at once all
// succeed and every acknowledged id holds its record (run with -race).
func TestAPIConcurrent(t *testing.T) {
	ts, db := newTestServer(t, defaultMaxBody)
	const clients, per = 8, 10
	var mu sync.Mutex
	got := map[uint64]string{}
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				text := fmt.Sprintf("client %d message %d about the deploy", c, i)
				var ids struct{ IDs []uint64 }
				body, _ := json.Marshal(map[string]string{"agent": "a", "session": fmt.Sprint(c), "text": text})
				if st := call(t, "POST", ts.URL+"/v1/records", string(body), &ids); st != 200 || len(ids.IDs) != 1 {
					t.Errorf("append: %d %v", st, ids)
					return
				}
				mu.Lock()
				got[ids.IDs[0]] = text
				mu.Unlock()
				var res wire.Result
				if st := call(t, "POST", ts.URL+"/v1/recall", `{"agent":"a","text":"deploy"}`, &res); st != 200 {
					t.Errorf("recall: %d", st)
				}
			}
		}()
	}
	wg.Wait()
	if len(got) != clients*per {
		t.Fatalf("%d distinct ids for %d appends", len(got), clients*per)
	}
	for id, text := range got {
		r, err := db.Get(context.Background(), id)
		if err != nil || r.Text != text {
			t.Fatalf("id %d: %q, %v; want %q", id, r.Text, err, text)
		}
	}
}

var (
	fuzzOnce  sync.Once
	fuzzDB    *engine.DB
	fuzzSrv   http.Handler
	fuzzStore string
)

// openFuzzStore opens the one store the fuzz targets share (opening one
// per input would measure Pebble, not the parsers).
func openFuzzStore() {
	dir, err := os.MkdirTemp("", "lazymemd-fuzz-*")
	if err != nil {
		panic(err)
	}
	fuzzStore = dir
	if fuzzDB, err = engine.Open(dir, engine.Options{}); err != nil {
		panic(err)
	}
	lim := defaultLimits()
	lim.maxBody = 1 << 20
	s := newServer(fuzzDB, lim)
	s.mcpAgent = "fuzz"
	fuzzSrv = s.routes()
}

func closeFuzzStore() {
	if fuzzDB != nil {
		fuzzDB.Close()
		os.RemoveAll(fuzzStore)
	}
}

// FuzzAPI: whatever body is posted to /v1/records or /v1/recall, the
// reply is 200 or a 4xx JSON error (never a 5xx, never a panic), and a
// rejected append writes nothing.
func FuzzAPI(f *testing.F) {
	for _, s := range []string{
		`{"agent":"a","text":"x"}`, `{"records":[{"agent":"a","text":"x"},{"agent":"b","text":"y","meta":{"k":["v"]}}]}`,
		`{"agent":"a","text":"what happened yesterday?","k":3}`, `{"agent":"a","where":{"k":"v"},"since":"2026-01-01T00:00:00Z"}`,
		`{"records":[{"agent":"a"}]}`, `{"agent":"a","k":-4}`, "{\"agent\":\"\xff\"}",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, recall bool) {
		fuzzOnce.Do(openFuzzStore)
		path := "/v1/records"
		if recall {
			path = "/v1/recall"
		}
		before := fuzzDB.Metrics().Log.Next
		w := httptest.NewRecorder()
		fuzzSrv.ServeHTTP(w, localRequest("POST", path, body))
		if w.Code >= 500 {
			t.Fatalf("%s %q: %d %s", path, body, w.Code, w.Body.Bytes())
		}
		if w.Code != 200 {
			var e errorReply
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error.Code == "" {
				t.Fatalf("%s %q: %d with a body that is not a JSON error: %s", path, body, w.Code, w.Body.Bytes())
			}
			if after := fuzzDB.Metrics().Log.Next; after != before {
				t.Fatalf("%s %q: rejected (%d) but the log grew from %d to %d", path, body, w.Code, before, after)
			}
		}
	})
}

// localRequest is a request to the daemon by its default host name
// (httptest's example.com would be refused by the host check).
func localRequest(method, path string, body []byte) *http.Request {
	r := httptest.NewRequest(method, path, bytes.NewReader(body))
	r.Host = "localhost:7373"
	return r
}

// assertSnakeCase fails on any key of v (a decoded JSON value) that is not
// snake case.
func assertSnakeCase(t *testing.T, where string, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k != strings.ToLower(k) || strings.ContainsAny(k, " -") {
				t.Errorf("%s: key %q is not snake case", where, k)
			}
			assertSnakeCase(t, where+"."+k, e)
		}
	case []any:
		for _, e := range x {
			assertSnakeCase(t, where, e)
		}
	}
}
