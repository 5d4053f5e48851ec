package mcptools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lazymem/lazymem/engine"
)

func TestCheckArgs(t *testing.T) {
	for _, tc := range []struct {
		tool Tool
		args string
		want string // "" fits; else a part of the message
	}{
		{Add, `{"text":"x"}`, ""},
		{Add, `{"text":"x","agent":"a","meta":{"k":"v"}}`, ""},
		{Add, `{}`, `"text" is required`},
		{Add, `{"text":null}`, `"text" is required`},
		{Add, `{"text":7}`, `"text" must be a string, got an integer 7`},
		{Add, `{"text":"x","colour":"red"}`, `unknown argument "colour"`},
		{Add, `[]`, "want a JSON object"},
		{Search, `{"query":"q","k":1e1}`, ""},
		{Search, `{"query":"q","k":2.5}`, `"k" must be an integer, got a number 2.5`},
		{Search, `{"query":"q","k":"ten"}`, `"k" must be an integer, got a string "ten"`},
		{List, `{}`, ""},
		{List, `{"limit":true}`, `"limit" must be an integer, got a boolean`},
		{Add.WithoutAgent(), `{"text":"x","agent":"a"}`, `unknown argument "agent"`},
	} {
		got := CheckArgs(tc.tool.InputSchema, json.RawMessage(tc.args))
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s %s: %q, want %q", tc.tool.Name, tc.args, got, tc.want)
		}
	}
	// WithoutAgent leaves the shared schema alone.
	if _, ok := Add.InputSchema["properties"].(map[string]any)["agent"]; !ok {
		t.Fatal("WithoutAgent changed the daemon's schema")
	}
}

// fakeStore records what the tools asked of it.
type fakeStore struct {
	appended []engine.Record
	queries  []engine.Query
	forgets  []engine.Selector
	res      engine.Result
}

func (f *fakeStore) Append(_ context.Context, r engine.Record) (uint64, error) {
	f.appended = append(f.appended, r)
	return uint64(len(f.appended)), nil
}

func (f *fakeStore) Forget(_ context.Context, sel engine.Selector) (engine.ForgetResult, error) {
	f.forgets = append(f.forgets, sel)
	return engine.ForgetResult{Forgotten: len(sel.IDs)}, nil
}

func (f *fakeStore) Recall(_ context.Context, q engine.Query) (*engine.Result, error) {
	f.queries = append(f.queries, q)
	res := f.res
	return &res, nil
}

// TestCallsUseEnvAgent: every tool acts as the agent the Env resolves,
// and refuses when it refuses; admission and statistics go through it.
func TestCallsUseEnvAgent(t *testing.T) {
	st := &fakeStore{}
	t0 := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	st.res.Memories = []engine.Memory{
		{Record: engine.Record{ID: 1, Agent: "me", Time: t0, Text: "older"}},
		{Record: engine.Record{ID: 2, Agent: "me", Time: t0.Add(time.Hour), Text: "newer"}},
	}
	var admitted, observed int
	env := &Env{
		Store: func(string) Store { return st }, Now: func() time.Time { return t0 },
		Agent: func(named string) (string, error) {
			if named != "" && named != "me" {
				return "", ErrAgent
			}
			return "me", nil
		},
		Admit:   func(n int64) (func(), error) { admitted++; return func() {}, nil },
		Observe: func(*engine.RecallStats) { observed++ },
	}
	ctx := context.Background()
	if r := Add.Call(ctx, env, json.RawMessage(`{"text":"hello"}`)); r.IsError || len(st.appended) != 1 || st.appended[0].Agent != "me" || admitted != 1 {
		t.Fatalf("add: %+v %+v", r, st.appended)
	}
	if r := Add.Call(ctx, env, json.RawMessage(`{"text":"hello","agent":"other"}`)); !r.IsError || len(st.appended) != 1 {
		t.Fatalf("add for another agent: %+v", r)
	}
	if r := Search.Call(ctx, env, json.RawMessage(`{"query":"q","agent":"other"}`)); !r.IsError || len(st.queries) != 0 {
		t.Fatalf("search for another agent: %+v", r)
	}
	if r := Search.Call(ctx, env, json.RawMessage(`{"query":"q","budget":-1}`)); !r.IsError || !strings.Contains(r.Content[0].Text, "budget") {
		t.Fatalf("negative budget: %+v", r)
	}
	r := List.Call(ctx, env, json.RawMessage(`{"session":"s1","limit":5}`))
	if r.IsError || len(st.queries) != 1 || observed != 1 {
		t.Fatalf("list: %+v", r)
	}
	q := st.queries[0]
	if q.Agent != "me" || q.K != 5 || q.Mode != engine.ModeSparse || len(q.Sessions) != 1 || q.Sessions[0] != "s1" || q.Text != "" {
		t.Fatalf("list query: %+v", q)
	}
	b, _ := json.Marshal(r.StructuredContent)
	if i, j := strings.Index(string(b), "newer"), strings.Index(string(b), "older"); i < 0 || j < 0 || i > j {
		t.Fatalf("list not newest first: %s", b)
	}
	// delete: ids or a session, never the whole agent; another agent
	// reaches nothing.
	if r := Delete.Call(ctx, env, json.RawMessage(`{}`)); !r.IsError || len(st.forgets) != 0 {
		t.Fatalf("delete of nothing named: %+v", r)
	}
	if r := Forget.Call(ctx, env, json.RawMessage(`{"ids":[3],"agent":"other"}`)); !r.IsError || len(st.forgets) != 0 {
		t.Fatalf("delete for another agent: %+v", r)
	}
	if r := Delete.Call(ctx, env, json.RawMessage(`{"ids":[3,4],"session":"s"}`)); r.IsError || len(st.forgets) != 1 ||
		st.forgets[0].Agent != "me" || len(st.forgets[0].IDs) != 2 || st.forgets[0].Sessions[0] != "s" {
		t.Fatalf("delete: %+v %+v", r, st.forgets)
	}
	busy := *env
	busy.Admit = func(int64) (func(), error) { return nil, ErrBusy }
	if r := Add.Call(ctx, &busy, json.RawMessage(`{"text":"x"}`)); !r.IsError || len(st.appended) != 1 {
		t.Fatalf("add when busy: %+v", r)
	}
}
