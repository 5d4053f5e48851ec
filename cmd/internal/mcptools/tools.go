package mcptools

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lazymem/lazymem/cmd/internal/wire"
	"github.com/lazymem/lazymem/engine"
)

// Store is what the tools need of a store: an *engine.DB, or the
// *engine.AgentDB scoped to the call's agent.
type Store interface {
	Append(ctx context.Context, r engine.Record) (uint64, error)
	Recall(ctx context.Context, q engine.Query) (*engine.Result, error)
	Forget(ctx context.Context, sel engine.Selector) (engine.ForgetResult, error)
}

// Env is what one call runs against: the store and the caller's policy.
type Env struct {
	// Store is the store a call acting as agent uses: the scoped handle
	// of that agent (engine.DB.Agent), so that no call reaches another.
	Store func(agent string) Store
	// Now is the time of a record that carries none. Default time.Now.
	Now func() time.Time
	// Agent resolves the agent a call acts as from the one it names (""
	// when it names none); an error (wrapping ErrAgent) refuses the call.
	// Required: the transport decides whose memory a caller reaches.
	Agent func(named string) (string, error)
	// Admit, when not nil, is asked before appending n records; it
	// returns the func that gives them back, or an error wrapping ErrBusy.
	Admit func(n int64) (release func(), err error)
	// Observe, when not nil, receives each recall's statistics.
	Observe func(*engine.RecallStats)
	// Core is the store of value feedback and core memory a call acting
	// as agent uses (engine.DB.Agent); nil: the feedback, consolidate and
	// core tools answer a tool error.
	Core func(agent string) CoreStore
}

// Annotations are the hints a client shows its user or uses to decide
// whether a call needs confirmation. The protocol's defaults are the
// cautious ones (destructive, not idempotent, open world), so each is
// spelled out.
type Annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    bool   `json:"readOnlyHint"`
	DestructiveHint bool   `json:"destructiveHint"`
	IdempotentHint  bool   `json:"idempotentHint"`
	OpenWorldHint   bool   `json:"openWorldHint"`
}

