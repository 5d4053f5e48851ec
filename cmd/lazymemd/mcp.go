package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/lazymem/lazymem/cmd/internal/wire"
	"github.com/lazymem/lazymem/engine"
)

// The MCP endpoint: POST /mcp speaks the Model Context Protocol's
// streamable HTTP transport, stateless and JSON only (no event stream, no
// session id), so that an agent framework can use the store as two tools:
// remember (append a memory) and recall (find the memories that answer a
// question, rendered as a context block). One JSON-RPC 2.0 message per
// request; a notification gets 202 and no body.

// mcpVersions are the protocol revisions served, newest first. initialize
// echoes the client's when it is one of them, else offers the newest.
var mcpVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}

// JSON-RPC 2.0 error codes.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
	rpcMethodNotFound = -32601
	rpcInvalidParams  = -32602
)

// rpcRequest is any JSON-RPC message the client sends: a request (method
// and id), a notification (method, no id) or a response (result or error,
// no method).
type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// mcpVersionHeader is the header a client sends on every request after
// initialize, naming the negotiated protocol revision.
const mcpVersionHeader = "Mcp-Protocol-Version"

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// mcpTool is an entry of tools/list, and what calling it does.
type mcpTool struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description"`
	InputSchema map[string]any   `json:"inputSchema"`
	Annotations *toolAnnotations `json:"annotations,omitempty"`
	// scope is the scope of the route whose operation the tool exposes
	// (set by routeTools).
	scope scope
	call  func(s *server, r *http.Request, t *tenant, args json.RawMessage) toolResult
}

// toolAnnotations are the hints a client shows its user or uses to decide
// whether a call needs confirmation. The protocol's defaults are the
// cautious ones (destructive, not idempotent), so each is spelled out.
type toolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    bool   `json:"readOnlyHint"`
	DestructiveHint bool   `json:"destructiveHint"`
	IdempotentHint  bool   `json:"idempotentHint"`
	OpenWorldHint   bool   `json:"openWorldHint"`
}

var (
	writeHints = &toolAnnotations{Title: "Add a memory"}
	readHints  = &toolAnnotations{Title: "Search memories", ReadOnlyHint: true, IdempotentHint: true}
	listHints  = &toolAnnotations{Title: "List memories", ReadOnlyHint: true, IdempotentHint: true}
)

var agentProp = map[string]any{"type": "string", "description": "whose memory (default: the daemon's --mcp-agent, or the key's only agent)"}

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

var listSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"agent":   agentProp,
		"session": map[string]any{"type": "string", "description": "only this conversation's memories"},
		"since":   map[string]any{"type": "string", "description": "only memories at or after this RFC 3339 time"},
		"until":   map[string]any{"type": "string", "description": "only memories before this RFC 3339 time"},
		"limit":   map[string]any{"type": "integer", "description": "how many, newest first (default 20)"},
	},
	"required": []string{},
}

const addDescription = "Store one memory (a message, a fact, a decision) in the agent's long-term memory. " +
	"It is durable when the call returns and can be found later with search."

const searchDescription = "Find the memories that answer a question, best first, rendered with their times and speakers. " +
	"Relative times in the question (\"yesterday\", \"last week\") narrow the search."

// The tools. add/search/list are the names agents' memory tools usually
// have; remember and recall are aliases with the same schema.
var (
	toolAdd      = mcpTool{Name: "add", Description: addDescription, InputSchema: addSchema, Annotations: writeHints, call: (*server).toolRemember}
	toolRemember = mcpTool{Name: "remember", Description: addDescription + " (Same as add.)", InputSchema: addSchema, Annotations: writeHints, call: (*server).toolRemember}
	toolSearch   = mcpTool{Name: "search", Description: searchDescription, InputSchema: searchSchema, Annotations: readHints, call: (*server).toolRecall}
	toolRecall   = mcpTool{Name: "recall", Description: searchDescription + " (Same as search.)", InputSchema: searchSchema, Annotations: readHints, call: (*server).toolRecall}
	toolList     = mcpTool{Name: "list", Description: "List the agent's latest memories, newest first, optionally of one conversation or time range.", InputSchema: listSchema, Annotations: listHints, call: (*server).toolList}
)

