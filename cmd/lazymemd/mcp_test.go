package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// rpc posts one JSON-RPC message to /mcp and returns the HTTP status and
// the decoded response (zero for a 202).
func rpc(t *testing.T, url, body string) (int, rpcReplyT) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/mcp", strings.NewReader(body))
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out rpcReplyT
	if resp.StatusCode == http.StatusAccepted {
		if len(b) != 0 {
			t.Fatalf("202 with a body: %s", b)
		}
		return resp.StatusCode, out
	}
	if err := json.Unmarshal(b, &out); err != nil || out.JSONRPC != "2.0" {
		t.Fatalf("%s: not a JSON-RPC response: %s (%v)", body, b, err)
	}
	if (out.Result == nil) == (out.Error == nil) {
		t.Fatalf("%s: want exactly one of result and error: %s", body, b)
	}
	return resp.StatusCode, out
}

type rpcReplyT struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcError       `json:"error"`
}

type toolReplyT struct {
	Content []struct {
		Type, Text string
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

func TestMCP(t *testing.T) {
	ts, db := newTestServer(t, defaultMaxBody)
	// The handshake.
	st, r := rpc(t, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	var init struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		Capabilities    map[string]json.RawMessage `json:"capabilities"`
		ServerInfo      struct{ Name string }      `json:"serverInfo"`
	}
	if st != 200 || string(r.ID) != "1" || json.Unmarshal(r.Result, &init) != nil || init.ProtocolVersion != "2025-06-18" || init.Capabilities["tools"] == nil || init.ServerInfo.Name != "lazymemd" {
		t.Fatalf("initialize: %d %s %+v", st, r.Result, r.Error)
	}
	if _, r := rpc(t, ts.URL, `{"jsonrpc":"2.0","id":"x","method":"initialize","params":{"protocolVersion":"1999-01-01"}}`); !strings.Contains(string(r.Result), mcpVersions[0]) || string(r.ID) != `"x"` {
		t.Fatalf("an unknown version is answered with the newest: %s", r.Result)
	}
	if st, _ := rpc(t, ts.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); st != http.StatusAccepted {
		t.Fatalf("notification: %d", st)
	}
	if _, r := rpc(t, ts.URL, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); string(r.Result) != "{}" {
		t.Fatalf("ping: %s", r.Result)
	}
	_, r = rpc(t, ts.URL, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	var list struct{ Tools []mcpTool }
	if json.Unmarshal(r.Result, &list) != nil || len(list.Tools) != 11 || list.Tools[1].Name != "remember" || list.Tools[3].Name != "recall" || list.Tools[1].InputSchema["type"] != "object" {
		t.Fatalf("tools/list: %s", r.Result)
	}

	call := func(id int, name, args string) toolReplyT {
		t.Helper()
		_, r := rpc(t, ts.URL, `{"jsonrpc":"2.0","id":`+string(rune('0'+id))+`,"method":"tools/call","params":{"name":"`+name+`","arguments":`+args+`}}`)
		var tr toolReplyT
		if r.Error != nil || json.Unmarshal(r.Result, &tr) != nil || len(tr.Content) == 0 || tr.Content[0].Type != "text" {
			t.Fatalf("tools/call %s %s: %s %+v", name, args, r.Result, r.Error)
		}
		return tr
	}
	tr := call(4, "remember", `{"agent":"a1","session":"s1","role":"user","text":"We chose Postgres 16 for the billing service.","time":"2026-04-30T10:00:00Z"}`)
	if tr.IsError || !strings.Contains(tr.Content[0].Text, "memory 1") {
		t.Fatalf("remember: %+v", tr)
	}
	tr = call(5, "recall", `{"agent":"a1","query":"which database did we choose for billing?","k":3}`)
	if tr.IsError || !strings.Contains(tr.Content[0].Text, "Postgres 16") || !strings.Contains(string(tr.StructuredContent), `"memories"`) {
		t.Fatalf("recall: %+v", tr)
	}
	// Tool failures are results with isError, naming the field.
	for _, c := range []struct{ name, args, want string }{
		{"remember", `{"text":"no agent and no --mcp-agent"}`, "record.agent: missing"},
		{"remember", `{"agent":"a1","text":"x","time":"noon"}`, `"time"`},
		{"recall", `{"query":"x"}`, "query.agent: missing"},
		{"recall", `{"agent":"a1","query":"x","k":-2}`, "query.k"},
		{"recall", `{"agent":"a1","query":"x","since":"yesterday"}`, `"since"`},
	} {
		tr := call(6, c.name, c.args)
		if !tr.IsError || !strings.Contains(tr.Content[0].Text, c.want) {
			t.Errorf("%s %s: %+v, want isError and %q", c.name, c.args, tr, c.want)
		}
	}
	if m := db.Metrics(); m.Log.Next != 2 {
		t.Fatalf("failed tool calls wrote: next id %d", m.Log.Next)
	}
	// Protocol errors.
	for _, c := range []struct {
		body string
		code int
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"resources/list"}`, rpcMethodNotFound},
		{`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"erase","arguments":{}}}`, rpcInvalidParams},
		{`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"remember","arguments":{"agent":"a1"}}}`, rpcInvalidParams},
		{`{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"recall","arguments":{"agent":"a1","query":"x","limit":3}}}`, rpcInvalidParams},
		{`{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"recall","arguments":["x"]}}`, rpcInvalidParams},
		{`{"jsonrpc":"2.0","id":16}`, rpcInvalidRequest},
		{`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":"x"}`, rpcInvalidParams},
		{`{"jsonrpc":"1.0","id":10,"method":"ping"}`, rpcInvalidRequest},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, rpcInvalidRequest},
		{`[{"jsonrpc":"2.0","id":11,"method":"ping"}]`, rpcInvalidRequest},
		{`{"jsonrpc":"2.0","id":12,`, rpcParseError},
		{`"ping"`, rpcInvalidRequest},
	} {
		if _, r := rpc(t, ts.URL, c.body); r.Error == nil || r.Error.Code != c.code || r.Error.Message == "" {
			t.Errorf("%s: %+v, want code %d", c.body, r.Error, c.code)
		}
	}
	if st := call405(t, ts.URL+"/mcp"); st != http.StatusMethodNotAllowed {
		t.Fatalf("GET /mcp: %d, want 405 (no event stream)", st)
	}
}