// Tool is an entry of tools/list, and what calling it does.
type Tool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"inputSchema"`
	Annotations *Annotations   `json:"annotations,omitempty"`
	// Call runs the tool on arguments CheckArgs accepted.
	Call func(ctx context.Context, env *Env, args json.RawMessage) Result `json:"-"`
}

// Result is the result of tools/call.
type Result struct {
	Content           []Content `json:"content"`
	StructuredContent any       `json:"structuredContent,omitempty"`
	IsError           bool      `json:"isError"`
}

// Content is one text block of a Result.
type Content struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// errorResult is a tool error: the model reads the message.
func errorResult(err error) Result {
	return Result{IsError: true, Content: []Content{{Type: "text", Text: strings.TrimPrefix(err.Error(), "lazymem: ")}}}
}

// WithoutAgent is t for a transport whose agent is fixed: no agent
// argument (a call naming one is invalid params).
func (t Tool) WithoutAgent() Tool {
	props := maps.Clone(t.InputSchema["properties"].(map[string]any))
	delete(props, "agent")
	schema := maps.Clone(t.InputSchema)
	schema["properties"] = props
	t.InputSchema = schema
	return t
}

var (
	writeHints  = &Annotations{Title: "Add a memory"}
	forgetHints = &Annotations{Title: "Delete memories", DestructiveHint: true, IdempotentHint: true}
	readHints   = &Annotations{Title: "Search memories", ReadOnlyHint: true, IdempotentHint: true}
	listHints   = &Annotations{Title: "List memories", ReadOnlyHint: true, IdempotentHint: true}
)

var agentProp = map[string]any{"type": "string", "description": "whose memory (default: the caller's agent)"}

var addSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"text":    map[string]any{"type": "string", "description": "what to remember"},
		"agent":   agentProp,
		"session": map[string]any{"type": "string", "description": "the conversation it belongs to"},
		"role":    map[string]any{"type": "string", "description": "who said it: user, assistant, tool, or a name"},
		"time":    map[string]any{"type": "string", "description": "when, RFC 3339 (default: now)"},
		"meta":    map[string]any{"type": "object", "description": "labels: key to string or array of strings"},
	},
	"required": []string{"text"},
}

var searchSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"query":           map[string]any{"type": "string", "description": "the question, in natural language"},
		"agent":           agentProp,
		"k":               map[string]any{"type": "integer", "description": "how many memories (default 10)"},
		"current_session": map[string]any{"type": "string", "description": "the conversation in progress: its latest turns are considered too"},
		"since":           map[string]any{"type": "string", "description": "only memories at or after this RFC 3339 time"},
		"until":           map[string]any{"type": "string", "description": "only memories before this RFC 3339 time"},
		"where":           map[string]any{"type": "object", "description": "only memories with these labels"},
		"budget":          map[string]any{"type": "integer", "description": "most characters of the rendered context (default 4000)"},
	},
	"required": []string{"query"},
}

var deleteSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"agent":   agentProp,
		"ids":     map[string]any{"type": "array", "items": map[string]any{"type": "integer"}, "description": "the memories' ids (from add, search or list)"},
		"session": map[string]any{"type": "string", "description": "every memory of this conversation"},
	},
	"required": []string{},
}

var listSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"agent":   agentProp,
		"session": map[string]any{"type": "string", "description": "only this conversation's memories"},
		"since":   map[string]any{"type": "string", "description": "only memories at or after this RFC 3339 time"},
		"until":   map[string]any{"type": "string", "description": "only memories before this RFC 3339 time"},
		"limit":   map[string]any{"type": "integer", "description": "how many of the latest (default 20)"},
	},
	"required": []string{},
}

const addDescription = "Store one memory (a message, a fact, a decision) in the agent's long-term memory. " +
	"It is durable when the call returns and can be found later with search."

const searchDescription = "Find the memories that answer a question. The text is their timeline, oldest first, each with its time " +
	"and speaker (of two that disagree, the later is the newer); the structured result lists them best first, with scores. " +
	"Relative times in the question (\"yesterday\", \"last week\") narrow the search."

// The tools.
var (
	Add      = Tool{Name: "add", Description: addDescription, InputSchema: addSchema, Annotations: writeHints, Call: add}
	Remember = Tool{Name: "remember", Description: addDescription + " (Same as add.)", InputSchema: addSchema, Annotations: writeHints, Call: add}
	Search   = Tool{Name: "search", Description: searchDescription, InputSchema: searchSchema, Annotations: readHints, Call: search}
	Recall   = Tool{Name: "recall", Description: searchDescription + " (Same as search.)", InputSchema: searchSchema, Annotations: readHints, Call: search}
	Delete   = Tool{Name: "delete", Description: deleteDescription, InputSchema: deleteSchema, Annotations: forgetHints, Call: forget}
	Forget   = Tool{Name: "forget", Description: deleteDescription + " (Same as delete.)", InputSchema: deleteSchema, Annotations: forgetHints, Call: forget}
	List     = Tool{Name: "list", Description: "List the agent's latest memories, optionally of one conversation or time range, rendered as a timeline (the structured result lists them newest first).", InputSchema: listSchema, Annotations: listHints, Call: list}
)

// All is every tool, in the order tools/list shows them.
var All = []Tool{Add, Remember, Search, Recall, List, Delete, Forget}

const deleteDescription = "Delete memories for good: the ones with these ids, or every memory of a conversation. " +
	"They are gone from search and list when the call returns; deleting one already gone changes nothing."

// Instructions is the text a server gives a client at initialize.
const Instructions = "Long-term memory. Call add (or remember) to store what is worth keeping " +
	"(decisions, facts, preferences); call search (or recall) with a question before answering " +
	"anything that depends on the past; list shows the latest memories."

// DefaultBudget bounds the context block search renders.
const DefaultBudget = 4000

// DefaultListLimit is the list tool's default number of memories.
const DefaultListLimit = 20

// CheckArgs checks a tool's arguments against its input schema (an object
// of typed properties, some required) and says what is wrong, naming the
// argument; "" when they fit.
func CheckArgs(schema map[string]any, args json.RawMessage) string {
	var m map[string]json.RawMessage
	if a := bytes.TrimSpace(args); len(a) == 0 || a[0] != '{' || json.Unmarshal(a, &m) != nil {
		return "want a JSON object"
	}
	props := schema["properties"].(map[string]any)
	for _, name := range schema["required"].([]string) {
		if raw, ok := m[name]; !ok || string(raw) == "null" {
			return fmt.Sprintf("%q is required", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		p, ok := props[name]
		if !ok {
			return fmt.Sprintf("unknown argument %q (arguments: %s)", wire.Truncate(name, 40), strings.Join(slices.Sorted(maps.Keys(props)), ", "))
		}
		raw := bytes.TrimSpace(m[name])
		if string(raw) == "null" {
			continue // absent
		}
		want := p.(map[string]any)["type"].(string)
		if got := jsonKind(raw); got != want && !(want == "number" && got == "integer") {
			return fmt.Sprintf("%q must be %s, got %s %s", name, article(want), article(got), wire.Truncate(string(raw), 40))
		}
	}
	return ""
}

// jsonKind names the JSON Schema type of a valid JSON value; a number is
// "integer" when it has no fraction (1e2 and 3.0 included, as JSON Schema
// counts them).
func jsonKind(raw json.RawMessage) string {
	switch raw[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return "integer"
	}
	return "number"
}

func article(kind string) string {
	if kind == "integer" || kind == "object" || kind == "array" {
		return "an " + kind
	}
	return "a " + kind
}

func (env *Env) now() time.Time {
	if env.Now != nil {
		return env.Now()
	}
	return time.Now()
}

func add(ctx context.Context, env *Env, args json.RawMessage) Result {
	rec, err := wire.ParseRecord(args, env.now())
	if err != nil {
		return errorResult(err)
	}
	if rec.Agent, err = env.Agent(rec.Agent); err != nil {
		return errorResult(err)
	}
	if env.Admit != nil {
		release, err := env.Admit(1)
		if err != nil {
			return errorResult(err)
		}
		defer release()
	}
	id, err := env.Store(rec.Agent).Append(ctx, rec)
	if err != nil {
		return errorResult(err)
	}
	return Result{
		Content:           []Content{{Type: "text", Text: fmt.Sprintf("Remembered as memory %d of agent %q.", id, rec.Agent)}},
		StructuredContent: map[string]any{"id": id, "agent": rec.Agent},
	}
}

// searchArgs are the search tool's arguments.
type searchArgs struct {
	Query          string                     `json:"query"`
	Agent          string                     `json:"agent"`
	K              float64                    `json:"k"` // an integer (CheckArgs), 1e1 included
	CurrentSession string                     `json:"current_session"`
	Since          string                     `json:"since"`
	Until          string                     `json:"until"`
	Where          map[string]json.RawMessage `json:"where"`
	Budget         float64                    `json:"budget"`
}

func search(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a searchArgs
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return errorResult(fmt.Errorf("search arguments: %w", err))
	}
	agent, err := env.Agent(a.Agent)
	if err != nil {
		return errorResult(err)
	}
	if a.Budget < 0 {
		return errorResult(fmt.Errorf("%w: budget: want a positive number of characters", ErrArgs))
	}
	// The query goes through wire, which names the field of any error.
	q := map[string]any{"text": a.Query, "agent": agent, "k": int64(a.K), "current_session": a.CurrentSession}
	if a.Since != "" {
		q["since"] = a.Since
	}
	if a.Until != "" {
		q["until"] = a.Until
	}
	if a.Where != nil {
		q["where"] = a.Where
	}
	res, err := recall(ctx, env, q)
	if err != nil {
		return errorResult(err)
	}
	budget := int(min(a.Budget, 1<<30))
	if budget == 0 {
		budget = DefaultBudget
	}
	text := engine.FormatContext(res.Memories, budget)
	if text == "" {
		text = "No memories matched."
	}
	return Result{Content: []Content{{Type: "text", Text: text}}, StructuredContent: wire.FromResult(res)}
}

// list is a recall without a question, which takes the latest records
// passing the filters: the text is their timeline, the structured result
// lists them newest first.
func list(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct {
		Agent   string  `json:"agent"`
		Session string  `json:"session"`
		Since   string  `json:"since"`
		Until   string  `json:"until"`
		Limit   float64 `json:"limit"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return errorResult(fmt.Errorf("list arguments: %w", err))
	}
	agent, err := env.Agent(a.Agent)
	if err != nil {
		return errorResult(err)
	}
	if a.Limit < 0 {
		return errorResult(fmt.Errorf("%w: limit: want a positive number of memories", ErrArgs))
	}
	k := int64(min(a.Limit, 1<<20))
	if k == 0 {
		k = DefaultListLimit
	}
	q := map[string]any{"text": "", "agent": agent, "k": k, "mode": "sparse", "parse_time": false, "session_turns": -1}
	if a.Session != "" {
		q["sessions"] = []string{a.Session}
	}
	if a.Since != "" {
		q["since"] = a.Since
	}
	if a.Until != "" {
		q["until"] = a.Until
	}
	res, err := recall(ctx, env, q)
	if err != nil {
		return errorResult(err)
	}
	slices.SortFunc(res.Memories, func(x, y engine.Memory) int {
		if c := y.Time.Compare(x.Time); c != 0 {
			return c
		}
		return cmp.Compare(y.ID, x.ID) // appended later
	})
	text := engine.FormatContext(res.Memories, 1<<30)
	if text == "" {
		text = "No memories."
	}
	return Result{Content: []Content{{Type: "text", Text: text}}, StructuredContent: wire.FromResult(res)}
}

