package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lazymem/lazymem/cmd/internal/cluster"
	"github.com/lazymem/lazymem/cmd/internal/wire"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/segment"
)

// server is the HTTP/JSON API over one engine.DB. Every handler is safe for
// concurrent use (the engine is).
type server struct {
	// db is set before state turns ready and only read by handlers that
	// saw it ready (gated).
	db    *engine.DB
	state atomic.Int32
	lim   limits
	// records counts the records being appended, decoding the bytes of
	// request bodies held, across all requests (limits.maxInflight,
	// limits.maxDecode).
	records, decoding *budget
	clock             func() time.Time
	log               *slog.Logger // request log; nil: none
	errLog            *slog.Logger // internal errors
	// mcpAgent is the agent the MCP tools use when a call names none.
	mcpAgent string
	// token, when set, is the bearer token every request but the health
	// check must carry.
	token string
	// keys, when set (--keys), are the credentials and what each may do;
	// replaced whole on SIGHUP.
	keys atomic.Pointer[keyring]
	prom *promMetrics
	// tools are the MCP tools of the registry's routes.
	tools []mcpTool
	// origins are the browser origins allowed to call the API; a request
	// carrying any other Origin header is refused (see guarded).
	origins map[string]bool
	// hosts are the Host headers answered (see hostChecked).
	hosts hostSet
	// cluster is the node in cluster mode (cluster.go), set before the
	// state turns ready; nil for a standalone daemon.
	cluster *cluster.Node
	// stopped reports a store whose storage engine stopped (db.Stopped;
	// set with db), which the readiness probe answers 503.
	stopped func() error
}

// newServer serves db within lim; the caller sets the optional fields.
// With a nil db the server answers 503 but for /v1/live until open.
func newServer(db *engine.DB, lim limits) *server {
	s := &server{
		lim: lim, records: newBudget(lim.maxInflight), decoding: newBudget(lim.maxDecode),
		clock: time.Now, errLog: slog.New(slog.DiscardHandler), origins: map[string]bool{},
		hosts: loopbackHosts,
	}
	s.prom = newPromMetrics(s)
	s.tools = routeTools(registry)
	if db != nil {
		s.open(db)
	}
	return s
}

// open starts serving db.
func (s *server) open(db *engine.DB) {
	s.db = db
	s.stopped = db.Stopped
	s.state.Store(stateReady)
}

// loopbackHosts is the default hostSet.
var loopbackHosts, _ = parseHosts(defaultHosts)

