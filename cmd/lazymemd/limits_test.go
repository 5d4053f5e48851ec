package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lazymem/lazymem/engine"
)

// limitServer serves a fresh store with lim; the store closes with the test.
func limitServer(t *testing.T, lim limits) (*httptest.Server, *server) {
	t.Helper()
	db, err := engine.Open(t.TempDir(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(db, lim)
	ts := httptest.NewServer(s.routes())
	t.Cleanup(func() {
		ts.Close()
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	return ts, s
}

// waitFor polls cond until it holds: the tests wait for a state, not for
// a time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; !cond(); i++ {
		if i == 20000 { // about 20 s: something is stuck
			t.Fatalf("never happened: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestLimitsValidate(t *testing.T) {
	if err := defaultLimits().validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-batch", "0"}, "--max-batch 0"},
		{[]string{"--max-inflight-records", "-1"}, "--max-inflight-records -1"},
		{[]string{"--max-decode-bytes", "0"}, "--max-decode-bytes 0"},
		{[]string{"--max-synonyms", "0"}, "--max-synonyms"},
		{[]string{"--max-synonym-bytes", "0"}, "--max-synonym-bytes"},
		{[]string{"--max-agents", "0"}, "--max-agents"},
		{[]string{"--request-timeout", "0s"}, "--request-timeout"},
		{[]string{"--max-batch", "20", "--max-inflight-records", "10"}, "over --max-inflight-records"},
		{[]string{"--max-body", "2000", "--max-decode-bytes", "1000"}, "over --max-decode-bytes"},
		{[]string{"--max-conns", "0"}, "--max-conns"},
		{[]string{"--read-header-timeout", "0s"}, "--read-header-timeout"},
		{[]string{"--max-header-bytes", "0"}, "--max-header-bytes"},
	} {
		_, err := parseArgs(append([]string{"--db", "d"}, c.args...), io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error naming %q", c.args, err, c.want)
		}
	}
	cfg, err := parseArgs([]string{"--db", "d", "--max-batch", "5", "--max-agents", "3", "--request-timeout", "2s", "--max-conns", "7"}, io.Discard)
	if err != nil || cfg.lim.maxBatch != 5 || cfg.lim.maxAgents != 3 || cfg.lim.requestTimeout != 2*time.Second || cfg.maxConns != 7 {
		t.Fatalf("%+v %v", cfg, err)
	}
}

// TestReadBody: the body reader reserves what it holds, refuses what is
// over the limit or over the budget, and keeps nothing reserved when it
// fails.
func TestReadBody(t *testing.T) {
	b := newBudget(1000)
	body, held, err := readBody(strings.NewReader("hello"), 100, 5, b)
	if err != nil || string(body) != "hello" || held != 6 || b.inUse() != 6 {
		t.Fatalf("known length: %q %d %v, in use %d", body, held, err, b.inUse())
	}
	b.give(held)
	// Unknown length (chunked): reserved in steps, still within the limit.
	long := strings.Repeat("x", 300)
	body, held, err = readBody(strings.NewReader(long), 500, -1, b)
	if err != nil || string(body) != long || held < 300 || b.inUse() != held {
		t.Fatalf("unknown length: %d bytes, held %d, %v", len(body), held, err)
	}
	b.give(held)
	for _, c := range []struct {
		name        string
		body        string
		limit, hint int64
		want        error
	}{
		{"announced over the limit", "", 10, 11, errBodyTooLarge},
		{"over the limit, unknown length", strings.Repeat("y", 11), 10, -1, errBodyTooLarge},
		{"longer than announced", strings.Repeat("y", 20), 10, 5, errBodyTooLarge},
		{"over the budget", strings.Repeat("z", 2000), 5000, 2000, errBodyBusy},
		{"over the budget, unknown length", strings.Repeat("z", 2000), 5000, -1, errBodyBusy},
	} {
		if _, _, err := readBody(strings.NewReader(c.body), c.limit, c.hint, b); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if b.inUse() != 0 {
			t.Fatalf("%s: %d bytes stay reserved", c.name, b.inUse())
		}
	}
}

// TestLimitBatchAndQuery: a batch, a synonym table or an agent list over
// its limit is refused with 413 naming the field and the flag, and writes
// nothing.
func TestLimitBatchAndQuery(t *testing.T) {
	lim := defaultLimits()
	lim.maxBatch, lim.maxAgents, lim.maxSynonyms, lim.maxSynonymBytes = 2, 2, 2, 20
	ts, s := limitServer(t, lim)
	for _, c := range []struct {
		path, body, field, flag string
	}{
		{"/v1/records", `{"records":[{"agent":"a","text":"1"},{"agent":"a","text":"2"},{"agent":"a","text":"3"}]}`, "records", "--max-batch"},
		{"/v1/recall", `{"agent":"a","agents":["b","c"],"text":"x"}`, "query.agents", "--max-agents"},
		{"/v1/recall", `{"agent":"a","text":"x","synonyms":{"a":["b"],"c":["d"],"e":["f"]}}`, "query.synonyms", "--max-synonyms"},
		{"/v1/recall", `{"agent":"a","text":"x","synonyms":{"a":["0123456789012345678901"]}}`, "query.synonyms", "--max-synonym-bytes"},
		{"/v1/recall", `{"agent":"a","text":"x","max_dense_scan":100001}`, "query.max_dense_scan", "--max-dense-scan"},
	} {
		var e errorReply
		if st := call(t, "POST", ts.URL+c.path, c.body, &e); st != http.StatusRequestEntityTooLarge || e.Error.Code != "too_large" ||
			e.Error.Field != c.field || !strings.Contains(e.Error.Message, c.flag) {
			t.Errorf("%s %s: %d %+v, want 413 naming %s and %s", c.path, c.body, st, e.Error, c.field, c.flag)
		}
	}
	if s.db.Metrics().Log.Next != 1 {
		t.Fatal("a refused batch wrote")
	}
	// At the limits, all pass.
	for _, c := range []struct{ path, body string }{
		{"/v1/records", `{"records":[{"agent":"a","text":"1"},{"agent":"a","text":"2"}]}`},
		{"/v1/recall", `{"agent":"a","agents":["b"],"text":"x","synonyms":{"a":["b"],"c":["0123456789012345"]}}`},
	} {
		if st := call(t, "POST", ts.URL+c.path, c.body, nil); st != 200 {
			t.Errorf("%s %s: %d", c.path, c.body, st)
		}
	}
}

// TestLimitDenseScan: the daemon's --max-dense-scan bounds a dense recall
// whose query names no bound, and a query may lower it.
func TestLimitDenseScan(t *testing.T) {
	lim := defaultLimits()
	lim.maxDenseScan = 3
	ts, _ := limitServer(t, lim)
	if st := call(t, "POST", ts.URL+"/v1/records", `{"records":[{"agent":"a","text":"1"},{"agent":"a","text":"2"},{"agent":"a","text":"3"},{"agent":"a","text":"4"}]}`, nil); st != 200 {
		t.Fatalf("append: %d", st)
	}
	for _, c := range []struct {
		body string
		want int
	}{
		{`{"agent":"a","text":"x","mode":"dense"}`, http.StatusRequestEntityTooLarge}, // 4 records, the daemon's bound 3
		{`{"agent":"a","text":"x","mode":"dense","max_dense_scan":2}`, http.StatusRequestEntityTooLarge},
		{`{"agent":"a","text":"x","mode":"dense","sessions":["none"]}`, 200},                             // 0 records pass the filters
		{`{"agent":"a","text":"x","mode":"dense","max_dense_scan":4}`, http.StatusRequestEntityTooLarge}, // over --max-dense-scan
	} {
		var e errorReply
		if st := call(t, "POST", ts.URL+"/v1/recall", c.body, &e); st != c.want {
			t.Errorf("%s: %d %+v, want %d", c.body, st, e.Error, c.want)
		}
	}
}

// TestLimitInflight: when the records being appended fill the budget, an
// append is refused with 503 busy and Retry-After, writes nothing, and
// passes once the budget frees up.
func TestLimitInflight(t *testing.T) {
	lim := defaultLimits()
	lim.maxInflight, lim.maxBatch = 10, 10
	ts, s := limitServer(t, lim)
	if !s.records.take(9) { // appends in flight elsewhere
		t.Fatal("take")
	}
	body := `{"records":[{"agent":"a","text":"1"},{"agent":"a","text":"2"}]}`
	resp, err := http.Post(ts.URL+"/v1/records", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
		!strings.Contains(string(b), `"busy"`) || !strings.Contains(string(b), "--max-inflight-records") {
		t.Fatalf("full: %d %v %s", resp.StatusCode, resp.Header, b)
	}
	if s.db.Metrics().Log.Next != 1 {
		t.Fatal("a refused append wrote")
	}
	// The MCP tool is held to the same budget (one free slot: it passes).
	if st, r := rpc(t, ts.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"remember","arguments":{"agent":"a","text":"x"}}}`); st != 200 || strings.Contains(string(r.Result), `"isError":true`) {
		t.Fatalf("remember with a free slot: %d %s", st, r.Result)
	}
	s.records.give(9)
	if st := call(t, "POST", ts.URL+"/v1/records", body, nil); st != 200 {
		t.Fatalf("after the budget freed: %d", st)
	}
	if s.records.inUse() != 0 {
		t.Fatalf("%d records stay reserved", s.records.inUse())
	}
}

// TestLimitDecode: a request whose body is being read holds its size in
// the shared budget; another that does not fit is refused with 503 busy,
// and passes once the first is done.
func TestLimitDecode(t *testing.T) {
	lim := defaultLimits()
	lim.maxBody, lim.maxDecode = 1000, 1000
	ts, s := limitServer(t, lim)
	// A client announces 900 bytes and sends them slowly.
	first := fmt.Sprintf(`{"agent":"a","text":"%s"}`, strings.Repeat("w", 900-len(`{"agent":"a","text":""}`)))
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/records HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", ts.Listener.Addr(), len(first), first[:10])
	waitFor(t, "the first body holds the budget", func() bool { return s.decoding.inUse() > 0 })

	resp, err := http.Post(ts.URL+"/v1/recall", "application/json", strings.NewReader(`{"agent":"a","text":"`+strings.Repeat("q", 200)+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "--max-decode-bytes") {
		t.Fatalf("second body while the first holds the budget: %d %s", resp.StatusCode, b)
	}
	io.WriteString(conn, first[10:])
	r, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != 200 {
		t.Fatalf("the first: %d", r.StatusCode)
	}
	waitFor(t, "the budget is given back", func() bool { return s.decoding.inUse() == 0 })
	if st := call(t, "POST", ts.URL+"/v1/recall", `{"agent":"a","text":"`+strings.Repeat("q", 200)+`"}`, nil); st != 200 {
		t.Fatalf("after the first finished: %d", st)
	}
}

// TestRequestTimeout: a request's work stops at the request timeout and
// gets 503 naming the flag.
func TestRequestTimeout(t *testing.T) {
	lim := defaultLimits()
	lim.requestTimeout = time.Nanosecond // expired before the handler starts
	ts, _ := limitServer(t, lim)
	var e errorReply
	if st := call(t, "POST", ts.URL+"/v1/recall", `{"agent":"a","text":"x"}`, &e); st != http.StatusServiceUnavailable ||
		e.Error.Code != "timeout" || !strings.Contains(e.Error.Message, "--request-timeout") {
		t.Fatalf("%d %+v", st, e.Error)
	}
}

// fakeListener hands out the connections put into it and counts Accept
// calls.
type fakeListener struct {
	conns   chan net.Conn
	accepts int
	closed  chan struct{}
}

func (f *fakeListener) Accept() (net.Conn, error) {
	f.accepts++
	select {
	case c := <-f.conns:
		return c, nil
	case <-f.closed:
		return nil, net.ErrClosed
	}
}
func (f *fakeListener) Close() error   { close(f.closed); return nil }
func (f *fakeListener) Addr() net.Addr { return &net.TCPAddr{} }

// TestLimitListener: with every slot held, Accept waits without touching
// the inner listener (no file descriptor is taken), resumes when a
// connection closes, and returns when the listener closes.
func TestLimitListener(t *testing.T) {
	inner := &fakeListener{conns: make(chan net.Conn, 3), closed: make(chan struct{})}
	for range 3 {
		a, b := net.Pipe()
		defer b.Close()
		inner.conns <- a
	}
	l := newLimitListener(inner, 1)
	c1, err := l.Accept()
	if err != nil || l.open() != 1 {
		t.Fatal(err)
	}
	got := make(chan net.Conn)
	go func() {
		c, _ := l.Accept()
		got <- c
	}()
	waitFor(t, "the second Accept waits for a slot", func() bool { return l.waiting.Load() == 1 })
	if inner.accepts != 1 {
		t.Fatalf("a waiting Accept called the inner listener: %d calls", inner.accepts)
	}
	c1.Close()
	c1.Close() // a second Close gives nothing back twice
	c2 := <-got
	if c2 == nil || l.open() != 1 {
		t.Fatalf("after a close: %v, %d open", c2, l.open())
	}
	go func() {
		c, _ := l.Accept()
		got <- c
	}()
	waitFor(t, "the third Accept waits", func() bool { return l.waiting.Load() == 1 })
	l.Close()
	if c := <-got; c != nil {
		t.Fatal("Accept returned a connection after Close")
	}
	c2.Close()
}

// TestConnLimitServe: the daemon serves at most --max-conns connections;
// a client over it is served once another disconnects.
func TestConnLimitServe(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.maxConns = 1
	url, stop := startServe(t, cfg)
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	// startServe's readiness probe is closed; hold the one slot.
	host := strings.TrimPrefix(url, "http://")
	a, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(a, "GET /v1/health HTTP/1.1\r\nHost: %s\r\n\r\n", host)
	ra := bufio.NewReader(a)
	resp, err := http.ReadResponse(ra, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("first connection: %v %v", resp, err)
	}
	resp.Body.Close()
	b, err := net.Dial("tcp", host) // the kernel queues it
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	fmt.Fprintf(b, "GET /v1/health HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", host)
	a.Close()
	resp, err = http.ReadResponse(bufio.NewReader(b), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("queued connection after the first closed: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestHTTPServerConfig: the connection flags reach the HTTP server.
func TestHTTPServerConfig(t *testing.T) {
	cfg, err := parseArgs([]string{"--db", "d", "--read-header-timeout", "3s", "--read-timeout", "4s", "--idle-timeout", "5s", "--max-header-bytes", "6000"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv := newHTTPServer(cfg, http.NotFoundHandler(), t.Context(), discardLogger())
	if srv.ReadHeaderTimeout != 3*time.Second || srv.ReadTimeout != 4*time.Second || srv.IdleTimeout != 5*time.Second || srv.MaxHeaderBytes != 6000 {
		t.Fatalf("%+v", srv)
	}
	if srv.BaseContext(nil) != t.Context() {
		t.Fatal("requests do not run under the daemon's context")
	}
}

// TestSlowloris: a client that never finishes its headers is disconnected
// after --read-header-timeout, without a request reaching a handler.
func TestSlowloris(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.readHeaderTimeout = 50 * time.Millisecond
	url, stop := startServe(t, cfg)
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "POST /v1/records HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
	// A safety net, not a measurement: the server must hang up long before.
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	b, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("a client that never finished its headers kept its connection")
	}
	if len(b) > 0 && !bytes.HasPrefix(b, []byte("HTTP/1.1 408")) && !bytes.HasPrefix(b, []byte("HTTP/1.1 400")) {
		t.Fatalf("reply to a stalled header block: %q", b)
	}
}
