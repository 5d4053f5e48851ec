package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/lazymem/lazymem/cmd/internal/mcptools"
	"github.com/lazymem/lazymem/cmd/internal/wire"
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

// mcpTool is a tool of the registry: its definition, and the scope of
// the route whose operation it exposes.
type mcpTool struct {
	mcptools.Tool
	scope scope
	op    string // the route's operation
}

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
		if s.cluster != nil {
			s.clusterToolCall(w, r, body, req.ID, req.Params) // cluster_mcp.go
			return
		}
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
		"instructions":    mcptools.Instructions,
	}, nil
}

func (s *server) mcpCall(r *http.Request, params json.RawMessage) (any, *rpcError) {
	tool, args, rerr := s.mcpTool(tenantOf(r), params)
	if rerr != nil {
		return nil, rerr
	}
	return tool.Call(r.Context(), s.mcpEnv(r), args), nil
}

// mcpTool is the tool a tools/call names, visible to t, and its
// arguments checked against its schema.
func (s *server) mcpTool(t *tenant, params json.RawMessage) (mcpTool, json.RawMessage, *rpcError) {
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(params, &p); err != nil || p.Name == "" {
		return mcpTool{}, nil, &rpcError{Code: rpcInvalidParams, Message: `tools/call params: want {"name": ..., "arguments": {...}}`}
	}
	args := p.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	tools := s.visibleTools(t)
	i := slices.IndexFunc(tools, func(tl mcpTool) bool { return tl.Name == p.Name })
	if i < 0 {
		if s.cluster != nil && slices.ContainsFunc(s.tools, func(tl mcpTool) bool { return tl.Name == p.Name && t.has(tl.scope) }) {
			return mcpTool{}, nil, &rpcError{Code: rpcInvalidParams, Message: fmt.Sprintf("tool %q is not served in cluster mode (docs/CLUSTER.md)", p.Name)}
		}
		names := make([]string, len(tools))
		for j, tl := range tools {
			names[j] = tl.Name
		}
		return mcpTool{}, nil, &rpcError{Code: rpcInvalidParams, Message: fmt.Sprintf("unknown tool %q (tools: %s)", wire.Truncate(p.Name, 40), strings.Join(names, ", "))}
	}
	if msg := mcptools.CheckArgs(tools[i].InputSchema, args); msg != "" {
		return mcpTool{}, nil, &rpcError{Code: rpcInvalidParams, Message: p.Name + " arguments: " + msg}
	}
	return tools[i], args, nil
}

// mcpEnv is what a tool call of r runs against: the store's handles of
// the caller's tenant.
func (s *server) mcpEnv(r *http.Request) *mcptools.Env {
	t := tenantOf(r)
	return &mcptools.Env{
		Store: func(agent string) mcptools.Store { return s.handle(t, agent) }, Now: s.clock,
		Agent: func(named string) (string, error) { return s.toolAgent(t, named) },
		Admit: func(n int64) (func(), error) {
			if !s.records.take(n) {
				return nil, fmt.Errorf("%w: the records being appended fill the --max-inflight-records budget (%d); retry shortly", mcptools.ErrBusy, s.lim.maxInflight)
			}
			return func() { s.records.give(n) }, nil
		},
		Observe: s.prom.observeRecall,
		Core:    func(agent string) mcptools.CoreStore { return s.coreHandle(t, agent) },
	}
}

// visibleTools are the tools the tenant's scopes allow: a read-only key
// does not see add.
func (s *server) visibleTools(t *tenant) []mcpTool {
	var ts []mcpTool
	for _, tl := range s.tools {
		if t.has(tl.scope) && (s.cluster == nil || clusterRoutes[tl.op]) {
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
		return "", fmt.Errorf("%w: the key %q may not use the agent %q (its agents: %s)", mcptools.ErrAgent, t.name, named, strings.Join(t.list, ", "))
	case named != "":
		return named, nil
	case s.mcpAgent != "" && t.allows(s.mcpAgent):
		return s.mcpAgent, nil
	case !t.all && len(t.list) == 1:
		return t.list[0], nil
	case !t.all:
		return "", fmt.Errorf("%w: name one of the key's agents (%s)", mcptools.ErrAgent, strings.Join(t.list, ", "))
	}
	return "", nil // the engine names the missing field
}