// mcpDefaultBudget bounds the context block recall renders.
const mcpDefaultBudget = 4000

func (s *server) mcp(w http.ResponseWriter, r *http.Request) {
	// The transport: a revision this server does not speak (or garbage)
	// is refused before the body is read. No header is the oldest
	// revision's client, which never sends one.
	if v, ok := r.Header[mcpVersionHeader]; ok && (len(v) != 1 || !slices.Contains(mcpVersions, v[0])) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(rpcResponse{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{Code: rpcInvalidRequest,
			Message: fmt.Sprintf("unsupported %s %q (this server speaks %s)", mcpVersionHeader, wire.Truncate(strings.Join(v, ", "), 40), strings.Join(mcpVersions, ", "))}})
		return
	}
	body, release, ok := s.body(w, r)
	if !ok {
		return
	}
	defer release()
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
		s.rpcReply(w, nil, nil, &rpcError{Code: rpcInvalidRequest, Message: "batches are not supported: send one message per request"})
		return
	}
	var req rpcRequest
	if err := json.Unmarshal(body, &req); err != nil {
		code := rpcParseError
		if json.Valid(body) {
			code = rpcInvalidRequest // JSON, but not a request object
		}
		s.rpcReply(w, nil, nil, &rpcError{Code: code, Message: "not a JSON-RPC message: " + err.Error()})
		return
	}
	noID := req.ID == nil || string(req.ID) == "null"
	isResponse := req.Method == "" && (req.Result != nil || req.Error != nil)
	if isResponse || (req.Method != "" && noID) {
		// A notification, or a response to a request this server never
		// sends: accepted, nothing to answer.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	switch {
	case noID:
		s.rpcReply(w, nil, nil, &rpcError{Code: rpcInvalidRequest, Message: `not a JSON-RPC request, notification or response: want "method" (and "id" for a request) or "result"/"error"`})
		return
	case req.Method == "":
		s.rpcReply(w, req.ID, nil, &rpcError{Code: rpcInvalidRequest, Message: `a request needs a "method"`})
		return
	case req.JSONRPC != "2.0":
		s.rpcReply(w, req.ID, nil, &rpcError{Code: rpcInvalidRequest, Message: `"jsonrpc" must be "2.0"`})
		return
	case !validID(req.ID):
		s.rpcReply(w, nil, nil, &rpcError{Code: rpcInvalidRequest, Message: `"id" must be a string or a number`})
		return
	}
	var result any
	var rerr *rpcError
	switch req.Method {
	case "initialize":
		result, rerr = s.mcpInitialize(req.Params)
	case "ping":
		result = struct{}{}
	case "tools/list":
		result = map[string]any{"tools": s.visibleTools(tenantOf(r))}
	case "tools/call":
		result, rerr = s.mcpCall(r, req.Params)
	default:
		rerr = &rpcError{Code: rpcMethodNotFound, Message: fmt.Sprintf("method %q not found (this server has tools only: initialize, ping, tools/list, tools/call)", req.Method)}
	}
	s.rpcReply(w, req.ID, result, rerr)
}

// buildVersion is the module version the binary was built from, "(devel)"
// for a build from a work tree.
func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

func validID(id json.RawMessage) bool {
	if len(id) > 0 && id[0] == '"' {
		return true
	}
	_, err := strconv.ParseFloat(string(id), 64)
	return err == nil
}

func (s *server) rpcReply(w http.ResponseWriter, id json.RawMessage, result any, e *rpcError) {
	if id == nil {
		id = json.RawMessage("null")
	}
	resp := rpcResponse{JSONRPC: "2.0", ID: id, Error: e}
	if e == nil {
		resp.Result = result
	}
	s.reply(w, http.StatusOK, resp)
}

