package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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

type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

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

// mcpTool is an entry of tools/list.
type mcpTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"inputSchema"`
}

var mcpTools = []mcpTool{
	{
		Name: "remember",
		Description: "Store one memory (a message, a fact, a decision) in the agent's long-term memory. " +
			"It is durable when the call returns and can be found later with recall.",
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"text":    map[string]any{"type": "string", "description": "what to remember"},
				"agent":   map[string]any{"type": "string", "description": "whose memory (default: the daemon's --mcp-agent)"},
				"session": map[string]any{"type": "string", "description": "the conversation it belongs to"},
				"role":    map[string]any{"type": "string", "description": "who said it: user, assistant, tool, or a name"},
				"time":    map[string]any{"type": "string", "description": "when, RFC 3339 (default: now)"},
				"meta":    map[string]any{"type": "object", "description": "labels: key to string or array of strings"},
			},
			"required": []string{"text"},
		},
	},
	{
		Name: "recall",
		Description: "Find the memories that answer a question, best first, rendered with their times and speakers. " +
			"Relative times in the question (\"yesterday\", \"last week\") narrow the search.",
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"query":           map[string]any{"type": "string", "description": "the question, in natural language"},
				"agent":           map[string]any{"type": "string", "description": "whose memory (default: the daemon's --mcp-agent)"},
				"k":               map[string]any{"type": "integer", "description": "how many memories (default 10)"},
				"current_session": map[string]any{"type": "string", "description": "the conversation in progress: its latest turns are considered too"},
				"since":           map[string]any{"type": "string", "description": "only memories at or after this RFC 3339 time"},
				"until":           map[string]any{"type": "string", "description": "only memories before this RFC 3339 time"},
				"where":           map[string]any{"type": "object", "description": "only memories with these labels"},
				"budget":          map[string]any{"type": "integer", "description": "most characters of the rendered context (default 4000)"},
			},
			"required": []string{"query"},
		},
	},
}

// mcpDefaultBudget bounds the context block recall renders.
const mcpDefaultBudget = 4000

func (s *server) mcp(w http.ResponseWriter, r *http.Request) {
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
	if req.ID == nil || string(req.ID) == "null" {
		// A notification (or a response to a request we never send):
		// nothing to answer.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	switch {
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
		result = map[string]any{"tools": mcpTools}
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
	switch p.Name {
	case "remember":
		return s.toolRemember(r, args), nil
	case "recall":
		return s.toolRecall(r, args), nil
	}
	return nil, &rpcError{Code: rpcInvalidParams, Message: fmt.Sprintf("unknown tool %q (tools: remember, recall)", p.Name)}
}

func (s *server) toolRemember(r *http.Request, args json.RawMessage) toolResult {
	rec, err := wire.ParseRecord(args, s.clock())
	if err != nil {
		return toolError(err)
	}
	if rec.Agent == "" {
		rec.Agent = s.mcpAgent
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
	K              int                        `json:"k"`
	CurrentSession string                     `json:"current_session"`
	Since          string                     `json:"since"`
	Until          string                     `json:"until"`
	Where          map[string]json.RawMessage `json:"where"`
	Budget         int                        `json:"budget"`
}

func (s *server) toolRecall(r *http.Request, args json.RawMessage) toolResult {
	var a recallArgs
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return toolError(fmt.Errorf("recall arguments: %w", err))
	}
	// The query goes through wire, which names the field of any error.
	q := map[string]any{"text": a.Query, "agent": a.Agent, "k": a.K, "current_session": a.CurrentSession}
	if q["agent"] == "" {
		q["agent"] = s.mcpAgent
	}
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
	budget := a.Budget
	if budget == 0 {
		budget = mcpDefaultBudget
	}
	res, err := s.db.Recall(r.Context(), query)
	if err != nil {
		return toolError(err)
	}
	text := engine.FormatContext(res.Memories, budget)
	if text == "" {
		text = "No memories matched."
	}
	return toolResult{Content: []toolContent{{Type: "text", Text: text}}, StructuredContent: wire.FromResult(res)}
}
