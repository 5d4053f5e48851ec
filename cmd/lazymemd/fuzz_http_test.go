package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/lazymem/lazymem/engine"
)

// The store FuzzHTTP serves, closed and reopened after every input.
var (
	fuzzHTTPMu  sync.Mutex
	fuzzHTTPDir string
	fuzzHTTPDB  *engine.DB
)

func closeFuzzHTTP() {
	if fuzzHTTPDB != nil {
		fuzzHTTPDB.Close()
		os.RemoveAll(fuzzHTTPDir)
	}
}

// httpSeeds are valid and invalid requests to every route: method, path,
// header lines, body.
var httpSeeds = []struct{ method, path, headers, body string }{
	{"GET", "/v1/live", "", ""},
	{"GET", "/v1/ready", "", ""},
	{"HEAD", "/v1/health", "", ""},
	{"GET", "/v1/stats", "", ""},
	{"POST", "/v1/stats", "", "{}"},
	{"POST", "/v1/records", "Content-Type: application/json", `{"agent":"a","session":"s","role":"user","text":"the pool is 20","meta":{"k":["v"]}}`},
	{"POST", "/v1/records", "", `{"records":[{"agent":"a","text":"x"},{"agent":"b","text":"y","time":"2026-01-01T00:00:00Z"}]}`},
	{"POST", "/v1/records", "", `{"records":[{"agent":"a"}]}`},
	{"POST", "/v1/records", "", `{"agent":"a","text":"x","meta":{"k":7}}`},
	{"POST", "/v1/records", "", "{\"agent\":\"\xff\",\"text\":\"x\"}"},
	{"POST", "/v1/records", "", ""},
	{"POST", "/v1/records", "Transfer-Encoding: chunked", "5\r\n{\"a\":\r\n0\r\n\r\n"},
	{"PUT", "/v1/records", "", `{"agent":"a","text":"x"}`},
	{"GET", "/v1/records/1", "", ""},
	{"GET", "/v1/records/0", "", ""},
	{"GET", "/v1/records/18446744073709551615", "", ""},
	{"GET", "/v1/records/abc", "", ""},
	{"DELETE", "/v1/records/1", "", ""},
	{"POST", "/v1/recall", "", `{"agent":"a","text":"what pool size yesterday?","k":3,"mode":"sparse","explain":true}`},
	{"POST", "/v1/recall", "", `{"agent":"a","agents":["b"],"where":{"k":"v"},"not":{"k":["w"]},"since":"2026-01-01T00:00:00Z","synonyms":{"pool":["connections"]},"recency_half_life":"72h"}`},
	{"POST", "/v1/recall", "", `{"agent":"a","k":"ten"}`},
	{"POST", "/v1/recall", "", `{"agent":"a","mode":"dense","candidates":100000}`},
	{"POST", "/v1/recall", "", `[]`},
	{"GET", "/v1/recall", "", ""},
	{"POST", "/mcp", "Accept: application/json, text/event-stream", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`},
	{"POST", "/mcp", "Mcp-Protocol-Version: 2025-06-18", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`},
	{"POST", "/mcp", "", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"remember","arguments":{"agent":"a","text":"x"}}}`},
	{"POST", "/mcp", "", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"recall","arguments":{"agent":"a","query":"x","k":"ten"}}}`},
	{"POST", "/mcp", "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
	{"POST", "/mcp", "", `{"jsonrpc":"2.0","id":5,"result":{}}`},
	{"POST", "/mcp", "Mcp-Protocol-Version: garbage", `{"jsonrpc":"2.0","id":6,"method":"ping"}`},
	{"GET", "/mcp", "", ""},
	{"POST", "/mcp", "", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"consolidate","arguments":{"agent":"a","ids":[1]}}}`},
	{"POST", "/mcp", "", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"feedback","arguments":{"agent":"a","ids":[1],"useful":false}}}`},
	{"POST", "/mcp", "", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"list_core","arguments":{"agent":"a","history":true}}}`},
	{"POST", "/v1/feedback", "", `{"agent":"a","ids":[1],"signal":1}`},
	{"POST", "/v1/feedback", "", `{"agent":"a","recall_id":18446744073709551615,"ids":[0],"signal":-1}`},
	{"POST", "/v1/feedback", "", `{"ids":[],"signal":5}`},
	{"POST", "/v1/consolidate", "", `{"agent":"a","session":"s","ids":[1,2,18446744073709551615]}`},
	{"POST", "/v1/consolidate", "Content-Type: text/plain", `{"agent":"a"}`},
	{"GET", "/v1/core?agent=a&history=true", "", ""},
	{"GET", "/v1/core?agent=&history=1", "", ""},
	{"OPTIONS", "/v1/recall", "Origin: http://localhost:3000\nAccess-Control-Request-Method: POST", ""},
	{"POST", "/v1/records", "Origin: https://evil.example", `{"agent":"a","text":"x"}`},
	{"POST", "/v1/records", "Host: evil.example", `{"agent":"a","text":"x"}`},
	{"GET", "/v1/stats", "Authorization: Bearer nope", ""},
	{"GET", "/nope", "", ""},
	{"GET", "//v1/stats", "", ""},
	{"GET", "/v1/../v1/stats", "", ""},
	{"GET", "/v1/records/", "", ""},
	{"GET", "*", "", ""},
	{"CONNECT", "localhost:7373", "", ""},
	{"BREW", "/v1/stats", "", ""},
	{"GET", "/metrics", "", ""},
	{"POST", "/metrics", "", "{}"},
	{"GET", "/v1/openapi.json", "X-Request-Id: trace-1", ""},
	{"GET", "/", "", ""},
	{"POST", "/", "Origin: http://127.0.0.1:7373", "{}"},
	{"GET", "/v1/stats", "X-Request-Id: has space\u0000", ""},
	{"POST", "/mcp", "", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list","arguments":{"agent":"a","limit":-1}}}`},
	{"POST", "/mcp", "", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"add","arguments":{"agent":"a","text":"y","session":"s"}}}`},
	{"POST", "/mcp", "", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"search","arguments":{"agent":"a","query":"y","budget":-3}}}`},
}