func (s *server) mcpInitialize(params json.RawMessage) (any, *rpcError) {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, &rpcError{Code: rpcInvalidParams, Message: "initialize params: " + err.Error()}
		}
	}
	version := mcpVersions[0]
	if slices.Contains(mcpVersions, p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	return map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{"tools": map[string]any{"listChanged": false}},
		"serverInfo":      map[string]any{"name": "lazymemd", "version": buildVersion()},
		"instructions": "Long-term memory. Call remember to store what is worth keeping " +
			"(decisions, facts, preferences); call recall with a question before answering " +
			"anything that depends on the past.",
	}, nil
}

// toolResult is the result of tools/call: a failure of the tool itself
// (bad arguments, the store rejecting them) is a result with isError set,
// so the model reads the message and can correct its call.
type toolResult struct {
	Content           []toolContent `json:"content"`
	StructuredContent any           `json:"structuredContent,omitempty"`
	IsError           bool          `json:"isError"`
}

type toolContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func toolError(err error) toolResult {
	return toolResult{IsError: true, Content: []toolContent{{Type: "text", Text: strings.TrimPrefix(err.Error(), "lazymem: ")}}}
}

func (s *server) mcpCall(r *http.Request, params json.RawMessage) (any, *rpcError) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.Name == "" {
		return nil, &rpcError{Code: rpcInvalidParams, Message: `tools/call params: want {"name": ..., "arguments": {...}}`}
	}
	args := p.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	t := tenantOf(r)
	tools := s.visibleTools(t)
	i := slices.IndexFunc(tools, func(tl mcpTool) bool { return tl.Name == p.Name })
	if i < 0 {
		names := make([]string, len(tools))
		for j, tl := range tools {
			names[j] = tl.Name
		}
		return nil, &rpcError{Code: rpcInvalidParams, Message: fmt.Sprintf("unknown tool %q (tools: %s)", wire.Truncate(p.Name, 40), strings.Join(names, ", "))}
	}
	if msg := checkArgs(tools[i].InputSchema, args); msg != "" {
		return nil, &rpcError{Code: rpcInvalidParams, Message: p.Name + " arguments: " + msg}
	}
	return tools[i].call(s, r, t, args), nil
}

// visibleTools are the tools the tenant's scopes allow: a read-only key
// does not see add.
func (s *server) visibleTools(t *tenant) []mcpTool {
	var ts []mcpTool
	for _, tl := range s.tools {
		if t.has(tl.scope) {
			ts = append(ts, tl)
		}
	}
	return ts
}

// toolAgent is the agent a tool call acts as: the one it names, which
// must be the tenant's; else --mcp-agent when it is the tenant's; else
// the tenant's only agent.
func (s *server) toolAgent(t *tenant, named string) (string, error) {
	switch {
	case named != "" && !t.allows(named):
		return "", fmt.Errorf("agent: the key %q may not use the agent %q (its agents: %s)", t.name, named, strings.Join(t.list, ", "))
	case named != "":
		return named, nil
	case s.mcpAgent != "" && t.allows(s.mcpAgent):
		return s.mcpAgent, nil
	case !t.all && len(t.list) == 1:
		return t.list[0], nil
	case !t.all:
		return "", fmt.Errorf("agent: name one of the key's agents (%s)", strings.Join(t.list, ", "))
	}
	return "", nil // the engine names the missing field
}

