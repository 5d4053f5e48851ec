package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lazymem/lazymem/engine"
)

// TestMain lets TestMCPStdioProcess run this test binary as the lazymem
// command: with LAZYMEM_RUN_MAIN set, it is main.
func TestMain(m *testing.M) {
	if os.Getenv("LAZYMEM_RUN_MAIN") == "1" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// seedOtherAgent writes a record of agent a2 into the store at dir: the
// MCP server of a1 must never show it.
func seedOtherAgent(t *testing.T, dir string) {
	t.Helper()
	db, err := engine.Open(dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Append(t.Context(), engine.Record{Agent: "a2", Session: "x", Text: "a2's billing database is MySQL 8"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// exerciseMCP drives a connected session of the server of agent a1 with
// the official client.
func exerciseMCP(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	ctx := t.Context()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if strings.Contains(string(mustJSON(t, tl.InputSchema)), `"agent"`) {
			t.Errorf("%s takes an agent argument over stdio", tl.Name)
		}
		a := tl.Annotations
		write := tl.Name == "add" || tl.Name == "remember" || tl.Name == "feedback" || tl.Name == "consolidate"
		destructive := tl.Name == "delete" || tl.Name == "forget"
		if a == nil || a.ReadOnlyHint == (write || destructive) || a.DestructiveHint == nil || *a.DestructiveHint != destructive || a.IdempotentHint == write {
			t.Errorf("%s: annotations %+v", tl.Name, a)
		}
	}
	if slices.Sort(names); !slices.Equal(names, []string{"add", "consolidate", "core", "delete", "feedback", "forget", "list", "list_core", "recall", "remember", "search"}) {
		t.Fatalf("tools %v", names)
	}
	for i, text := range []string{"The billing service runs on Postgres 16.", "We moved the billing cron to 02:00 UTC."} {
		tool := []string{"add", "remember"}[i]
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": text, "session": "s1", "role": "user"}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %+v %v", tool, res, err)
		}
	}
	for _, tool := range []string{"search", "recall"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"query": "which database does billing use?", "k": 5}})
		if err != nil || res.IsError || len(res.Content) == 0 {
			t.Fatalf("%s: %+v %v", tool, res, err)
		}
		txt := res.Content[0].(*mcp.TextContent).Text
		if !strings.Contains(txt, "Postgres 16") || strings.Contains(txt, "MySQL") {
			t.Fatalf("%s: %s", tool, txt)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list", Arguments: map[string]any{"session": "s1"}})
	if err != nil || res.IsError {
		t.Fatalf("list: %+v %v", res, err)
	}
	txt := res.Content[0].(*mcp.TextContent).Text
	var listed struct{ Memories []struct{ Text string } }
	if err := json.Unmarshal(mustJSON(t, res.StructuredContent), &listed); err != nil || len(listed.Memories) != 2 ||
		!strings.Contains(listed.Memories[0].Text, "02:00 UTC") || !strings.Contains(txt, "Postgres 16") || strings.Contains(txt, "MySQL") {
		t.Fatalf("list (structured newest first): %s %+v %v", txt, listed, err)
	}
	// The lifecycle tools act on the server's agent too.
	for _, name := range []string{"consolidate", "core", "list_core"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %+v %v", name, res, err)
		}
	}
	// Naming an agent is not part of the stdio tools: invalid params,
	// nothing written.
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"text": "x", "agent": "a2"}})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(werr.Message, `unknown argument "agent"`) {
		t.Fatalf("add for a2: %v", err)
	}
	// A value the store rejects is a tool error the model reads.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "search", Arguments: map[string]any{"query": "x", "k": 5000}})
	if err != nil || !res.IsError {
		t.Fatalf("search k 5000: %+v %v", res, err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkStore: the session wrote a1's two records and nothing else.
func checkStore(t *testing.T, dir string) {
	t.Helper()
	db, err := engine.Open(dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n := db.Metrics().Log.Next; n != 4 {
		t.Fatalf("next id %d, want 4 (a2's seed and a1's two)", n)
	}
	for id := uint64(2); id <= 3; id++ {
		if r, err := db.Get(t.Context(), id); err != nil || r.Agent != "a1" {
			t.Fatalf("record %d: %+v %v", id, r, err)
		}
	}
}

// TestMCPStdio runs the command in process over a pair of pipes, stdio's
// framing, with the official client.
func TestMCPStdio(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mem")
	seedOtherAgent(t, dir)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	var stderr strings.Builder
	go func() {
		code := run(t.Context(), []string{"mcp", "--db", dir, "--agent", "a1"}, inR, outW, &stderr)
		outW.Close()
		done <- code
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "lazymem-test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	exerciseMCP(t, cs)
	cs.Close()
	inW.Close()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not stop when stdin closed")
	}
	checkStore(t, dir)
}

// TestMCPStdioProcess starts the command as a process, as a desktop agent
// does, and talks to it through its stdin and stdout with the official
// client's command transport: stdout carries the protocol only.
func TestMCPStdioProcess(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "mem")
	seedOtherAgent(t, dir)
	cmd := exec.Command(exe, "mcp", "--db", dir, "--agent", "a1")
	cmd.Env = append(os.Environ(), "LAZYMEM_RUN_MAIN=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "lazymem-test", Version: "1"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v (%s)", err, stderr.String())
	}
	if init := cs.InitializeResult(); init.ServerInfo.Name != "lazymem" || init.Instructions == "" {
		t.Fatalf("initialize: %+v", init)
	}
	exerciseMCP(t, cs)
	if err := cs.Close(); err != nil {
		t.Fatalf("close: %v (%s)", err, stderr.String())
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Fatalf("the process did not exit cleanly: %v (%s)", cmd.ProcessState, stderr.String())
	}
	checkStore(t, dir)
}

func TestMCPUsage(t *testing.T) {
	for _, args := range [][]string{{"mcp"}, {"mcp", "--db", "d"}, {"mcp", "--agent", "a"}, {"mcp", "--db", "d", "--agent", "a", "extra"}} {
		if code, _, errs := runCLI(t, "", args...); code != 2 || !strings.Contains(errs, "mcp:") {
			t.Errorf("%q: code %d, %s", args, code, errs)
		}
	}
}

// TestMCPStdioPipedEOF: a client that writes its requests and closes
// stdin at once ("printf ... | lazymem mcp") gets every answer, and its
// add is stored: the end of stdin waits for them.
func TestMCPStdioPipedEOF(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mem")
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"text":"the staging password rotates monthly","session":"s1"}}}`,
		`{"jsonrpc":"2.0","id":"three","method":"tools/list"}`,
	}, "\n") + "\n"
	var out, stderr strings.Builder
	if code := run(t.Context(), []string{"mcp", "--db", dir, "--agent", "a1"}, strings.NewReader(in), &out, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	ids := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("stdout line %q: %v", line, err)
		}
		if m.Result != nil {
			ids[string(m.ID)] = true
		}
	}
	for _, id := range []string{`1`, `2`, `"three"`} {
		if !ids[id] {
			t.Errorf("no result for request %s in %q", id, out.String())
		}
	}
	db, err := engine.Open(dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if r, err := db.Get(t.Context(), 1); err != nil || r.Text != "the staging password rotates monthly" || r.Agent != "a1" {
		t.Errorf("record 1: %+v, %v: want the add's", r, err)
	}
}

// FuzzMCPDrain: any bytes through the drained stdin and stdout pass
// unchanged, and the end of stdin is not held back by what is no request.
func FuzzMCPDrain(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`+"\n"), []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`+"\n"))
	f.Add([]byte(`[{"id":"a","method":"x"},{"id":null}]`+"\n"), []byte(`[{"id":"a","result":1}]`+"\n"))
	f.Add([]byte("not json\n{"), []byte("}{\n\n"))
	f.Fuzz(func(t *testing.T, in, out []byte) {
		d := newDrained()
		var w bytes.Buffer
		dw := d.output(&w)
		if n, err := dw.Write(out); n != len(out) || err != nil || !bytes.Equal(w.Bytes(), out) {
			t.Fatalf("output: %d, %v, %q", n, err, w.Bytes())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		got, err := io.ReadAll(d.input(ctx, bytes.NewReader(in)))
		if err != nil || !bytes.Equal(got, in) {
			t.Fatalf("input: %q, %v; want %q", got, err, in)
		}
	})
}
