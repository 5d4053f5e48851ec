package mcptools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/lazymem/lazymem/cmd/internal/wire"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/engine/consolidate"
)

// CoreStore is what the feedback and core memory tools need of one
// agent's store: an *engine.AgentDB.
type CoreStore interface {
	Feedback(ctx context.Context, recallID uint64, ids []uint64, signal int) error
	Consolidate(ctx context.Context, opts engine.ConsolidateOptions) (*engine.ConsolidateReport, error)
	Core(ctx context.Context, history bool) ([]consolidate.Unit, error)
}

var (
	feedbackHints    = &Annotations{Title: "Rate recalled memories"}
	consolidateHints = &Annotations{Title: "Consolidate memories"}
	coreHints        = &Annotations{Title: "List core memory", ReadOnlyHint: true, IdempotentHint: true}
)

var feedbackSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"agent":     agentProp,
		"recall_id": map[string]any{"type": "integer", "description": "the recall_id of the search that returned the memories (0 or absent: ids are memory ids)"},
		"ids":       map[string]any{"type": "array", "items": map[string]any{"type": "integer"}, "description": "the memories judged: their ids, or a core memory's unit id"},
		"useful":    map[string]any{"type": "boolean", "description": "true: they helped (kept and consolidated sooner); false: they did not"},
	},
	"required": []string{"ids", "useful"},
}

var consolidateSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"agent":   agentProp,
		"session": map[string]any{"type": "string", "description": "only this conversation (say, the one that just ended)"},
		"ids":     map[string]any{"type": "array", "items": map[string]any{"type": "integer"}, "description": "memories to consolidate whatever their value"},
	},
	"required": []string{},
}

var coreSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"agent":   agentProp,
		"history": map[string]any{"type": "boolean", "description": "include the units later ones superseded (default false)"},
	},
	"required": []string{},
}

const coreDescription = "List the agent's core memory: the decisions, action items, preferences, outcomes and facts " +
	"consolidated from its memories, each citing the memories it came from."

// The feedback and core memory tools.
var (
	Feedback = Tool{Name: "feedback", Description: "Say whether memories a search returned were useful: useful ones are kept " +
		"and consolidated sooner, useless ones rank lower. Pass the search's recall_id and the memories' ids.",
		InputSchema: feedbackSchema, Annotations: feedbackHints, Call: feedback}
	Consolidate = Tool{Name: "consolidate", Description: "Distill the agent's valuable memories (or one conversation's, " +
		"say when it ends) into core memory: decisions, action items, preferences, outcomes and facts. Later units supersede earlier ones on the same topic.",
		InputSchema: consolidateSchema, Annotations: consolidateHints, Call: consolidateTool}
	Core     = Tool{Name: "core", Description: coreDescription, InputSchema: coreSchema, Annotations: coreHints, Call: coreTool}
	ListCore = Tool{Name: "list_core", Description: coreDescription + " (Same as core.)", InputSchema: coreSchema, Annotations: coreHints, Call: coreTool}
)

// coreStore is the call's agent and its CoreStore, or the tool error.
func (env *Env) coreStore(named string) (string, CoreStore, error) {
	agent, err := env.Agent(named)
	if err != nil {
		return "", nil, err
	}
	if env.Core == nil {
		return "", nil, fmt.Errorf("%w: this server has no core memory", ErrArgs)
	}
	return agent, env.Core(agent), nil
}

func feedback(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct {
		Agent    string   `json:"agent"`
		RecallID uint64   `json:"recall_id"`
		IDs      []uint64 `json:"ids"`
		Useful   bool     `json:"useful"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return errorResult(fmt.Errorf("%w: feedback arguments: %w", ErrArgs, err))
	}
	agent, st, err := env.coreStore(a.Agent)
	if err != nil {
		return errorResult(err)
	}
	signal, word := 1, "useful"
	if !a.Useful {
		signal, word = -1, "not useful"
	}
	if err := st.Feedback(ctx, a.RecallID, a.IDs, signal); err != nil {
		return errorResult(err)
	}
	return Result{
		Content:           []Content{{Type: "text", Text: fmt.Sprintf("Noted %d memories of agent %q as %s.", len(a.IDs), agent, word)}},
		StructuredContent: map[string]any{"judged": len(a.IDs), "signal": signal, "agent": agent},
	}
}

func consolidateTool(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct {
		Agent   string   `json:"agent"`
		Session string   `json:"session"`
		IDs     []uint64 `json:"ids"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return errorResult(fmt.Errorf("%w: consolidate arguments: %w", ErrArgs, err))
	}
	agent, st, err := env.coreStore(a.Agent)
	if err != nil {
		return errorResult(err)
	}
	rep, err := st.Consolidate(ctx, engine.ConsolidateOptions{Session: a.Session, IDs: a.IDs})
	if err != nil {
		return errorResult(err)
	}
	text := fmt.Sprintf("Consolidated %d memories of agent %q into %d units (%d superseded).", rep.Selected, agent, len(rep.Units), len(rep.Superseded))
	if len(rep.Units) > 0 {
		text += "\n" + renderUnits(rep.Units)
	}
	return Result{Content: []Content{{Type: "text", Text: text}}, StructuredContent: wire.FromConsolidateReport(rep)}
}

func coreTool(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct {
		Agent   string `json:"agent"`
		History bool   `json:"history"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return errorResult(fmt.Errorf("%w: core arguments: %w", ErrArgs, err))
	}
	agent, st, err := env.coreStore(a.Agent)
	if err != nil {
		return errorResult(err)
	}
	units, err := st.Core(ctx, a.History)
	if err != nil {
		return errorResult(err)
	}
	text := renderUnits(units)
	if text == "" {
		text = fmt.Sprintf("Agent %q has no core memory yet.", agent)
	}
	return Result{Content: []Content{{Type: "text", Text: text}}, StructuredContent: map[string]any{"agent": agent, "units": wire.FromUnits(units)}}
}

// renderUnits is one line a unit, then its action items:
//
//	#3 decision [database] Use Pebble for the log. (2026-05-01; from 12, 14)
//	   - ann: ship the migration (due 2026-05-08)
func renderUnits(us []consolidate.Unit) string {
	var b strings.Builder
	for i := range us {
		u := &us[i]
		fmt.Fprintf(&b, "#%d %s [%s] %s (%s; from", u.ID, u.Type, u.Topic, u.Content, u.Time.Format("2006-01-02"))
		for j, id := range u.SourceIDs {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, " %d", id)
		}
		b.WriteString(")")
		if !u.Live() {
			fmt.Fprintf(&b, " superseded by #%d", u.SupersededBy)
		}
		b.WriteByte('\n')
		for _, a := range u.ActionItems {
			fmt.Fprintf(&b, "   - %s: %s", a.Owner, a.Task)
			if !a.Due.IsZero() {
				fmt.Fprintf(&b, " (due %s)", a.Due.Format("2006-01-02"))
			}
			b.WriteByte('\n')
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}
