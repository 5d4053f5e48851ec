package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/internal/testenv"
)

// chromium finds a Chromium or Chrome to drive.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.Missing(t, "no chromium on PATH: the inspector's browser test needs one (Debian: apt-get install -y chromium)")
	return ""
}

// artifactDir is where the browser test's screenshots go:
// $LAZYMEM_TEST_ARTIFACTS/inspector when set, else a temporary directory.
func artifactDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if root := os.Getenv("LAZYMEM_TEST_ARTIFACTS"); root != "" {
		dir = filepath.Join(root, "inspector")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

// TestInspectorBrowser drives the inspector's page in headless Chromium
// as a user would: type a key's token, see its agents, search and read
// every stage and why each memory ranked, open a session's timeline, and
// be refused an agent outside the key. Each step is a screenshot.
func TestInspectorBrowser(t *testing.T) {
	exe := chromium(t)
	// The user's key: beta's agents with the forget scope.
	ts, db := newKeyedServer(t, append(testKeys, testKey{"inspector", "tok-insp", []string{"b1", "b2"}, []string{"read", "forget"}}))
	ctx := t.Context()
	t0 := time.Date(2026, 4, 30, 9, 0, 0, 0, time.UTC)
	for i, turn := range []struct{ agent, session, role, text string }{
		{"b1", "standup", "user", "The billing service keeps running out of database connections."},
		{"b1", "standup", "assistant", "Raise the connection pool size to 50 and add a 5 s timeout."},
		{"b1", "standup", "user", "Agreed, pool size 50 it is."},
		{"b1", "lunch", "user", "Lunch was good today."},
		{"a1", "secret", "user", "a1's database connection secret is hunter2"},
	} {
		if _, err := db.Append(ctx, engine.Record{Agent: turn.agent, Session: turn.session, Role: turn.role, Text: turn.text, Time: t0.Add(time.Duration(i) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	dir := artifactDir(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:0:0],
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.WindowSize(1280, 900), chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelA := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()

	// The first Run starts the browser: its context has no deadline (a
	// deadline would stop the browser); each step below has one.
	if err := chromedp.Do(bctx, chromedp.Navigate(ts.URL+"/")); err != nil {
		t.Fatalf("browser: %v", err)
	}
	step := 0
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(bctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("%s: screenshot: %v", what, err)
		}
		step++
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d-%s.png", step, what)), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	get := func(a chromedp.Action[string]) string {
		t.Helper()
		v, err := chromedp.Run(bctx, a)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	count := func(css string) int {
		t.Helper()
		n, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll(`+strconv.Quote(css)+`).length`))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	poll := func(expr string) chromedp.Action[chromedp.Void] {
		p := chromedp.Poll[bool](expr)
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			_, err := p(ctx, tg)
			return chromedp.Void{}, err
		}
	}

	do("open", chromedp.WaitVisible(chromedp.ID("token")))
	// The token: the page asks for the key's scope and offers its agents.
	do("token", chromedp.SendKeys(chromedp.ID("token"), "tok-insp\t"),
		poll(`document.getElementById("scope").textContent.includes("b1")`))
	scope := get(chromedp.Text(chromedp.ID("scope")))
	// A search: the stages and the memories with their reasons.
	do("search", chromedp.SetValue(chromedp.ID("agent"), "b1"),
		chromedp.SendKeys(chromedp.ID("query"), "what pool size did we pick for the database connections?"),
		chromedp.Click(chromedp.ID("go")),
		chromedp.WaitVisible(chromedp.CSS("#memories .mem")))
	stages := get(chromedp.Text(chromedp.ID("stages")))
	memories := get(chromedp.Text(chromedp.ID("memories")))
	nMem := count("#memories .mem")
	// The first memory's session as a timeline.
	do("timeline", chromedp.Click(chromedp.CSS("#memories .mem button.session")),
		chromedp.WaitVisible(chromedp.CSS("#timeline .turn")))
	timeline := get(chromedp.Text(chromedp.ID("timeline")))
	nTurns := count("#timeline .turn")
	// Forget the best memory: the first click asks, the second forgets.
	firstID, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector("#memories .mem").dataset.id`))
	if err != nil {
		t.Fatal(err)
	}
	do("forget-confirm", chromedp.Click(chromedp.CSS("#memories .mem button.forget")),
		poll(`document.querySelector("#memories .mem button.forget").textContent.includes("click again")`))
	do("forgotten", chromedp.Click(chromedp.CSS("#memories .mem button.forget")),
		chromedp.WaitVisible(chromedp.CSS("#memories .mem.forgotten")))
	id, _ := strconv.ParseUint(firstID, 10, 64)
	if _, err := db.Get(ctx, id); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("memory %d after forget in the page: %v", id, err)
	}
	// An agent outside the key: refused, nothing shown of it.
	do("forbidden", chromedp.SetValue(chromedp.ID("agent"), "a1"), chromedp.Click(chromedp.ID("go")),
		poll(`document.getElementById("error").textContent.length > 0`))
	errText := get(chromedp.Text(chromedp.ID("error")))

	if !strings.Contains(scope, "b1 (4 records), b2 (0 records)") {
		t.Errorf("scope: %q", scope)
	}
	for _, want := range []string{"passed the filters", "candidates: BM25 hits", "candidates: session turns", "embedded now", "cache hits", "time: filter", "time: embed", "time: total"} {
		if !strings.Contains(stages, want) {
			t.Errorf("stages lack %q:\n%s", want, stages)
		}
	}
	if nMem == 0 || !strings.Contains(memories, "pool size") || !strings.Contains(memories, "bm25") || strings.Contains(memories, "hunter2") {
		t.Errorf("%d memories:\n%s", nMem, memories)
	}
	if nTurns != 3 || strings.Index(timeline, "running out") > strings.Index(timeline, "Agreed") || strings.Contains(timeline, "Lunch") {
		t.Errorf("timeline of %d turns:\n%s", nTurns, timeline)
	}
	if !strings.Contains(errText, "403") || !strings.Contains(errText, "query.agent") {
		t.Errorf("an agent outside the key: %q", errText)
	}
	if strings.Contains(memories+timeline+errText, "hunter2") {
		t.Error("a1's record reached the page")
	}
}