// TestMCPDefaultAgent: with --mcp-agent, tool calls may leave the agent out.
func TestMCPDefaultAgent(t *testing.T) {
	ts2, _ := newTestServerAgent(t, defaultMaxBody, "me")
	_, r := rpc(t, ts2.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"remember","arguments":{"text":"my cat is called Miso"}}}`)
	if !strings.Contains(string(r.Result), `memory 1 of agent \"me\"`) {
		t.Fatalf("remember: %s %+v", r.Result, r.Error)
	}
	_, r = rpc(t, ts2.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"recall","arguments":{"query":"what is my cat called?"}}}`)
	if !strings.Contains(string(r.Result), "Miso") {
		t.Fatalf("recall: %s", r.Result)
	}
}

func call405(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// FuzzMCP: whatever is posted to /mcp, the reply is a JSON-RPC response
// with exactly one of result and error, or 202 with no body; never a 5xx
// or a panic.
func FuzzMCP(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"remember","arguments":{"text":"x"}}}`,
		`{"jsonrpc":"2.0","id":"4","method":"tools/call","params":{"name":"recall","arguments":{"query":"x","k":2,"where":{"a":"b"}}}}`,
		`[{"jsonrpc":"2.0","id":5,"method":"ping"}]`, `{"jsonrpc":"2.0","id":null}`, `{`,
		`{"jsonrpc":"2.0","id":6,"result":{}}`, `{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"no"}}`,
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"recall","arguments":{"k":"ten"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzOnce.Do(openFuzzStore)
		w := httptest.NewRecorder()
		fuzzSrv.ServeHTTP(w, localRequest("POST", "/mcp", body))
		switch {
		case w.Code == http.StatusAccepted:
			if w.Body.Len() != 0 {
				t.Fatalf("%q: 202 with a body %q", body, w.Body.Bytes())
			}
		case w.Code == http.StatusOK:
			var r rpcReplyT
			if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil || r.JSONRPC != "2.0" || (r.Result == nil) == (r.Error == nil) {
				t.Fatalf("%q: not one JSON-RPC response: %s", body, w.Body.Bytes())
			}
		default:
			t.Fatalf("%q: %d %s", body, w.Code, w.Body.Bytes())
		}
	})
}

