package mcptools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/engine/consolidate"
)

// fakeCore records what the core tools asked of it.
type fakeCore struct {
	agent    string
	feedback [][]uint64
	signals  []int
	recallID uint64
	opts     []engine.ConsolidateOptions
	history  []bool
	units    []consolidate.Unit
}

func (f *fakeCore) Feedback(_ context.Context, recallID uint64, ids []uint64, signal int) error {
	f.recallID = recallID
	f.feedback = append(f.feedback, ids)
	f.signals = append(f.signals, signal)
	return nil
}

func (f *fakeCore) Consolidate(_ context.Context, opts engine.ConsolidateOptions) (*engine.ConsolidateReport, error) {
	f.opts = append(f.opts, opts)
	return &engine.ConsolidateReport{Selected: len(opts.IDs), Units: f.units}, nil
}

func (f *fakeCore) Core(_ context.Context, history bool) ([]consolidate.Unit, error) {
	f.history = append(f.history, history)
	return f.units, nil
}

// TestCoreTools: feedback, consolidate and core act as the Env's agent
// through its CoreStore; useful maps to +1 and -1; a refused agent or a
// server without core memory is a tool error.
func TestCoreTools(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	fc := &fakeCore{units: []consolidate.Unit{{ID: 7, Type: consolidate.TypeActionItem, Topic: "migration", Content: "Bo writes the migration.",
		ActionItems: []consolidate.ActionItem{{Owner: "bo", Task: "write the migration", Due: t0}}, SourceIDs: []uint64{1, 2}, Time: t0, Agent: "me"}}}
	env := &Env{
		Agent: func(named string) (string, error) {
			if named != "" && named != "me" {
				return "", ErrAgent
			}
			return "me", nil
		},
		Core: func(agent string) CoreStore { fc.agent = agent; return fc },
	}
	call := func(tool Tool, args string) Result {
		t.Helper()
		if msg := CheckArgs(tool.InputSchema, json.RawMessage(args)); msg != "" {
			t.Fatalf("%s %s: %s", tool.Name, args, msg)
		}
		return tool.Call(context.Background(), env, json.RawMessage(args))
	}
	if r := call(Feedback, `{"recall_id":3,"ids":[1,7],"useful":true}`); r.IsError || fc.recallID != 3 || fc.signals[0] != 1 || len(fc.feedback[0]) != 2 {
		t.Fatalf("feedback: %+v %+v", r, fc)
	}
	if r := call(Feedback, `{"ids":[1],"useful":false}`); r.IsError || fc.signals[1] != -1 || !strings.Contains(r.Content[0].Text, "not useful") {
		t.Fatalf("feedback not useful: %+v", r)
	}
	r := call(Consolidate, `{"session":"s1","ids":[1,2]}`)
	if r.IsError || fc.opts[0].Session != "s1" || len(fc.opts[0].IDs) != 2 || !strings.Contains(r.Content[0].Text, "#7 action_item [migration] Bo writes the migration. (2026-05-01; from 1, 2)") ||
		!strings.Contains(r.Content[0].Text, "- bo: write the migration (due 2026-05-01)") {
		t.Fatalf("consolidate: %+v", r)
	}
	for _, tool := range []Tool{Core, ListCore} {
		r := call(tool, `{"history":true}`)
		if r.IsError || !fc.history[len(fc.history)-1] || !strings.Contains(r.Content[0].Text, "#7 action_item") || fc.agent != "me" {
			t.Fatalf("%s: %+v", tool.Name, r)
		}
	}
	if r := call(Core, `{"agent":"other"}`); !r.IsError {
		t.Fatalf("another agent: %+v", r)
	}
	if msg := CheckArgs(Feedback.InputSchema, json.RawMessage(`{"ids":[1]}`)); !strings.Contains(msg, `"useful" is required`) {
		t.Fatalf("feedback without useful: %q", msg)
	}
	env.Core = nil
	if r := call(Core, `{}`); !r.IsError || !strings.Contains(r.Content[0].Text, "no core memory") {
		t.Fatalf("no core store: %+v", r)
	}
	// Annotations: core is read-only and idempotent; feedback and
	// consolidate write, not destructively.
	if a := Core.Annotations; !a.ReadOnlyHint || !a.IdempotentHint || a.DestructiveHint {
		t.Errorf("core annotations %+v", a)
	}
	for _, tool := range []Tool{Feedback, Consolidate} {
		if a := tool.Annotations; a.ReadOnlyHint || a.DestructiveHint || a.IdempotentHint {
			t.Errorf("%s annotations %+v", tool.Name, a)
		}
	}
}