// apiError is the body of every error response:
//
//	{"error": {"code": "invalid", "field": "records[3].agent", "message": "..."}}
type apiError struct {
	Code    string `json:"code"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// routes returns the API's handler: the registry's routes behind the
// checks every request passes (clean path, host, origin, credential, the
// store open, the deadline), logged.
func (s *server) routes() http.Handler {
	return s.logged(canonical(s, s.hostChecked(s.guarded(s.authorized(s.gated(s.deadlined(s.mux(registry))))))))
}

// canonical answers 404 to a path that is not clean ("//v1/stats",
// "/v1/../v1/stats", "/v1/records/", "*", a CONNECT authority): the mux
// would redirect those, and a client of a JSON API wants an error it can
// read, not a Location to follow.
func canonical(s *server, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p == "" || p[0] != '/' || path.Clean(p) != p {
			s.fail(w, r, http.StatusNotFound, apiError{Code: "not_found", Message: fmt.Sprintf("no such endpoint: %q (paths are clean: no //, no .., no trailing /)", wire.Truncate(p, 80))})
			return
		}
		h.ServeHTTP(w, r)
	})
}

// guarded refuses requests sent by a web page of another origin. Browsers
// let any page POST a "simple" request to 127.0.0.1 without asking (no
// CORS preflight for text/plain bodies): without this, a page a user
// visits could write memories into a local daemon or call its MCP tools
// (the MCP transport asks servers to validate Origin for this reason).
// Programs (curl, SDKs, agent runtimes) send no Origin header and pass.
func (s *server) guarded(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o := r.Header.Get("Origin")
		if o == "" {
			h.ServeHTTP(w, r)
			return
		}
		if !s.origins[o] && !sameOrigin(o, r) {
			s.fail(w, r, http.StatusForbidden, apiError{Code: "forbidden_origin",
				Message: fmt.Sprintf("requests from the web origin %q are refused (lazymemd --allow-origin %s allows it)", o, o)})
			return
		}
		// An allowed origin gets CORS: its page may read the replies, and
		// the preflight of a JSON or authorized request is answered here.
		w.Header().Set("Access-Control-Allow-Origin", o)
		w.Header().Add("Vary", "Origin")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			w.Header().Set("Access-Control-Allow-Methods", "GET, POST")
			w.Header().Set("Access-Control-Allow-Headers", "Content-Type, Authorization, Mcp-Protocol-Version")
			w.Header().Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// sameOrigin reports whether a browser request comes from a page this
// daemon served (the inspector): its Origin is the request's own scheme
// and Host. hostChecked has already refused any Host this daemon is not
// reached by, so a rebinding page cannot pass as same-origin.
func sameOrigin(origin string, r *http.Request) bool {
	scheme := "http://"
	if r.TLS != nil {
		scheme = "https://"
	}
	return origin == scheme+r.Host
}

// methods dispatches on the request method; HEAD is served as GET.
func (s *server) methods(hs map[string]http.HandlerFunc) http.HandlerFunc {
	allow := make([]string, 0, len(hs))
	for m := range hs {
		allow = append(allow, m)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		m := r.Method
		if m == http.MethodHead {
			m = http.MethodGet
		}
		if h, ok := hs[m]; ok {
			h(w, r)
			return
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		s.fail(w, r, http.StatusMethodNotAllowed, apiError{Code: "method_not_allowed",
			Message: fmt.Sprintf("%s %s: want %s", r.Method, r.URL.Path, strings.Join(allow, " or "))})
	}
}

// live answers while the process runs, whatever the store's state.
func (s *server) live(w http.ResponseWriter, r *http.Request) {
	s.reply(w, http.StatusOK, map[string]string{"status": "ok"})
}

// ready answers 200 once the store is open and until shutdown starts,
// unless its storage engine stopped (a restart is the only way back: an
// orchestrator's readiness probe should route writes elsewhere).
func (s *server) ready(w http.ResponseWriter, r *http.Request) {
	switch s.state.Load() {
	case stateReady:
		if s.stopped != nil {
			if err := s.stopped(); err != nil {
				s.reply(w, http.StatusServiceUnavailable, map[string]string{"status": "stopped", "error": err.Error()})
				return
			}
		}
		s.reply(w, http.StatusOK, map[string]string{"status": "ok"})
	case stateOpening:
		s.reply(w, http.StatusServiceUnavailable, map[string]string{"status": "opening"})
	default:
		s.reply(w, http.StatusServiceUnavailable, map[string]string{"status": "closing"})
	}
}

// gated answers 503 to everything but the probes until the store is open
// and once shutdown starts.
func (s *server) gated(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := s.state.Load()
		if st == stateReady || probePath(r.URL.Path) {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
		if st == stateOpening {
			s.fail(w, r, http.StatusServiceUnavailable, apiError{Code: "starting", Message: "the store is opening; retry when GET /v1/ready answers 200"})
			return
		}
		s.fail(w, r, http.StatusServiceUnavailable, apiError{Code: "closed", Message: "the daemon is shutting down"})
	})
}

// appendRecords takes one record or {"records": [...]} and appends them as
// one durable batch: the 200 reply means they are on disk. Any invalid
// record rejects the whole body and writes nothing.
func (s *server) appendRecords(w http.ResponseWriter, r *http.Request) {
	body, release, ok := s.body(w, r)
	if !ok {
		return
	}
	defer release()
	batch := wire.IsBatch(body)
	prefix := "record"
	if batch {
		prefix = "" // the fields already read "records[3].time"
	}
	recs, err := wire.ParseRecords(body, s.clock())
	if err != nil {
		s.error(w, r, err, prefix)
		return
	}
	if len(recs) > s.lim.maxBatch {
		s.fail(w, r, http.StatusRequestEntityTooLarge, apiError{Code: "too_large", Field: "records",
			Message: fmt.Sprintf("records: %d records, limit %d (lazymemd --max-batch); split the batch", len(recs), s.lim.maxBatch)})
		return
	}
	if t := tenantOf(r); !t.all {
		for i := range recs {
			if !t.allows(recs[i].Agent) {
				field := fmt.Sprintf("records[%d].agent", i)
				if !batch {
					field = "record.agent"
				}
				s.fail(w, r, http.StatusForbidden, forbiddenAgent(t, field, recs[i].Agent))
				return
			}
		}
	}
	n := int64(len(recs))
	if !s.records.take(n) {
		s.busy(w, r, fmt.Sprintf("the records being appended fill the --max-inflight-records budget (%d)", s.lim.maxInflight))
		return
	}
	defer s.records.give(n)
	if s.cluster != nil {
		s.clusterAppend(w, r, recs, batch)
		return
	}
	// A tenant's records go through the scoped handle of their agent;
	// a batch mixing several of the key's agents (each checked above)
	// through the store.
	var st store = s.db
	if t := tenantOf(r); !t.all && sameAgent(recs) {
		st = s.handle(t, recs[0].Agent)
	} else if t.limited() {
		// The quota is checked per agent by its handle, and a batch is
		// written whole or not at all: a key with a quota sends one
		// agent's records per batch.
		s.fail(w, r, http.StatusBadRequest, apiError{Code: "invalid", Field: "records",
			Message: fmt.Sprintf("records: the key %q has a quota (%s per agent): send one agent's records per batch", t.name, t.quotaText())})
		return
	}
	var ids []uint64
	if !batch {
		var id uint64
		id, err = st.Append(r.Context(), recs[0])
		ids = []uint64{id}
	} else {
		ids, err = st.AppendBatch(r.Context(), recs)
	}
	if err != nil {
		s.error(w, r, err, "")
		return
	}
	s.reply(w, http.StatusOK, map[string][]uint64{"ids": ids})
}

func (s *server) getRecord(w http.ResponseWriter, r *http.Request) {
	if s.cluster != nil {
		s.clusterGet(w, r)
		return
	}
	raw := r.PathValue("id")
	id, err := strconv.ParseUint(raw, 10, 64)
	if err != nil || id == 0 {
		s.fail(w, r, http.StatusBadRequest, apiError{Code: "invalid", Field: "id",
			Message: fmt.Sprintf("id: %q is not a record id (a positive integer)", wire.Truncate(raw, 40))})
		return
	}
	t := tenantOf(r)
	var rec engine.Record
	if !t.all && len(t.list) == 1 {
		rec, err = s.db.Agent(t.list[0], engine.Quota{}).Get(r.Context(), id)
	} else {
		rec, err = s.db.Get(r.Context(), id)
	}
	if !t.all && (errors.Is(err, engine.ErrDeleted) || err == nil && !t.allows(rec.Agent)) {
		// Another tenant's record, or a deleted one (whose agent is
		// unknown), answers exactly as an id never assigned: the status
		// and the body say nothing about the store's other tenants.
		err = fmt.Errorf("%w: id %d", engine.ErrNotFound, id)
	}
	if err != nil {
		s.error(w, r, err, "")
		return
	}
	s.reply(w, http.StatusOK, wire.FromRecord(rec))
}

func (s *server) recall(w http.ResponseWriter, r *http.Request) {
	body, release, ok := s.body(w, r)
	if !ok {
		return
	}
	defer release()
	q, err := wire.ParseQuery(body)
	if err != nil {
		s.error(w, r, err, "query")
		return
	}
	if e := clampAgents(tenantOf(r), &q.Agent, &q.Agents); e != nil {
		s.fail(w, r, http.StatusForbidden, *e)
		return
	}
	if e := s.lim.checkQuery(&q); e != nil {
		s.fail(w, r, http.StatusRequestEntityTooLarge, *e)
		return
	}
	if s.cluster != nil {
		s.clusterRecall(w, r, body, q)
		return
	}
	var res *engine.Result
	switch t := tenantOf(r); {
	case t.all:
		res, err = s.db.Recall(r.Context(), q)
	case len(q.Agents) == 0 || len(q.Agents) == 1 && q.Agents[0] == q.Agent:
		res, err = s.handle(t, q.Agent).Recall(r.Context(), q)
	default:
		// Several of the key's agents (each checked): the store, with the
		// raw BM25 scores hidden as the scoped handle hides them.
		if res, err = s.db.Recall(r.Context(), q); err == nil {
			hideBM25(res)
		}
	}
	if err != nil {
		s.error(w, r, err, "")
		return
	}
	s.prom.observeRecall(&res.Stats)
	s.reply(w, http.StatusOK, wire.FromResult(res))
}

// stats answers the store's metrics in snake case to an admin; to a key
// of some agents, only what concerns them: each agent's live records (the
// store-wide numbers would tell one tenant about the others' activity).
func (s *server) stats(w http.ResponseWriter, r *http.Request) {
	t := tenantOf(r)
	if s.cluster != nil {
		s.clusterStats(w, r)
		return
	}
	if t.has(scopeAdmin) || t.all {
		s.reply(w, http.StatusOK, wire.FromMetrics(s.db.Metrics()))
		return
	}
	out := wire.AgentStats{Scope: "agents", Agents: []wire.AgentCount{}}
	if t.limited() {
		out.Quota = &wire.Quota{Records: t.quota.MaxRecords, Bytes: t.quota.MaxBytes}
	}
	for _, a := range t.list {
		// A recall without text, filters only, is the agent's filter
		// bitmap: its cardinality is the count, nothing is read or
		// embedded.
		res, err := s.db.Recall(r.Context(), engine.Query{Agent: a, K: 1, Mode: engine.ModeSparse, SessionTurns: -1})
		if err != nil {
			s.error(w, r, err, "")
			return
		}
		out.Agents = append(out.Agents, wire.AgentCount{Agent: a, Records: res.Stats.Filtered})
	}
	s.reply(w, http.StatusOK, out)
}

// body reads the request body, at most maxBody bytes, holding its size
// in the decoding budget until release is called.
func (s *server) body(w http.ResponseWriter, r *http.Request) (b []byte, release func(), ok bool) {
	if e := checkContentType(r); e != nil {
		s.fail(w, r, http.StatusUnsupportedMediaType, *e)
		return nil, nil, false
	}
	b, held, err := readBody(http.MaxBytesReader(w, r.Body, s.lim.maxBody), s.lim.maxBody, r.ContentLength, s.decoding)
	var tooBig *http.MaxBytesError
	switch {
	case errors.Is(err, errBodyTooLarge), errors.As(err, &tooBig):
		s.fail(w, r, http.StatusRequestEntityTooLarge, apiError{Code: "too_large", Field: "body",
			Message: fmt.Sprintf("body: over %d bytes (lazymemd --max-body); split the batch", s.lim.maxBody)})
		return nil, nil, false
	case errors.Is(err, errBodyBusy):
		s.busy(w, r, fmt.Sprintf("the request bodies being decoded fill the --max-decode-bytes budget (%d bytes)", s.lim.maxDecode))
		return nil, nil, false
	case err != nil:
		s.fail(w, r, http.StatusBadRequest, apiError{Code: "bad_body", Field: "body", Message: "body: reading it failed: " + err.Error()})
		return nil, nil, false
	}
	release = func() { s.decoding.give(held) }
	if len(bytes.TrimSpace(b)) == 0 {
		release()
		s.fail(w, r, http.StatusBadRequest, apiError{Code: "invalid", Field: "body", Message: "body: empty: want a JSON object"})
		return nil, nil, false
	}
	return b, release, true
}

// checkContentType refuses a body declared as anything but JSON: a
// Content-Type header, when present, must be application/json (any
// parameters, such as charset, are accepted) or a +json type. Without the
// header the body is read as JSON. Besides telling a client that sends a
// form or text what is wrong, it keeps browsers' "simple" cross-origin
// requests (text/plain, forms) away from the handlers.
func checkContentType(r *http.Request) *apiError {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
		return nil
	}
	return &apiError{Code: "unsupported_media_type", Field: "Content-Type",
		Message: fmt.Sprintf("Content-Type: %q is not JSON; send application/json", wire.Truncate(ct, 60))}
}

// error replies to a failed call with the status its cause deserves
// (classify); an error that is not the client's is logged.
func (s *server) error(w http.ResponseWriter, r *http.Request, err error, prefix string) {
	status, e := classify(err, prefix, r.Context().Err() != nil, s.lim.requestTimeout)
	if t := tenantOf(r); e.Code == "quota" && t.limited() {
		e.Message += fmt.Sprintf(" (the key %q's quota in --keys: %s per agent; forget records to make room)", t.name, t.quotaText())
	}
	if status >= 500 && status != http.StatusServiceUnavailable {
		s.errLog.Error("request failed", "id", requestID(r), "method", r.Method, "path", r.URL.Path, "status", status, "err", err)
	}
	s.fail(w, r, status, e)
}

// classify maps an error to its status and JSON error. What the client
// can fix is 4xx; a full disk is 507 (the operator frees space, the
// request can be retried as is); a request stopped by its deadline or by
// shutdown is 503; an embedder failure 502; anything else 500 (a bug or a
// corrupt store). prefix ("record", "query") is put before a decoding
// error's field so that it reads like the engine's own ("query.k",
// "record.text"); expired reports that the request's own context is done
// (its --request-timeout passed).
func classify(err error, prefix string, expired bool, timeout time.Duration) (int, apiError) {
	msg := strings.TrimPrefix(err.Error(), "lazymem: ")
	var we *wire.Error
	var fe *engine.FieldError
	switch {
	case errors.Is(err, segment.ErrStopped):
		// First, even when a full disk caused it: freeing space does not
		// bring a stopped storage engine back, a restart does.
		return http.StatusServiceUnavailable, apiError{Code: "stopped",
			Message: "the store's storage engine stopped after a failed write (reads go on; restart the daemon to write again): " + msg}
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		// First: a full disk can surface wrapped in any of the engine's
		// errors, and it is the one the operator must act on.
		return http.StatusInsufficientStorage, apiError{Code: "disk_full",
			Message: "the disk holding the store is full (free space, then retry): " + msg}
	case errors.Is(err, engine.ErrScope):
		// Checked by the daemon first; the engine's scoped handle is the
		// second line.
		return http.StatusForbidden, apiError{Code: "forbidden", Message: msg}
	case errors.Is(err, engine.ErrQuota):
		return http.StatusForbidden, apiError{Code: "quota", Message: msg}
	case errors.Is(err, engine.ErrBudget):
		// A dense recall over more records than the query's limit: the
		// client narrows the filters or asks for mode lazy.
		return http.StatusRequestEntityTooLarge, apiError{Code: "too_large", Field: "query.mode",
			Message: msg + " (narrow the filters, or use mode lazy)"}
	case errors.As(err, &we):
		// The message names the field by the same path as "field"
		// ("record.time: ..."), as the engine's own field errors do.
		field := we.Field
		if prefix != "" {
			field = strings.TrimSuffix(prefix+"."+field, ".")
		}
		if field != "" {
			msg = field + ": " + we.Msg
		} else {
			msg = we.Msg
		}
		return http.StatusBadRequest, apiError{Code: "invalid", Field: field, Message: msg}
	case errors.As(err, &fe):
		return http.StatusBadRequest, apiError{Code: "invalid", Field: fe.Field, Message: msg}
	case errors.Is(err, engine.ErrInvalid):
		return http.StatusBadRequest, apiError{Code: "invalid", Message: msg}
	case errors.Is(err, engine.ErrNoEmbedder):
		return http.StatusBadRequest, apiError{Code: "invalid", Field: "query.mode",
			Message: msg + ": this store has no embedder; ask for mode sparse"}
	case errors.Is(err, engine.ErrNotFound), errors.Is(err, engine.ErrDeleted):
		// A forgotten record answers as one never assigned: the reply
		// says nothing of what the store once held.
		return http.StatusNotFound, apiError{Code: "not_found", Message: msg}
	case errors.Is(err, engine.ErrEmbed):
		return http.StatusBadGateway, apiError{Code: "embedder", Message: msg}
	case errors.Is(err, engine.ErrClosed):
		return http.StatusServiceUnavailable, apiError{Code: "closed", Message: "the store is closing: " + msg}
	case errors.Is(err, context.DeadlineExceeded) && expired:
		return http.StatusServiceUnavailable, apiError{Code: "timeout",
			Message: fmt.Sprintf("the request took longer than %v (lazymemd --request-timeout): %s", timeout, msg)}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable, apiError{Code: "canceled", Message: msg}
	case errors.Is(err, engine.ErrCorrupt), segment.IsCorruption(err):
		// A record that does not decode, or a log block that fails its
		// checksum (the engine passes the log's *CorruptionError up as is).
		return http.StatusInternalServerError, apiError{Code: "corrupt", Message: msg}
	}
	return http.StatusInternalServerError, apiError{Code: "internal", Message: msg}
}

// fail writes the error body. Every message starts with "lazymem: ", as
// the engine's errors do, whichever layer wrote it.
func (s *server) fail(w http.ResponseWriter, r *http.Request, status int, e apiError) {
	if !strings.HasPrefix(e.Message, msgPrefix) {
		e.Message = msgPrefix + e.Message
	}
	s.reply(w, status, map[string]apiError{"error": e})
}

// msgPrefix starts every error message.
const msgPrefix = "lazymem: "

func (s *server) reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // a client that hung up is not our error
}

// statusWriter records the status a handler wrote, for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (sw *statusWriter) WriteHeader(code int) {
	sw.status = code
	sw.ResponseWriter.WriteHeader(code)
}

func (sw *statusWriter) Write(b []byte) (int, error) {
	if sw.status == 0 {
		sw.status = http.StatusOK
	}
	n, err := sw.ResponseWriter.Write(b)
	sw.bytes += n
	return n, err
}

// requestIDHeader carries a request's id: the client's when it sent a
// usable one (a proxy's trace id), else a new one; echoed in the reply
// and in every log line about the request.
const requestIDHeader = "X-Request-Id"

type reqInfoKey struct{}

// reqInfo is what the request log says about a request beyond its line:
// its id, and the key it was authorized with (set by authorized).
type reqInfo struct {
	id, key string
}

// requestID is the id of r ("" outside logged).
func requestID(r *http.Request) string {
	if ri, ok := r.Context().Value(reqInfoKey{}).(*reqInfo); ok {
		return ri.id
	}
	return ""
}

// newRequestID is 16 hex digits: unique enough to find a request in a
// day of logs, short enough to read.
func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// usableID reports whether a client's request id can be logged as is:
// short, printable ASCII without spaces or quotes.
func usableID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c > '~' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// logged gives each request its id, echoes it in X-Request-Id, and logs
// one line per request when s.log is set.
func (s *server) logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(requestIDHeader)
		if !usableID(id) {
			id = newRequestID()
		}
		w.Header().Set(requestIDHeader, id)
		ri := &reqInfo{id: id}
		r = r.WithContext(context.WithValue(r.Context(), reqInfoKey{}, ri))
		t0 := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		if s.log != nil {
			s.log.Info("request", "id", id, "method", r.Method, "path", r.URL.Path, "status", sw.status,
				"bytes", sw.bytes, "dur", time.Since(t0).Round(time.Microsecond), "key", ri.key)
		}
	})
}

// sameAgent reports whether every record of recs is of one agent.
func sameAgent(recs []engine.Record) bool {
	for i := range recs {
		if recs[i].Agent != recs[0].Agent {
			return false
		}
	}
	return true
}
