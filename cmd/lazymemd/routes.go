package main

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/lazymem/lazymem/cmd/internal/mcptools"
	"github.com/lazymem/lazymem/cmd/internal/wire"
)

// scope is what a credential may do. A route declares the one it needs;
// a key (--keys) lists the ones it grants.
type scope uint8

// Scopes. scopeNone is the probes': anyone may call them.
const (
	scopeNone   scope = iota
	scopeRead         // recall, get a record, the agents' stats
	scopeWrite        // append records
	scopeForget       // forget records
	scopeAdmin        // store-wide stats, metrics, every agent
)

var scopeNames = [...]string{scopeNone: "none", scopeRead: "read", scopeWrite: "write", scopeForget: "forget", scopeAdmin: "admin"}

func (sc scope) String() string { return scopeNames[sc] }

// parseScope reads a scope's name as keys files spell it.
func parseScope(name string) (scope, bool) {
	i := slices.Index(scopeNames[:], name)
	if i <= int(scopeNone) {
		return 0, false
	}
	return scope(i), true
}

// route is one operation of the API: everything the daemon, its OpenAPI
// document and its MCP tools know about it is here, in one entry.
type route struct {
	method string // GET or POST (HEAD is served as GET)
	path   string // a net/http pattern path: "/v1/records/{id}"
	// op is the operation's operationId in docs/openapi.yaml.
	op string
	// scope is what the caller's credential must grant.
	scope scope
	// handle serves the request; the tenant is already checked against
	// the scope.
	handle func(s *server, w http.ResponseWriter, r *http.Request)
	// tools are the MCP tools that expose the same operation (they need
	// the same scope). The first is the primary name, the others aliases
	// agents look for.
	tools []mcptools.Tool
}

// registry is every route of the daemon, in the order the docs list
// them. Adding an operation is adding one entry here: the mux, the scope
// check, the request metrics, the spec check (every registry route must
// be in docs/openapi.yaml and vice versa) and the MCP tools list all read
// this table.
var registry = []route{
	{method: "GET", path: "/v1/live", op: "live", scope: scopeNone, handle: (*server).live},
	{method: "GET", path: "/v1/ready", op: "ready", scope: scopeNone, handle: (*server).ready},
	{method: "GET", path: "/v1/health", op: "health", scope: scopeNone, handle: (*server).ready},
	{method: "POST", path: "/v1/records", op: "appendRecords", scope: scopeWrite, handle: (*server).appendRecords,
		tools: []mcptools.Tool{mcptools.Add, mcptools.Remember}},
	{method: "GET", path: "/v1/records/{id}", op: "getRecord", scope: scopeRead, handle: (*server).getRecord},
	{method: "POST", path: "/v1/recall", op: "recall", scope: scopeRead, handle: (*server).recall,
		tools: []mcptools.Tool{mcptools.Search, mcptools.Recall, mcptools.List}},
	{method: "POST", path: "/v1/forget", op: "forget", scope: scopeForget, handle: (*server).forget,
		tools: []mcptools.Tool{mcptools.Delete, mcptools.Forget}},
	{method: "GET", path: "/v1/export", op: "export", scope: scopeRead, handle: (*server).export},
	{method: "POST", path: "/v1/backup", op: "backup", scope: scopeAdmin, handle: (*server).backup},
	{method: "POST", path: "/v1/feedback", op: "feedback", scope: scopeWrite, handle: (*server).feedback,
		tools: []mcptools.Tool{mcptools.Feedback}},
	{method: "POST", path: "/v1/consolidate", op: "consolidate", scope: scopeWrite, handle: (*server).consolidate,
		tools: []mcptools.Tool{mcptools.Consolidate}},
	{method: "GET", path: "/v1/core", op: "core", scope: scopeRead, handle: (*server).coreUnits,
		tools: []mcptools.Tool{mcptools.Core, mcptools.ListCore}},
	{method: "GET", path: "/v1/stats", op: "stats", scope: scopeRead, handle: (*server).stats},
	{method: "GET", path: "/metrics", op: "metrics", scope: scopeAdmin, handle: (*server).metrics},
	{method: "GET", path: "/v1/openapi.json", op: "openapi", scope: scopeNone, handle: (*server).openapi},
	// "/{$}" is exactly "/": the page of the inspector (public, see
	// publicPath; its calls need the user's credential).
	{method: "GET", path: "/{$}", op: "inspector", scope: scopeNone, handle: (*server).inspector},
	// The MCP endpoint checks each tool's scope itself: tools/list and
	// initialize need no more than a valid credential.
	{method: "POST", path: "/mcp", op: "mcp", scope: scopeNone, handle: (*server).mcp},
}

// docPath is the route's path as clients and the OpenAPI description
// write it ("/{$}", the mux's exact "/", is "/").
func (rt route) docPath() string { return strings.TrimSuffix(rt.path, "{$}") }

// routeTools is every MCP tool of the registry, in registry order, each
// with the scope of its route.
func routeTools(routes []route) []mcpTool {
	var ts []mcpTool
	for _, rt := range routes {
		for _, t := range rt.tools {
			ts = append(ts, mcpTool{Tool: t, scope: rt.scope, op: rt.op})
		}
	}
	return ts
}

// mux builds the handler of routes: each route wrapped in its scope check
// and its metrics, several methods of one path dispatched, other methods
// 405, unknown paths 404, all as JSON errors.
func (s *server) mux(routes []route) http.Handler {
	mux := http.NewServeMux()
	byPath := map[string]map[string]http.HandlerFunc{}
	var paths []string
	for _, rt := range routes {
		if byPath[rt.path] == nil {
			byPath[rt.path] = map[string]http.HandlerFunc{}
			paths = append(paths, rt.path)
		}
		byPath[rt.path][rt.method] = s.instrumented(rt, s.scoped(rt, s.clusterGate(rt, func(w http.ResponseWriter, r *http.Request) { rt.handle(s, w, r) })))
	}
	for _, p := range paths {
		mux.HandleFunc(p, s.methods(byPath[p]))
	}
	var known []string
	for _, rt := range routes {
		known = append(known, rt.method+" "+rt.docPath())
	}
	list := strings.Join(known, ", ")
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, http.StatusNotFound, apiError{Code: "not_found", Message: fmt.Sprintf("no such endpoint: %s (see %s)", wire.Truncate(r.URL.Path, 80), list)})
	})
	return mux
}

// scoped refuses a request whose credential lacks the route's scope.
func (s *server) scoped(rt route, h http.HandlerFunc) http.HandlerFunc {
	if rt.scope == scopeNone {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if t := tenantOf(r); !t.has(rt.scope) {
			s.fail(w, r, http.StatusForbidden, apiError{Code: "forbidden",
				Message: fmt.Sprintf("%s %s needs the %q scope; the key %q has %s", rt.method, rt.path, rt.scope, t.name, t.scopeList())})
			return
		}
		h(w, r)
	}
}
