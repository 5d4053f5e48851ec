package main

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/lazymem/lazymem/cmd/internal/wire"
	"github.com/lazymem/lazymem/engine"
)

// The routes of value feedback and core memory: POST /v1/feedback, POST
// /v1/consolidate, GET /v1/core. Each acts for one agent of the key,
// through the agent's scoped handle: a recall id, record id or unit of
// another tenant reads as unknown.

// callAgent resolves the agent a request acts as from the one it names
// (field names it in errors): a key of one agent may leave it out; a key
// of several must name one of them; an admin of every agent must name one
// unless anyAgent. It writes the error reply and returns false when the
// request cannot go on.
func (s *server) callAgent(w http.ResponseWriter, r *http.Request, named, field string, anyAgent bool) (string, bool) {
	t := tenantOf(r)
	switch {
	case named != "" && !t.allows(named):
		s.fail(w, r, http.StatusForbidden, forbiddenAgent(t, field, named))
		return "", false
	case named != "":
		return named, true
	case !t.all && len(t.list) == 1:
		return t.list[0], true
	case !t.all:
		s.fail(w, r, http.StatusBadRequest, apiError{Code: "invalid", Field: field,
			Message: fmt.Sprintf("%s: name one of the key's agents (%s)", field, strings.Join(t.list, ", "))})
		return "", false
	case anyAgent:
		return "", true
	}
	s.fail(w, r, http.StatusBadRequest, apiError{Code: "invalid", Field: field, Message: field + ": missing: name the agent"})
	return "", false
}

// coreHandle is the agent's scoped handle, for every tenant: the core
// routes always act for one agent.
func (s *server) coreHandle(t *tenant, agent string) *engine.AgentDB {
	return s.db.Agent(agent, t.quota)
}

// feedbackBody is the body of POST /v1/feedback.
type feedbackBody struct {
	Agent    string   `json:"agent"`
	RecallID uint64   `json:"recall_id"`
	IDs      []uint64 `json:"ids"`
	Signal   int      `json:"signal"`
}

// feedback judges memories a recall returned (recall_id and the ids it
// returned, record or unit ids) or records by id (recall_id 0): signal +1
// useful, -1 not. An admin naming no agent judges any recall.
func (s *server) feedback(w http.ResponseWriter, r *http.Request) {
	body, release, ok := s.body(w, r)
	if !ok {
		return
	}
	defer release()
	var fb feedbackBody
	if err := wire.DecodeStrict(body, &fb, "a feedback"); err != nil {
		s.error(w, r, err, "feedback")
		return
	}
	agent, ok := s.callAgent(w, r, fb.Agent, "feedback.agent", true)
	if !ok {
		return
	}
	if s.cluster != nil {
		s.clusterFeedback(w, r, body, agent, fb) // cluster_core.go
		return
	}
	var err error
	if agent == "" {
		err = s.db.Feedback(r.Context(), fb.RecallID, fb.IDs, fb.Signal)
	} else {
		err = s.coreHandle(tenantOf(r), agent).Feedback(r.Context(), fb.RecallID, fb.IDs, fb.Signal)
	}
	if err != nil {
		s.error(w, r, err, "")
		return
	}
	s.reply(w, http.StatusOK, map[string]int{"judged": len(fb.IDs), "signal": fb.Signal})
}

// consolidateBody is the body of POST /v1/consolidate.
type consolidateBody struct {
	Agent   string   `json:"agent"`
	Session string   `json:"session"`
	IDs     []uint64 `json:"ids"`
}

// consolidate turns the agent's queued records (of one session, when
// named; plus ids, whatever their value) into units of core memory.
func (s *server) consolidate(w http.ResponseWriter, r *http.Request) {
	body, release, ok := s.body(w, r)
	if !ok {
		return
	}
	defer release()
	var cb consolidateBody
	if err := wire.DecodeStrict(body, &cb, "a consolidation"); err != nil {
		s.error(w, r, err, "consolidate")
		return
	}
	agent, ok := s.callAgent(w, r, cb.Agent, "consolidate.agent", false)
	if !ok {
		return
	}
	if s.cluster != nil {
		s.clusterConsolidate(w, r, body, agent, cb) // cluster_core.go
		return
	}
	rep, err := s.coreHandle(tenantOf(r), agent).Consolidate(r.Context(), engine.ConsolidateOptions{Session: cb.Session, IDs: cb.IDs})
	if err != nil {
		s.error(w, r, err, "")
		return
	}
	s.reply(w, http.StatusOK, wire.FromConsolidateReport(rep))
}

// coreUnits lists the agent's core memory: ?agent= (optional for a key of
// one agent), ?history=true to include superseded units.
func (s *server) coreUnits(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	agent, ok := s.callAgent(w, r, q.Get("agent"), "agent", false)
	if !ok {
		return
	}
	var history bool
	switch h := q.Get("history"); h {
	case "", "false":
	case "true":
		history = true
	default:
		s.fail(w, r, http.StatusBadRequest, apiError{Code: "invalid", Field: "history",
			Message: fmt.Sprintf("history: %q, want true or false", wire.Truncate(h, 20))})
		return
	}
	if s.cluster != nil {
		s.clusterCore(w, r, agent, history) // cluster_core.go
		return
	}
	units, err := s.coreHandle(tenantOf(r), agent).Core(r.Context(), history)
	if err != nil {
		s.error(w, r, err, "")
		return
	}
	s.reply(w, http.StatusOK, map[string]any{"agent": agent, "units": wire.FromUnits(units)})
}
