package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/lazymem/lazymem/cmd/internal/wire"
	"github.com/lazymem/lazymem/engine"
)

// notDriven are the documented replies TestOpenAPIReplies cannot provoke
// through the API, by status, with the reason. Every other documented
// status of every operation must be produced and validated.
var notDriven = map[string]string{
	"500": "a record that does not decode: needs a corrupt store (TestDaemonDamagedBlock)",
	"507": "a full disk: needs a filesystem that fails with ENOSPC under the engine (TestDaemonDiskFull)",
}

func init() {
	// The inspector's page is text/html, which kin-openapi does not decode
	// by default: read as a string, like text/plain.
	openapi3filter.RegisterBodyDecoder("application/x-ndjson", func(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
		b, err := io.ReadAll(body)
		return string(b), err
	})
	openapi3filter.RegisterBodyDecoder("text/html", func(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
		b, err := io.ReadAll(body)
		return string(b), err
	})
}

// specRoutes are the (method, path) -> operationId of the description.
func specRoutes(doc *openapi3.T) map[string]string {
	ops := map[string]string{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			ops[method+" "+path] = op.OperationID
		}
	}
	return ops
}

// TestOpenAPIRegistry: every route of the registry is in the description
// under its operationId, and the description has no operation the
// registry lacks.
func TestOpenAPIRegistry(t *testing.T) {
	doc, err := loadSpec()
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the description is not valid OpenAPI: %v", err)
	}
	inSpec := specRoutes(doc)
	inRegistry := map[string]string{}
	for _, rt := range registry {
		inRegistry[rt.method+" "+rt.docPath()] = rt.op
	}
	for k, op := range inRegistry {
		if got, ok := inSpec[k]; !ok {
			t.Errorf("%s (%s) is served but not in docs/openapi.yaml", k, op)
		} else if got != op {
			t.Errorf("%s: operationId %q in the description, %q in the registry", k, got, op)
		}
	}
	for k, op := range inSpec {
		if _, ok := inRegistry[k]; !ok {
			t.Errorf("%s (%s) is in docs/openapi.yaml but not served", k, op)
		}
	}
}

// TestOpenAPIQueryFields: the Query schema documents exactly the JSON
// query's fields (its additionalProperties false would otherwise make a
// valid client request invalid by the description, or document a field
// the daemon refuses).
func TestOpenAPIQueryFields(t *testing.T) {
	doc, err := loadSpec()
	if err != nil {
		t.Fatal(err)
	}
	props := doc.Components.Schemas["Query"].Value.Properties
	tags := map[string]bool{}
	rt := reflect.TypeFor[wire.Query]()
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		tags[name] = true
		if _, ok := props[name]; !ok {
			t.Errorf("wire.Query.%s (%q) is not in docs/openapi.yaml's Query schema", rt.Field(i).Name, name)
		}
	}
	for name := range props {
		if !tags[name] {
			t.Errorf("docs/openapi.yaml's Query has %q, which the daemon refuses as unknown", name)
		}
	}
}