// recall runs the query q (the JSON of POST /v1/recall, as a map) and
// reports its statistics.
func recall(ctx context.Context, env *Env, q map[string]any) (*engine.Result, error) {
	qb, err := json.Marshal(q)
	if err != nil {
		return nil, err
	}
	query, err := wire.ParseQuery(qb)
	if err != nil {
		return nil, err
	}
	res, err := env.Store(query.Agent).Recall(ctx, query)
	if err != nil {
		return nil, err
	}
	if env.Observe != nil {
		env.Observe(&res.Stats)
	}
	return res, nil
}

// forget deletes the memories a call names: ids, or a session (at least
// one; a whole agent's memory is not one call away from a model).
func forget(ctx context.Context, env *Env, args json.RawMessage) Result {
	var a struct {
		Agent   string   `json:"agent"`
		IDs     []uint64 `json:"ids"`
		Session string   `json:"session"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return errorResult(fmt.Errorf("%w: delete arguments: %w", ErrArgs, err))
	}
	agent, err := env.Agent(a.Agent)
	if err != nil {
		return errorResult(err)
	}
	if len(a.IDs) == 0 && a.Session == "" {
		return errorResult(fmt.Errorf("%w: name the memories: ids, or a session", ErrArgs))
	}
	sel := engine.Selector{Agent: agent, IDs: a.IDs}
	if a.Session != "" {
		sel.Sessions = []string{a.Session}
	}
	res, err := env.Store(agent).Forget(ctx, sel)
	if err != nil {
		return errorResult(err)
	}
	return Result{
		Content:           []Content{{Type: "text", Text: fmt.Sprintf("Deleted %d memories of agent %q.", res.Forgotten, agent)}},
		StructuredContent: map[string]any{"forgotten": res.Forgotten, "agent": agent},
	}
}
