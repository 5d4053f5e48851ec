// Command lazymemd is the lazymem daemon: one store served over an
// HTTP/JSON API on a single node, and over the Model Context Protocol.
//
//	lazymemd --db ./mem [--addr 127.0.0.1:7373] [--embedder hash] [--keys keys.json]
//
// Endpoints (docs/API.md has the full reference and curl examples):
//
//	GET  /v1/live          200 while the process runs (liveness)
//	GET  /v1/ready         200 once the store is open, 503 while it opens
//	                       or the daemon shuts down (readiness; /v1/health
//	                       is the same)
//	POST /v1/records       one record, or {"records": [...]} -> {"ids": [...]}
//	                       (durable when the reply arrives; a bad record
//	                       rejects the whole body and writes nothing)
//	GET  /v1/records/{id}  the stored record
//	POST /v1/recall        a query -> {"memories": [...], "stats": {...}}
//	POST /v1/forget        forget records by ids, session, role, labels, time
//	GET  /v1/export        an agent's live records as JSONL
//	POST /v1/feedback      judge a recall's memories (+1, -1)
//	POST /v1/consolidate   distill an agent's queued records into core memory
//	GET  /v1/core          an agent's core memory units
//	GET  /v1/stats         the store's metrics, snake case
//	GET  /metrics          Prometheus exposition (admin)
//	GET  /v1/openapi.json  the API's OpenAPI description (docs/openapi.yaml)
//	GET  /                 the inspector: search and browse in a browser
//	POST /mcp              the Model Context Protocol (streamable HTTP, JSON
//	                       replies): tools add, search, list, delete,
//	                       feedback, consolidate, core (and the aliases
//	                       remember, recall, forget, list_core)
//
// Errors are JSON, {"error": {"code", "field", "message"}}, the message
// starting "lazymem: " and naming the same field path, with status 400
// for bad input (the field named), 401, 403, 404 (a forgotten record as a
// missing one), 405, 413 over a limit, 415 for a Content-Type other than
// JSON, 502 when the embedder fails, 503 while opening or shutting down,
// when a shared budget is spent or past the request timeout, 507 when the
// disk is full. Only the probes' 503 ({"status": ...}) and net/http's own
// plain-text 431 differ. Replies never hold null: a record's session and
// role are "" and its meta {} when empty. The daemon listens before the store is open (the probes
// answer meanwhile); SIGINT or SIGTERM, even during the open, stops taking
// connections, lets the requests in flight finish (up to
// --shutdown-timeout) and closes the store (up to --shutdown-timeout
// again). SIGHUP reloads --keys.
//
// # Files by role
//
//	main.go     flags, start, shutdown, SIGHUP
//	routes.go   the route registry, scopes, the mux built from it
//	server.go   the middleware chain and the REST handlers
//	tenancy.go  --keys: credentials, tenants, agent checks
//	metrics.go  Prometheus export of the engine's snapshots
//	lifecycle.go  scoped handles, POST /v1/forget, GET /v1/export
//	core.go     POST /v1/feedback, POST /v1/consolidate, GET /v1/core
//	mcp.go      the MCP transport (tools are in cmd/internal/mcptools)
//	openapi.go  GET /v1/openapi.json
//	inspector.go, inspector/index.html  the inspector's page
//	limits.go   bounded cost: per-request limits, shared budgets
//	hosts.go    Host header checks (DNS rebinding)
//	cluster.go  --cluster: appends to the stream, forwarding to a
//	            partition's owner, ?min_seq= waits and, without it,
//	            the wait for what this node published to the partition
//	            (read your node's writes; docs/CLUSTER.md; the node
//	            itself is cmd/internal/cluster)
//
// # Adding a route
//
// Every operation is one entry of registry (routes.go). To add one, say
// POST /v1/feedback (it and the other core routes, core.go, were added
// this way):
//
//  1. write the handler, func (s *server) feedback(w http.ResponseWriter,
//     r *http.Request), taking the tenant from tenantOf(r), refusing any
//     agent it names outside the tenant (forbiddenAgent), and calling the
//     store through s.handle(tenant, agent), the engine's handle scoped
//     to that agent;
//
//  2. add the entry:
//
//     {method: "POST", path: "/v1/feedback", op: "feedback", scope: scopeWrite,
//     handle: (*server).feedback, tools: []mcptools.Tool{mcptools.Feedback}},
//
//  3. describe the operation under the same operationId in
//     docs/openapi.yaml, and add its rows to docs/API.md.
//
// The entry alone gives the route its method dispatch (405 for others),
// its scope check (403 without it), its request count and latency
// series in /metrics, and its MCP tools in tools/list and tools/call
// (with the route's scope); the tenancy and spec tests then drive it.
// An MCP tool is a mcptools.Tool: its schema, annotations (the delete
// tool is destructive and idempotent) and Call.
package main