// FuzzHTTP sends any method, path, headers and body to the daemon's
// handler on a real store: the reply is a 2xx or a 4xx (or a documented
// 5xx: 503 busy or timeout, 507 disk full), never a 500 or a panic; every
// error is a JSON error; and afterwards the store closes and reopens.
func FuzzHTTP(f *testing.F) {
	for _, s := range httpSeeds {
		f.Add(s.method, s.path, s.headers, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, method, path, headers string, body []byte) {
		var raw bytes.Buffer
		fmt.Fprintf(&raw, "%s %s HTTP/1.1\r\n", method, path)
		hasHost, chunked := false, false
		for _, line := range strings.Split(headers, "\n") {
			line = strings.TrimRight(line, "\r")
			if line == "" {
				continue
			}
			name, _, _ := strings.Cut(line, ":")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "host":
				hasHost = true
			case "transfer-encoding":
				chunked = true
			}
			raw.WriteString(line + "\r\n")
		}
		if !hasHost {
			raw.WriteString("Host: localhost:7373\r\n")
		}
		if !chunked {
			fmt.Fprintf(&raw, "Content-Length: %d\r\n", len(body))
		}
		raw.WriteString("\r\n")
		raw.Write(body)
		req, err := http.ReadRequest(bufio.NewReader(&raw))
		if err != nil {
			return // the HTTP server refuses it before any handler runs
		}

		fuzzHTTPMu.Lock()
		defer fuzzHTTPMu.Unlock()
		if fuzzHTTPDB == nil {
			if fuzzHTTPDir, err = os.MkdirTemp("", "lazymemd-fuzzhttp-*"); err != nil {
				t.Fatal(err)
			}
			if fuzzHTTPDB, err = engine.Open(fuzzHTTPDir, engine.Options{}); err != nil {
				t.Fatal(err)
			}
		}
		lim := defaultLimits()
		lim.maxBody = 1 << 20
		s := newServer(fuzzHTTPDB, lim)
		s.mcpAgent = "fuzz"
		s.origins["http://localhost:3000"] = true
		w := httptest.NewRecorder()
		s.routes().ServeHTTP(w, req)

		var e errorReply
		isErr := w.Code >= 400
		if isErr {
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error.Code == "" {
				if !(w.Code == http.StatusBadRequest && req.URL.Path == "/mcp") { // the MCP transport's 400 is a JSON-RPC error
					t.Fatalf("%s %q: %d with a body that is not a JSON error: %q", method, path, w.Code, w.Body.Bytes())
				}
			}
		}
		switch {
		case w.Code >= 200 && w.Code < 300, w.Code >= 400 && w.Code < 500:
		case w.Code == http.StatusServiceUnavailable && (e.Error.Code == "busy" || e.Error.Code == "timeout"):
		case w.Code == http.StatusInsufficientStorage && e.Error.Code == "disk_full":
		default:
			t.Fatalf("%s %q %q %q: %d %s", method, path, headers, body, w.Code, w.Body.Bytes())
		}

		if err := fuzzHTTPDB.Close(); err != nil {
			t.Fatalf("close after %s %q: %v", method, path, err)
		}
		db, err := engine.Open(fuzzHTTPDir, engine.Options{})
		if err != nil {
			fuzzHTTPDB = nil
			t.Fatalf("reopen after %s %q: %v", method, path, err)
		}
		fuzzHTTPDB = db
	})
}