// TestMCPMalformed: the transport's and JSON-RPC's edge cases. A protocol
// revision header this server does not speak is 400; a response or a
// notification sent to the server is 202 with no body; arguments that do
// not fit the tool's schema are invalid params naming the argument (not a
// Go decoding error).
func TestMCPMalformed(t *testing.T) {
	ts, db := newTestServer(t, defaultMaxBody)
	post := func(body string, header map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	for _, v := range []string{"garbage", "2025-13-45", "", "2026-07-28", "2025-06-18, 2025-03-26"} {
		st, b := post(ping, map[string]string{"Mcp-Protocol-Version": v})
		if st != http.StatusBadRequest || !strings.Contains(b, "Mcp-Protocol-Version") {
			t.Errorf("Mcp-Protocol-Version %q: %d %s, want 400", v, st, b)
		}
	}
	for _, v := range mcpVersions {
		if st, b := post(ping, map[string]string{"Mcp-Protocol-Version": v}); st != 200 || !strings.Contains(b, `"result":{}`) {
			t.Errorf("Mcp-Protocol-Version %q: %d %s", v, st, b)
		}
	}
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,                                // a response
		`{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"nope"}}`, // an error response
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,              // a notification
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
	} {
		if st, b := post(body, nil); st != http.StatusAccepted || b != "" {
			t.Errorf("%s: %d %q, want 202 and no body", body, st, b)
		}
	}
	for _, c := range []struct{ args, want string }{
		{`{"agent":"a1"}`, `recall arguments: "query" is required`},
		{`{"agent":"a1","query":null}`, `"query" is required`},
		{`{"agent":"a1","query":"x","k":"ten"}`, `"k" must be an integer, got a string "ten"`},
		{`{"agent":"a1","query":"x","k":2.5}`, `"k" must be an integer, got a number`},
		{`{"agent":"a1","query":7}`, `"query" must be a string, got an integer`},
		{`{"agent":"a1","query":"x","where":"p"}`, `"where" must be an object`},
		{`{"agent":"a1","query":"x","limit":3}`, `unknown argument "limit"`},
		{`"x"`, `want a JSON object`},
	} {
		_, r := rpc(t, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall","arguments":`+c.args+`}}`)
		if r.Error == nil || r.Error.Code != rpcInvalidParams || !strings.Contains(r.Error.Message, c.want) || strings.Contains(r.Error.Message, "json:") {
			t.Errorf("recall %s: %+v, want invalid params with %q", c.args, r.Error, c.want)
		}
	}
	_, r := rpc(t, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"remember","arguments":{"agent":"a","text":["x"]}}}`)
	if r.Error == nil || r.Error.Code != rpcInvalidParams || !strings.Contains(r.Error.Message, `"text" must be a string`) {
		t.Errorf("remember with an array text: %+v", r.Error)
	}
	// An integer written as 1e1 is an integer (JSON Schema counts it so).
	if _, r := rpc(t, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall","arguments":{"agent":"a1","query":"x","k":1e1}}}`); r.Error != nil {
		t.Errorf("k 1e1: %+v", r.Error)
	}
	if db.Metrics().Log.Next != 1 {
		t.Fatal("a malformed call wrote")
	}
}
