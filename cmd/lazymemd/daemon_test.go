package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lazymem/lazymem/cmd/internal/wire"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/internal/logbuf"
)

// childEnv, when set, makes the test binary run main (the crash test's
// daemon).
const childEnv = "LAZYMEMD_TEST_CHILD"

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// testConfig is the command line's defaults for a store in dir.
func testConfig(dir string) config {
	cfg, err := parseArgs([]string{"--db", dir, "--shutdown-timeout", "5s", "--quiet"}, io.Discard)
	if err != nil {
		panic(err)
	}
	return cfg
}

func TestParseArgs(t *testing.T) {
	cfg, err := parseArgs([]string{"--db", "d"}, io.Discard)
	if err != nil || cfg.addr != defaultAddr || cfg.lim != defaultLimits() || cfg.embedder != "hash" || cfg.shutdown != defaultShutdown {
		t.Fatalf("defaults: %+v, %v", cfg, err)
	}
	for _, args := range [][]string{{}, {"--db", "d", "extra"}, {"--db", "d", "--max-body", "0"}, {"--db", "d", "--shutdown-timeout", "-1s"}, {"--nope"}} {
		if _, err := parseArgs(args, io.Discard); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
	if wm := cfg.workingMemory(); wm.Disable || wm.PerMinute != engine.DefaultWorkingMemoryPerMinute {
		t.Errorf("default working memory: %+v", wm)
	}
	if cfg, err := parseArgs([]string{"--db", "d", "--working-memory", "-1"}, io.Discard); err != nil || !cfg.workingMemory().Disable {
		t.Errorf("--working-memory -1: %+v, %v", cfg.workingMemory(), err)
	}
	if _, err := parseArgs([]string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v", err)
	}
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"--addr", "127.0.0.1:0"}, &stderr); code != 2 || !strings.Contains(stderr.String(), "--db is required") {
		t.Errorf("no --db: exit %d, %q", code, stderr.String())
	}
	stderr.Reset()
	if code := run(context.Background(), []string{"--db", t.TempDir(), "--addr", "127.0.0.1:0", "--embedder", "bert"}, &stderr); code != 1 || !strings.Contains(stderr.String(), `bad --embedder "bert"`) {
		t.Errorf("bad embedder: exit %d, %q", code, stderr.String())
	}
}

