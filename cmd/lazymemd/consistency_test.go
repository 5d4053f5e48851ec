package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/engine"
)

// TestContentType: a body declared as anything but JSON is 415 with the
// error body, before it is read; JSON with parameters, a +json type and
// no Content-Type at all are read as JSON.
func TestContentType(t *testing.T) {
	ts, db := newTestServer(t, 1<<20)
	post := func(path, ct, body string) (int, errorReply) {
		t.Helper()
		req, _ := http.NewRequest("POST", ts.URL+path, strings.NewReader(body))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e errorReply
		b, _ := io.ReadAll(resp.Body)
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("%s %s: Content-Type %q, body %s", path, ct, resp.Header.Get("Content-Type"), b)
		}
		_ = json.Unmarshal(b, &e)
		return resp.StatusCode, e
	}
	rec := `{"agent":"a","text":"x"}`
	for _, c := range []struct{ path, ct, body string }{
		{"/v1/records", "text/plain", rec},
		{"/v1/records", "application/x-www-form-urlencoded", rec},
		{"/v1/records", "multipart/form-data; boundary=x", rec},
		{"/v1/records", "not a media type", rec},
		{"/v1/recall", "text/plain;charset=utf-8", `{"agent":"a"}`},
		{"/v1/forget", "text/plain", `{"agent":"a","ids":[1]}`},
		{"/mcp", "text/plain", `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
	} {
		st, e := post(c.path, c.ct, c.body)
		if st != http.StatusUnsupportedMediaType || e.Error.Code != "unsupported_media_type" || e.Error.Field != "Content-Type" ||
			!strings.HasPrefix(e.Error.Message, "lazymem: Content-Type: ") {
			t.Errorf("POST %s as %q: %d %+v, want 415 unsupported_media_type naming Content-Type", c.path, c.ct, st, e.Error)
		}
	}
	if n := db.Metrics().Log.Next; n != 1 {
		t.Fatalf("a refused body was appended: next id %d", n)
	}
	for _, ct := range []string{"", "application/json", "application/json; charset=utf-8", "Application/JSON", "application/merge-patch+json"} {
		if st, e := post("/v1/records", ct, rec); st != 200 {
			t.Errorf("POST /v1/records as %q: %d %+v, want 200", ct, st, e.Error)
		}
	}
}

// TestRepliesConsistent: the rules the API keeps everywhere. A record
// read back or recalled has every field, "" and {} when empty, never
// null; a missing record's message starts "lazymem:" like every message;
// an unknown path's 404 lists every route of the registry.
func TestRepliesConsistent(t *testing.T) {
	ts, _ := newTestServer(t, 1<<20)
	var ids struct{ IDs []uint64 }
	if st := call(t, "POST", ts.URL+"/v1/records", `{"agent":"a","text":"bare record"}`, &ids); st != 200 {
		t.Fatal(st)
	}
	raw := func(method, path, body string) map[string]any {
		t.Helper()
		var v map[string]any
		call(t, method, ts.URL+path, body, &v)
		return v
	}
	rec := raw("GET", "/v1/records/1", "")
	mem := raw("POST", "/v1/recall", `{"agent":"a","text":"bare","mode":"sparse"}`)["memories"].([]any)[0].(map[string]any)
	for name, r := range map[string]map[string]any{"stored": rec, "recalled": mem} {
		for _, k := range []string{"id", "time", "agent", "session", "role", "text", "meta"} {
			if v, ok := r[k]; !ok || v == nil {
				t.Errorf("%s record: %q is %v (present %v), want present and not null", name, k, v, ok)
			}
		}
		if m, ok := r["meta"].(map[string]any); !ok || len(m) != 0 {
			t.Errorf("%s record: meta %#v, want {}", name, r["meta"])
		}
		if r["session"] != "" || r["role"] != "" {
			t.Errorf("%s record: session %#v role %#v, want \"\"", name, r["session"], r["role"])
		}
	}

	var e errorReply
	if st := call(t, "GET", ts.URL+"/v1/records/99", "", &e); st != 404 || e.Error.Message != "lazymem: engine: record not found: id 99" {
		t.Errorf("missing record: %d %q", st, e.Error.Message)
	}
	e = errorReply{}
	if st := call(t, "GET", ts.URL+"/v1/nope", "", &e); st != 404 {
		t.Fatalf("unknown path: %d", st)
	}
	for _, rt := range registry {
		if want := rt.method + " " + rt.docPath(); !strings.Contains(e.Error.Message, want) {
			t.Errorf("the 404 message lacks %q: %s", want, e.Error.Message)
		}
	}
}

// TestNoGone: the engine's ErrDeleted, wherever it surfaces, is 404
// not_found: a forgotten record answers as one never assigned.
func TestNoGone(t *testing.T) {
	ts, db := newTestServer(t, 1<<20)
	if st := call(t, "POST", ts.URL+"/v1/records", `{"agent":"a","text":"to forget"}`, nil); st != 200 {
		t.Fatal(st)
	}
	if _, err := db.Forget(t.Context(), engine.Selector{Agent: "a", IDs: []uint64{1}}); err != nil {
		t.Fatal(err)
	}
	var e errorReply
	if st := call(t, "GET", ts.URL+"/v1/records/1", "", &e); st != 404 || e.Error.Code != "not_found" {
		t.Errorf("forgotten record: %d %+v, want 404 not_found", st, e.Error)
	}
}

// TestForgetFieldErrors: a bad selector names the field under
// "selector", in "field" and in the message alike.
func TestForgetFieldErrors(t *testing.T) {
	ts, _ := newTestServer(t, 1<<20)
	for _, c := range []struct{ body, field, msg string }{
		{`{"agent":"a","bogus":1}`, "selector.bogus", "unknown field"},
		{`{"agent":"a","ids":"1"}`, "selector.ids", "want an array of record ids"},
		{`{"agent":"a","ids":[-1]}`, "selector.ids", ""},
		{`{"agent":"a","since":5}`, "selector.since", "want a string"},
		{`{"agent":"a","until":"yesterday"}`, "selector.until", "not an RFC 3339 time"},
		{`{"agent":"a"} {}`, "selector", "more than one JSON value"},
		{`[]`, "selector", ""},
	} {
		var e errorReply
		st := call(t, "POST", ts.URL+"/v1/forget", c.body, &e)
		if st != 400 || e.Error.Code != "invalid" || !strings.HasPrefix(e.Error.Field, c.field) ||
			!strings.HasPrefix(e.Error.Message, "lazymem: "+e.Error.Field+": ") || !strings.Contains(e.Error.Message, c.msg) {
			t.Errorf("%s: %d %+v, want 400 invalid field %s..., message %q", c.body, st, e.Error, c.field, c.msg)
		}
	}
}