// checkArgs checks a tool's arguments against its input schema (an object
// of typed properties, some required) and says what is wrong, naming the
// argument; "" when they fit. A call that does not fit the schema is the
// caller's protocol mistake (invalid params); values the schema allows
// but the store rejects are the tool's errors (isError), told to the
// model so it can correct itself.
func checkArgs(schema map[string]any, args json.RawMessage) string {
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

func (s *server) toolRemember(r *http.Request, t *tenant, args json.RawMessage) toolResult {
	rec, err := wire.ParseRecord(args, s.clock())
	if err != nil {
		return toolError(err)
	}
	if rec.Agent, err = s.toolAgent(t, rec.Agent); err != nil {
		return toolError(err)
	}
	if !s.records.take(1) {
		return toolError(fmt.Errorf("the daemon is busy: the records being appended fill the --max-inflight-records budget (%d); retry shortly", s.lim.maxInflight))
	}
	defer s.records.give(1)
	id, err := s.db.Append(r.Context(), rec)
	if err != nil {
		return toolError(err)
	}
	return toolResult{
		Content:           []toolContent{{Type: "text", Text: fmt.Sprintf("Remembered as memory %d of agent %q.", id, rec.Agent)}},
		StructuredContent: map[string]any{"id": id, "agent": rec.Agent},
	}
}

// recallArgs are the recall tool's arguments.
type recallArgs struct {
	Query          string                     `json:"query"`
	Agent          string                     `json:"agent"`
	K              float64                    `json:"k"` // an integer (checkArgs), 1e1 included
	CurrentSession string                     `json:"current_session"`
	Since          string                     `json:"since"`
	Until          string                     `json:"until"`
	Where          map[string]json.RawMessage `json:"where"`
	Budget         float64                    `json:"budget"`
}

func (s *server) toolRecall(r *http.Request, t *tenant, args json.RawMessage) toolResult {
	var a recallArgs
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return toolError(fmt.Errorf("recall arguments: %w", err))
	}
	// The query goes through wire, which names the field of any error.
	agent, err := s.toolAgent(t, a.Agent)
	if err != nil {
		return toolError(err)
	}
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
	qb, err := json.Marshal(q)
	if err != nil {
		return toolError(err)
	}
	query, err := wire.ParseQuery(qb)
	if err != nil {
		return toolError(err)
	}
	if a.Budget < 0 {
		return toolError(errors.New("budget: want a positive number of characters"))
	}
	budget := int(min(a.Budget, 1<<30))
	if budget == 0 {
		budget = mcpDefaultBudget
	}
	res, err := s.db.Recall(r.Context(), query)
	if err != nil {
		return toolError(err)
	}
	s.prom.observeRecall(&res.Stats)
	text := engine.FormatContext(res.Memories, budget)
	if text == "" {
		text = "No memories matched."
	}
	return toolResult{Content: []toolContent{{Type: "text", Text: text}}, StructuredContent: wire.FromResult(res)}
}

// defaultListLimit is the list tool's default number of memories.
const defaultListLimit = 20

// toolList lists the latest memories: a recall without a question, which
// takes the latest records passing the filters, newest first.
func (s *server) toolList(r *http.Request, t *tenant, args json.RawMessage) toolResult {
	var a struct {
		Agent   string  `json:"agent"`
		Session string  `json:"session"`
		Since   string  `json:"since"`
		Until   string  `json:"until"`
		Limit   float64 `json:"limit"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return toolError(fmt.Errorf("list arguments: %w", err))
	}
	agent, err := s.toolAgent(t, a.Agent)
	if err != nil {
		return toolError(err)
	}
	if a.Limit < 0 {
		return toolError(errors.New("limit: want a positive number of memories"))
	}
	k := int64(min(a.Limit, 1<<20))
	if k == 0 {
		k = defaultListLimit
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
	qb, err := json.Marshal(q)
	if err != nil {
		return toolError(err)
	}
	query, err := wire.ParseQuery(qb)
	if err != nil {
		return toolError(err)
	}
	res, err := s.db.Recall(r.Context(), query)
	if err != nil {
		return toolError(err)
	}
	s.prom.observeRecall(&res.Stats)
	mems := res.Memories
	slices.SortStableFunc(mems, func(x, y engine.Memory) int { return y.Time.Compare(x.Time) })
	text := engine.FormatContext(mems, 1<<20)
	if text == "" {
		text = "No memories."
	}
	res.Memories = mems
	return toolResult{Content: []toolContent{{Type: "text", Text: text}}, StructuredContent: wire.FromResult(res)}
}