// TestOpenAPIJSON: GET /v1/openapi.json is the YAML description as JSON.
func TestOpenAPIJSON(t *testing.T) {
	ts, _ := newTestServer(t, defaultMaxBody)
	resp, err := http.Get(ts.URL + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	doc, err := openapi3.NewLoader().LoadFromData(b)
	if err != nil {
		t.Fatalf("the served JSON does not load: %v", err)
	}
	want, _ := loadSpec()
	if len(doc.Paths.Map()) != len(want.Paths.Map()) || doc.Info.Title != want.Info.Title || len(doc.Components.Schemas) != len(want.Components.Schemas) {
		t.Fatalf("served %d paths, %d schemas; the YAML has %d, %d", len(doc.Paths.Map()), len(doc.Components.Schemas), len(want.Paths.Map()), len(want.Components.Schemas))
	}
}

// failingEmbedder fails every call: recalls that embed get 502.
type failingEmbedder struct{}

func (failingEmbedder) Name() string { return "failing" }
func (failingEmbedder) Dim() int     { return 8 }
func (failingEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("the embedding endpoint is down")
}

// replyCase is one request and the status it must get.
type replyCase struct {
	srv          string // which server: open, keys, opening, small, embedfail, hdr
	method, path string
	body         string
	header       map[string]string
	status       int
	// docMethod, for a 405, is the path's documented method: the reply is
	// validated against that operation.
	docMethod string
}

// TestOpenAPIReplies sends every route the requests that provoke each
// reply it documents, errors included, and validates each real reply
// (status, headers, body) against docs/openapi.yaml with kin-openapi.
// A status the description does not list for the operation fails, and so
// does a documented status no request provoked (but notDriven).
func TestOpenAPIReplies(t *testing.T) {
	doc, err := loadSpec()
	if err != nil {
		t.Fatal(err)
	}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	srvs := map[string]string{}
	open, db := newTestServer(t, defaultMaxBody)
	srvs["open"] = open.URL
	if _, err := db.Append(t.Context(), engine.Record{Agent: "a1", Session: "s", Text: "the pool size is 32"}); err != nil {
		t.Fatal(err)
	}
	keyed, kdb := newKeyedServer(t, testKeys)
	srvs["keys"] = keyed.URL
	if _, err := kdb.Append(t.Context(), engine.Record{Agent: "b1", Text: "beta's record"}); err != nil {
		t.Fatal(err)
	}
	opening := httptest.NewServer(newServer(nil, defaultLimits()).routes())
	t.Cleanup(opening.Close)
	srvs["opening"] = opening.URL
	small, _ := newTestServer(t, 200)
	srvs["small"] = small.URL
	fdb, err := engine.Open(t.TempDir(), engine.Options{Embedder: failingEmbedder{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fdb.Close() })
	if _, err := fdb.Append(t.Context(), engine.Record{Agent: "a1", Text: "anything at all"}); err != nil {
		t.Fatal(err)
	}
	fs := httptest.NewServer(newServer(fdb, defaultLimits()).routes())
	t.Cleanup(fs.Close)
	srvs["embedfail"] = fs.URL
	// A server with a small header limit: 431 comes from net/http itself.
	hs := httptest.NewUnstartedServer(newServer(fdb, defaultLimits()).routes())
	hs.Config.MaxHeaderBytes = 1024
	hs.Start()
	t.Cleanup(hs.Close)
	srvs["hdr"] = hs.URL

	big := `{"agent":"a1","text":"` + strings.Repeat("x", 400) + `"}`
	bigHeader := map[string]string{"X-Filler": strings.Repeat("y", 8192)}
	mcpInit := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	mcpCall := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"agent":"a1","query":"pool size"}}}`
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
	var cases []replyCase
	// Replies every route gives the same way.
	for _, rt := range registry {
		path := strings.Replace(rt.docPath(), "{id}", "1", 1)
		other := "POST"
		if rt.method == "POST" {
			other = "GET"
		}
		cases = append(cases,
			replyCase{srv: "open", method: other, path: path, status: 405, docMethod: rt.method},
			replyCase{srv: "hdr", method: rt.method, path: path, header: bigHeader, status: 431},
		)
		if probePath(path) {
			continue
		}
		if rt.method == "POST" {
			// Every body is JSON: a form or text is 415.
			cases = append(cases, replyCase{srv: "open", method: rt.method, path: path, body: `{}`,
				header: map[string]string{"Content-Type": "text/plain"}, status: 415})
		}
		cases = append(cases,
			replyCase{srv: "open", method: rt.method, path: path, header: map[string]string{"Origin": "https://evil.example"}, status: 403},
			replyCase{srv: "opening", method: rt.method, path: path, status: 503},
		)
		if publicPath(path) {
			continue
		}
		cases = append(cases,
			replyCase{srv: "keys", method: rt.method, path: path, status: 401},
		)
	}
	cases = append(cases,
		// Probes.
		replyCase{srv: "open", method: "GET", path: "/v1/live", status: 200},
		replyCase{srv: "open", method: "GET", path: "/v1/ready", status: 200},
		replyCase{srv: "open", method: "GET", path: "/v1/health", status: 200},
		replyCase{srv: "opening", method: "GET", path: "/v1/ready", status: 503},
		replyCase{srv: "opening", method: "GET", path: "/v1/health", status: 503},
		replyCase{srv: "opening", method: "GET", path: "/v1/live", status: 200},
		// Records.
		replyCase{srv: "open", method: "POST", path: "/v1/records", body: `{"agent":"a1","text":"hello"}`, status: 200},
		replyCase{srv: "open", method: "POST", path: "/v1/records", body: `{"records":[{"agent":"a1","text":"one"},{"agent":"a1","text":"two"}]}`, status: 200},
		replyCase{srv: "open", method: "POST", path: "/v1/records", body: `{"agent":"a1"}`, status: 400},
		replyCase{srv: "open", method: "POST", path: "/v1/records", body: ``, status: 400},
		replyCase{srv: "small", method: "POST", path: "/v1/records", body: big, status: 413},
		replyCase{srv: "keys", method: "POST", path: "/v1/records", body: `{"agent":"a1","text":"x"}`, header: bearer("tok-beta"), status: 403},
		replyCase{srv: "keys", method: "POST", path: "/v1/records", body: `{"agent":"a1","text":"x"}`, header: bearer("tok-reader"), status: 403},
		replyCase{srv: "open", method: "GET", path: "/v1/records/1", status: 200},
		replyCase{srv: "open", method: "GET", path: "/v1/records/abc", status: 400},
		replyCase{srv: "open", method: "GET", path: "/v1/records/999", status: 404},
		replyCase{srv: "keys", method: "GET", path: "/v1/records/1", header: bearer("tok-alpha"), status: 404},
		replyCase{srv: "keys", method: "GET", path: "/v1/records/1", header: bearer("tok-writer"), status: 403},
		// Recall.
		replyCase{srv: "open", method: "POST", path: "/v1/recall", body: `{"agent":"a1","text":"pool size","explain":true}`, status: 200},
		replyCase{srv: "open", method: "POST", path: "/v1/recall", body: `{"agent":"a1","text":"what did we say yesterday?","now":"2026-05-01T10:00:00Z"}`, status: 200},
		replyCase{srv: "open", method: "POST", path: "/v1/recall", body: `{"agent":"a1","k":-1}`, status: 400},
		replyCase{srv: "small", method: "POST", path: "/v1/recall", body: big, status: 413},
		replyCase{srv: "keys", method: "POST", path: "/v1/recall", body: `{"agent":"b1","text":"x"}`, header: bearer("tok-alpha"), status: 403},
		replyCase{srv: "keys", method: "POST", path: "/v1/recall", body: `{"text":"beta"}`, header: bearer("tok-beta"), status: 200},
		replyCase{srv: "embedfail", method: "POST", path: "/v1/recall", body: `{"agent":"a1","text":"anything"}`, status: 502},
		// Forget and export.
		replyCase{srv: "open", method: "POST", path: "/v1/forget", body: `{"agent":"a1","ids":[999]}`, status: 200},
		replyCase{srv: "open", method: "POST", path: "/v1/forget", body: `{"sessions":["s"]}`, status: 400},
		replyCase{srv: "small", method: "POST", path: "/v1/forget", body: big, status: 413},
		replyCase{srv: "keys", method: "POST", path: "/v1/forget", body: `{"agent":"b1","ids":[1]}`, header: bearer("tok-alpha"), status: 403},
		replyCase{srv: "keys", method: "POST", path: "/v1/forget", body: `{"ids":[1]}`, header: bearer("tok-gamma"), status: 400},
		replyCase{srv: "keys", method: "POST", path: "/v1/forget", body: `{"ids":[1]}`, header: bearer("tok-reader"), status: 403},
		replyCase{srv: "open", method: "POST", path: "/v1/backup", body: fmt.Sprintf(`{"to":%q}`, filepath.Join(t.TempDir(), "copy")), status: 200},
		replyCase{srv: "open", method: "POST", path: "/v1/backup", body: `{"to":"relative/dir"}`, status: 400},
		replyCase{srv: "small", method: "POST", path: "/v1/backup", body: big, status: 413},
		replyCase{srv: "keys", method: "POST", path: "/v1/backup", body: `{"to":"/tmp/x"}`, header: bearer("tok-alpha"), status: 403},
		replyCase{srv: "open", method: "GET", path: "/v1/export?agent=a1", status: 200},
		replyCase{srv: "keys", method: "GET", path: "/v1/export", header: bearer("tok-beta"), status: 400},
		replyCase{srv: "keys", method: "GET", path: "/v1/export?agent=a1", header: bearer("tok-beta"), status: 403},
		// Feedback and core memory.
		replyCase{srv: "open", method: "POST", path: "/v1/feedback", body: `{"agent":"a1","ids":[1],"signal":1}`, status: 200},
		replyCase{srv: "open", method: "POST", path: "/v1/feedback", body: `{"ids":[1],"signal":-1}`, status: 200},
		replyCase{srv: "open", method: "POST", path: "/v1/feedback", body: `{"agent":"a1","ids":[1],"signal":0}`, status: 400},
		replyCase{srv: "open", method: "POST", path: "/v1/feedback", body: `{"agent":"a1","recall_id":999999,"ids":[1],"signal":1}`, status: 404},
		replyCase{srv: "small", method: "POST", path: "/v1/feedback", body: big, status: 413},
		replyCase{srv: "keys", method: "POST", path: "/v1/feedback", body: `{"agent":"b1","ids":[1],"signal":1}`, header: bearer("tok-alpha"), status: 403},
		replyCase{srv: "open", method: "POST", path: "/v1/consolidate", body: `{"agent":"a1","ids":[1]}`, status: 200},
		replyCase{srv: "open", method: "POST", path: "/v1/consolidate", body: `{"agent":"a1","bogus":1}`, status: 400},
		replyCase{srv: "small", method: "POST", path: "/v1/consolidate", body: big, status: 413},
		replyCase{srv: "keys", method: "POST", path: "/v1/consolidate", body: `{"agent":"b1"}`, header: bearer("tok-alpha"), status: 403},
		replyCase{srv: "open", method: "GET", path: "/v1/core?agent=a1&history=true", status: 200},
		replyCase{srv: "open", method: "GET", path: "/v1/core?agent=a1&history=maybe", status: 400},
		replyCase{srv: "keys", method: "GET", path: "/v1/core?agent=b1", header: bearer("tok-alpha"), status: 403},
		replyCase{srv: "open", method: "POST", path: "/v1/recall", body: `{"agent":"a1","text":"pool size","tier":"core"}`, status: 200},
		// Stats, metrics, the description.
		replyCase{srv: "open", method: "GET", path: "/v1/stats", status: 200},
		replyCase{srv: "keys", method: "GET", path: "/v1/stats", header: bearer("tok-beta"), status: 200},
		replyCase{srv: "keys", method: "GET", path: "/v1/stats", header: bearer("tok-writer"), status: 403},
		replyCase{srv: "open", method: "GET", path: "/metrics", status: 200},
		replyCase{srv: "keys", method: "GET", path: "/metrics", header: bearer("tok-beta"), status: 403},
		replyCase{srv: "open", method: "GET", path: "/v1/openapi.json", status: 200},
		replyCase{srv: "keys", method: "GET", path: "/", status: 200},
		// MCP.
		replyCase{srv: "open", method: "POST", path: "/mcp", body: mcpInit, status: 200},
		replyCase{srv: "open", method: "POST", path: "/mcp", body: mcpCall, status: 200},
		replyCase{srv: "open", method: "POST", path: "/mcp", body: `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, status: 200},
		replyCase{srv: "open", method: "POST", path: "/mcp", body: `{"jsonrpc":"2.0","id":4,"method":"nope"}`, status: 200},
		replyCase{srv: "open", method: "POST", path: "/mcp", body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, status: 202},
		replyCase{srv: "open", method: "POST", path: "/mcp", body: mcpInit, header: map[string]string{"Mcp-Protocol-Version": "1999-01-01"}, status: 400},
		replyCase{srv: "open", method: "POST", path: "/mcp", body: ``, status: 400},
		replyCase{srv: "small", method: "POST", path: "/mcp", body: big, status: 413},
	)

	driven := map[string]map[string]bool{} // op -> statuses
	t.Logf("%d requests", len(cases))
	for _, c := range cases {
		name := fmt.Sprintf("%s %s %s -> %d", c.srv, c.method, c.path, c.status)
		status, hdr, body := send(t, srvs[c.srv]+c.path, c)
		if status != c.status {
			t.Errorf("%s: got %d %s", name, status, body)
			continue
		}
		// The reply is validated against the operation of its path and
		// method (a 405's: the path's documented method).
		method := c.method
		if c.docMethod != "" {
			method = c.docMethod
		}
		vreq, _ := http.NewRequest(method, "http://127.0.0.1:7373"+c.path, nil)
		route, params, err := router.FindRoute(vreq)
		if err != nil {
			t.Errorf("%s: not in the description: %v", name, err)
			continue
		}
		vreq.Header = http.Header{}
		in := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: &openapi3filter.RequestValidationInput{Request: vreq, PathParams: params, Route: route,
				Options: &openapi3filter.Options{ExcludeRequestBody: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}},
			Status: status, Header: hdr,
			Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
		}
		in.SetBodyBytes(body)
		if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
			t.Errorf("%s: the reply does not match the description: %v\nbody: %.400s", name, err, body)
			continue
		}
		op := route.Operation.OperationID
		if driven[op] == nil {
			driven[op] = map[string]bool{}
		}
		driven[op][strconv.Itoa(status)] = true
	}
	// Every documented reply was provoked.
	for _, rt := range registry {
		item := doc.Paths.Find(rt.docPath())
		if item == nil {
			continue // TestOpenAPIRegistry reports it
		}
		op := item.GetOperation(rt.method)
		for code := range op.Responses.Map() {
			if !driven[rt.op][code] && notDriven[code] == "" {
				t.Errorf("%s %s: the documented %s reply was never provoked", rt.method, rt.path, code)
			}
		}
	}
}

// send makes the request of c to url and returns the reply.
func send(t *testing.T, url string, c replyCase) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if c.body != "" {
		rd = strings.NewReader(c.body)
	}
	req, err := http.NewRequest(c.method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if strings.HasSuffix(c.path, "/mcp") {
		req.Header.Set("Accept", "application/json, text/event-stream")
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, bytes.TrimSpace(b)
}