// startServe runs serve on a free port until the returned stop is called;
// stop returns serve's error.
func startServe(t testing.TB, cfg config) (url string, stop func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, cfg, ln, io.Discard)
	}()
	url = "http://" + ln.Addr().String()
	// No keep-alive: the probe must not hold a connection slot.
	probe := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for i := 0; ; i++ {
		resp, err := probe.Get(url + "/v1/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-done:
			t.Fatalf("serve ended before serving: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	return url, func() error { cancel(); return <-done }
}

// TestServeRestart: a graceful shutdown closes the store; a second daemon
// on the same directory serves what the first acknowledged, and recalls
// without re-embedding (the embedding cache is on disk).
func TestServeRestart(t *testing.T) {
	dir := t.TempDir()
	url, stop := startServe(t, testConfig(dir))
	var ids struct{ IDs []uint64 }
	if st := call(t, "POST", url+"/v1/records", `{"records":[{"agent":"a","text":"the cache lives in pebble"},{"agent":"a","text":"ristretto in front of it"}]}`, &ids); st != 200 {
		t.Fatal(st)
	}
	var res wire.Result
	if st := call(t, "POST", url+"/v1/recall", `{"agent":"a","text":"pebble cache"}`, &res); st != 200 || res.Stats.Embedded == 0 {
		t.Fatalf("first recall: %d %+v", st, res.Stats)
	}
	if err := stop(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	url, stop = startServe(t, testConfig(dir))
	defer func() {
		if err := stop(); err != nil {
			t.Error(err)
		}
	}()
	var rec wire.StoredRecord
	if st := call(t, "GET", fmt.Sprintf("%s/v1/records/%d", url, ids.IDs[1]), "", &rec); st != 200 || rec.Text != "ristretto in front of it" {
		t.Fatalf("after restart: %d %+v", st, rec)
	}
	if st := call(t, "POST", url+"/v1/recall", `{"agent":"a","text":"pebble cache"}`, &res); st != 200 || res.Stats.Embedded != 0 || res.Stats.CacheHits == 0 || len(res.Memories) == 0 {
		t.Fatalf("recall after restart: %d %+v", st, res.Stats)
	}
}

// startDaemon runs the daemon (this test binary as main) on dir with the
// extra flags and returns it once it is ready, with its URL and its log.
func startDaemon(t *testing.T, dir string, args ...string) (*exec.Cmd, string, *logbuf.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"--db", dir, "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	log := new(logbuf.Buffer)
	url := daemonURL(t, stderr, log)
	waitReady(t, url)
	return cmd, url, log
}

// marker is a word no other record holds, so that a sparse recall for it
// finds exactly the records carrying it: consonants only, so that the
// stemmer leaves it whole.
func marker(n int) string {
	const letters = "bcdfghjklmnpqrtvwxz"
	b := []byte("zq")
	for range 5 {
		b = append(b, letters[n%len(letters)])
		n /= len(letters)
	}
	return string(b)
}

// TestCrashKill: the daemon is killed with SIGKILL while clients append,
// each to a session of its own, and another forgets records they wrote;
// every append it acknowledged and no forget undid is in the store when it
// is reopened, and recallable: a restarted daemon finds each such record by
// a word only it holds (so the index was rebuilt from the log for whatever
// it had not persisted); every acknowledged forget holds: the record is
// gone, and no record finds its word (the next turn of its session, which
// inherited the word through session context, was indexed again). (Lost
// unsynced writes, the power-cut case, are simulated by the engine's and
// the log's crash tests; this proves the daemon acknowledges only what the
// engine made durable and searchable after recovery.)
func TestCrashKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a daemon process")
	}
	dir := t.TempDir()
	cmd, url, _ := startDaemon(t, dir)

	var mu sync.Mutex
	acked := map[uint64]string{}
	forgotten := map[uint64]string{} // acknowledged forgets
	asked := map[uint64]bool{}       // forgets sent, acknowledged or not
	var live []string                // forgotten words found before the kill
	var wg sync.WaitGroup
	stopAt := make(chan struct{})
	var once sync.Once
	client := &http.Client{Timeout: 10 * time.Second}
	for c := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				text := fmt.Sprintf("writer %d record %d %s", c, i, marker(2*(c*100000+i)))
				text2 := fmt.Sprintf("writer %d record %d %s (second)", c, i, marker(2*(c*100000+i)+1))
				body := fmt.Sprintf(`{"records":[{"agent":"a","session":"s%d","text":%q},{"agent":"a","session":"s%d","text":%q}]}`, c, text, c, text2)
				resp, err := client.Post(url+"/v1/records", "application/json", strings.NewReader(body))
				if err != nil {
					return // the daemon is gone
				}
				var ids struct{ IDs []uint64 }
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || json.Unmarshal(b, &ids) != nil || len(ids.IDs) != 2 {
					return // cut mid-reply: not acknowledged
				}
				mu.Lock()
				acked[ids.IDs[0]], acked[ids.IDs[1]] = text, text2
				n := len(acked)
				mu.Unlock()
				if n >= 200 {
					once.Do(func() { close(stopAt) })
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // forgets a second record of a pair now and then
		defer wg.Done()
		for {
			var id uint64
			mu.Lock()
			for k, text := range acked {
				if strings.HasSuffix(text, "(second)") && !asked[k] {
					id = k
					break
				}
			}
			if id != 0 {
				asked[id] = true
			}
			mu.Unlock()
			if id == 0 {
				time.Sleep(time.Millisecond)
				continue
			}
			resp, err := client.Post(url+"/v1/forget", "application/json", strings.NewReader(fmt.Sprintf(`{"agent":"a","ids":[%d]}`, id)))
			if err != nil {
				return // the daemon is gone
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 && strings.Contains(string(b), `"forgotten":1`) {
				mu.Lock()
				forgotten[id] = acked[id]
				word := strings.Fields(acked[id])[4]
				mu.Unlock()
				// From the reply on, its word finds nothing (its
				// successor's inherited copy included).
				q := fmt.Sprintf(`{"agent":"a","text":%q,"mode":"sparse","k":5,"fallback_scan":-1,"session_turns":-1}`, word)
				resp, err := client.Post(url+"/v1/recall", "application/json", strings.NewReader(q))
				if err != nil {
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				var res wire.Result
				if resp.StatusCode == 200 && json.Unmarshal(b, &res) == nil && len(res.Memories) > 0 {
					mu.Lock()
					live = append(live, fmt.Sprintf("id %d's word %q finds %+v", id, word, res.Memories))
					mu.Unlock()
				}
			}
		}
	}()
	select {
	case <-stopAt:
	case <-time.After(60 * time.Second):
		t.Fatal("200 appends took over a minute")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	cmd.Wait()

	// A new daemon on the store: every acknowledged record is there by id
	// and found by a sparse recall of its marker.
	cmd, url, log := startDaemon(t, dir, "--quiet")
	mu.Lock()
	defer mu.Unlock()
	if len(forgotten) == 0 {
		t.Fatal("no forget was acknowledged before the kill")
	}
	if len(live) > 0 {
		t.Fatalf("after Forget returned, before the kill: %s", strings.Join(live, "; "))
	}
	for id, text := range forgotten {
		var rec wire.StoredRecord
		if st := call(t, "GET", fmt.Sprintf("%s/v1/records/%d", url, id), "", &rec); st != 404 {
			t.Fatalf("forgotten id %d: %d %q", id, st, rec.Text)
		}
		word := strings.Fields(text)[4]
		var res wire.Result
		if st := call(t, "POST", url+"/v1/recall", fmt.Sprintf(`{"agent":"a","text":%q,"mode":"sparse","k":5,"fallback_scan":-1,"session_turns":-1}`, word), &res); st != 200 {
			t.Fatalf("recall %s: %d", word, st)
		}
		if len(res.Memories) != 0 {
			t.Fatalf("forgotten id %d's word %q still finds %+v", id, word, res.Memories)
		}
	}
	for id, text := range acked {
		if asked[id] {
			continue // forgotten, or perhaps (the kill cut the reply)
		}
		var rec wire.StoredRecord
		if st := call(t, "GET", fmt.Sprintf("%s/v1/records/%d", url, id), "", &rec); st != 200 || rec.Text != text {
			t.Fatalf("acknowledged id %d: %d %q; want %q", id, st, rec.Text, text)
		}
		word := strings.Fields(text)[4]
		var res wire.Result
		if st := call(t, "POST", url+"/v1/recall", fmt.Sprintf(`{"agent":"a","text":%q,"mode":"sparse","k":5}`, word), &res); st != 200 {
			t.Fatalf("recall %s: %d", word, st)
		}
		if !slices.ContainsFunc(res.Memories, func(m wire.Memory) bool { return m.ID == id }) {
			t.Fatalf("acknowledged id %d (%q) is not what a sparse recall of %q finds after the restart: %+v\n%s", id, text, word, res.Memories, log.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the restarted daemon's shutdown: %v\n%s", err, log.String())
	}
	t.Logf("%d acknowledged records, all present and recallable after SIGKILL and restart, %d acknowledged forgets hold", len(acked)-len(asked), len(forgotten))
}

// TestTokenFileDaemon: the daemon started with --token-file enforces the
// token: without it 401, with it 200, and the probes stay open.
func TestTokenFileDaemon(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a daemon process")
	}
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("t0ken-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LAZYMEMD_TOKEN", "") // the file, not the environment
	_, url, _ := startDaemon(t, t.TempDir(), "--token-file", tokenFile, "--quiet")
	for _, c := range []struct {
		method, path, auth, body string
		want                     int
	}{
		{"GET", "/v1/stats", "", "", 401},
		{"GET", "/v1/stats", "Bearer wrong", "", 401},
		{"POST", "/v1/records", "", `{"agent":"a","text":"x"}`, 401},
		{"POST", "/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 401},
		{"GET", "/v1/stats", "Bearer t0ken-from-file", "", 200},
		{"POST", "/v1/records", "Bearer t0ken-from-file", `{"agent":"a","text":"x"}`, 200},
		{"GET", "/v1/live", "", "", 200},
		{"GET", "/v1/ready", "", "", 200},
	} {
		if got := statusOf(t, c.method, url+c.path, c.auth, c.body); got != c.want {
			t.Errorf("%s %s with %q: %d, want %d", c.method, c.path, c.auth, got, c.want)
		}
	}
}

func TestAuth(t *testing.T) {
	db, err := engine.Open(t.TempDir(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv := newServer(db, defaultLimits())
	srv.token = "s3cret"
	ts := httptest.NewServer(srv.routes())
	defer ts.Close()
	for _, c := range []struct {
		path, auth string
		want       int
	}{
		{"/v1/stats", "", 401}, {"/v1/stats", "Bearer wrong", 401}, {"/v1/stats", "s3cret", 401},
		{"/v1/stats", "Bearer s3cret", 200}, {"/v1/health", "", 200}, {"/mcp", "", 401}, {"/nope", "", 401},
	} {
		if got := statusOf(t, "GET", ts.URL+c.path, c.auth, ""); got != c.want {
			t.Errorf("GET %s with %q: %d, want %d", c.path, c.auth, got, c.want)
		}
	}
	var e errorReply
	if st := call(t, "POST", ts.URL+"/v1/records", `{"agent":"a","text":"x"}`, &e); st != 401 || e.Error.Code != "unauthorized" {
		t.Fatalf("append without the token: %d %+v", st, e)
	}
	if db.Metrics().Log.Next != 1 {
		t.Fatal("an unauthorized append wrote")
	}
}

func TestLoadToken(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if tok, err := loadToken(write("ok", "  abc123 \nignored\n")); err != nil || tok != "abc123" {
		t.Fatalf("%q, %v", tok, err)
	}
	if _, err := loadToken(write("empty", "\n")); err == nil {
		t.Fatal("an empty token file was accepted")
	}
	if _, err := loadToken(filepath.Join(dir, "absent")); err == nil {
		t.Fatal("a missing token file was accepted")
	}
	t.Setenv("LAZYMEMD_TOKEN", " fromenv ")
	if tok, err := loadToken(""); err != nil || tok != "fromenv" {
		t.Fatalf("env: %q, %v", tok, err)
	}
}

// TestOrigin: a request from a web page (an Origin header) is refused
// unless its origin is allowed, so a page cannot write into a local
// daemon; programs send no Origin and pass.
func TestOrigin(t *testing.T) {
	db, err := engine.Open(t.TempDir(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv := newServer(db, defaultLimits())
	srv.origins["http://localhost:3000"] = true
	ts := httptest.NewServer(srv.routes())
	defer ts.Close()
	post := func(origin string) int {
		req, _ := http.NewRequest("POST", ts.URL+"/v1/records", strings.NewReader(`{"agent":"a","text":"x"}`))
		// A page's "simple" request: no preflight. The origin check
		// refuses it before the media type is looked at.
		ct := "text/plain"
		if origin != "https://evil.example" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := post("https://evil.example"); st != http.StatusForbidden {
		t.Fatalf("foreign origin: %d", st)
	}
	if db.Metrics().Log.Next != 1 {
		t.Fatal("a refused request wrote")
	}
	if st := post("http://localhost:3000"); st != 200 {
		t.Fatalf("allowed origin: %d", st)
	}
	if st := post(""); st != 200 {
		t.Fatalf("no origin: %d", st)
	}
	// The allowed origin's preflight is answered with CORS headers.
	req, _ := http.NewRequest("OPTIONS", ts.URL+"/v1/recall", nil)
	req.Header.Set("Origin", "http://localhost:3000")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	if _, err := parseArgs([]string{"--db", "d", "--allow-origin", "localhost:3000"}, io.Discard); err == nil {
		t.Fatal("an origin without a scheme was accepted")
	}
	cfg, err := parseArgs([]string{"--db", "d", "--allow-origin", "http://a:1/", "--allow-origin", "https://b"}, io.Discard)
	if err != nil || len(cfg.origins) != 2 || cfg.origins[0] != "http://a:1" {
		t.Fatalf("%+v %v", cfg.origins, err)
	}
}

// TestHostCheck: a request naming a host other than the allowed ones (a
// DNS-rebinding page: Host evil.example on 127.0.0.1) is refused with 403
// and writes nothing; the loopback names pass on any port by default.
func TestHostCheck(t *testing.T) {
	db, err := engine.Open(t.TempDir(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	srv := newServer(db, defaultLimits())
	ts := httptest.NewServer(srv.routes())
	defer ts.Close()
	post := func(host string) (int, errorReply) {
		req, _ := http.NewRequest("POST", ts.URL+"/v1/records", strings.NewReader(`{"agent":"a","text":"x"}`))
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e errorReply
		json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e
	}
	for _, h := range []string{"evil.example", "evil.example:7373", "localhost.evil.example", "127.0.0.2:7373", "[::2]", "a b"} {
		if st, e := post(h); st != http.StatusForbidden || e.Error.Code != "forbidden_host" {
			t.Errorf("Host %q: %d %+v, want 403 forbidden_host", h, st, e.Error)
		}
	}
	if db.Metrics().Log.Next != 1 {
		t.Fatal("a refused request wrote")
	}
	for _, h := range []string{"localhost", "LOCALHOST:7373", "127.0.0.1:1", "[::1]", "[::1]:8080"} {
		if st, e := post(h); st != 200 {
			t.Errorf("Host %q: %d %+v, want 200", h, st, e.Error)
		}
	}
	// Probes answer any host (supervisors probe by address).
	req, _ := http.NewRequest("GET", ts.URL+"/v1/health", nil)
	req.Host = "10.1.2.3:7373"
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("probe by address: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// Configured lists: a host with a port matches that port only; * any.
	h, err := parseHosts([]string{"mem.internal:7373", "10.0.0.5"})
	if err != nil || !h.allows("MEM.internal:7373") || h.allows("mem.internal:80") || h.allows("mem.internal") ||
		!h.allows("10.0.0.5:1") || h.allows("localhost") {
		t.Fatalf("list: %+v %v", h, err)
	}
	if h, _ := parseHosts([]string{"*"}); !h.allows("anything:1") {
		t.Fatal("* refused a host")
	}
	for _, bad := range []string{"", "a:b", "a:99999", "x/y", "[::1"} {
		if _, err := parseHosts([]string{bad}); err == nil {
			t.Errorf("entry %q accepted", bad)
		}
	}
	// A non-loopback --addr needs the operator's list.
	if _, err := parseArgs([]string{"--db", "d", "--addr", "0.0.0.0:7373"}, io.Discard); err == nil || !strings.Contains(err.Error(), "--allowed-hosts") {
		t.Fatalf("non-loopback addr without --allowed-hosts: %v", err)
	}
	if _, err := parseArgs([]string{"--db", "d", "--addr", ":7373"}, io.Discard); err == nil {
		t.Fatal("all interfaces without --allowed-hosts accepted")
	}
	// A non-loopback --addr needs a credential too.
	t.Setenv("LAZYMEMD_TOKEN", "")
	for _, args := range [][]string{
		{"--addr", "0.0.0.0:7373", "--allowed-hosts", "*"},
		{"--addr", "10.0.0.5:7373", "--allowed-hosts", "mem.internal,10.0.0.5"},
	} {
		if _, err := parseArgs(append([]string{"--db", "d"}, args...), io.Discard); err == nil || !strings.Contains(err.Error(), "--keys or --token-file") {
			t.Errorf("%q without a credential: %v", args, err)
		}
	}
	for _, args := range [][]string{
		{"--addr", "0.0.0.0:7373", "--allowed-hosts", "*", "--token-file", "tok"},
		{"--addr", "10.0.0.5:7373", "--allowed-hosts", "mem.internal,10.0.0.5", "--keys", "keys.json"},
		{"--addr", "localhost:7373"}, {"--addr", "[::1]:7373"},
	} {
		if _, err := parseArgs(append([]string{"--db", "d"}, args...), io.Discard); err != nil {
			t.Errorf("%q: %v", args, err)
		}
	}
	if cfg, _ := parseArgs([]string{"--db", "d", "--allowed-hosts", "a,b", "--allowed-hosts", "c"}, io.Discard); len(cfg.hosts) != 3 {
		t.Fatalf("hosts %q", cfg.hosts)
	}
}

// daemonURL reads the daemon's log until the line naming its URL, then
// copies the rest to log (nil: discards it).
func daemonURL(t *testing.T, stderr io.Reader, log io.Writer) string {
	t.Helper()
	urlRE := regexp.MustCompile(`url=(http://[0-9.:]+)`)
	sc := bufio.NewScanner(stderr)
	var url string
	for url == "" && sc.Scan() {
		if log != nil {
			fmt.Fprintln(log, sc.Text())
		}
		if m := urlRE.FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		t.Fatalf("the daemon never said where it listens: %v", sc.Err())
	}
	if log == nil {
		log = io.Discard
	}
	go io.Copy(log, stderr)
	return url
}

// waitReady polls GET /v1/ready until the store is open.
func waitReady(t *testing.T, url string) {
	t.Helper()
	waitFor(t, "the daemon is ready", func() bool {
		resp, err := http.Get(url + "/v1/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}
