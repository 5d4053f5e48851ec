package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"

	"github.com/lazymem/lazymem/cmd/internal/cluster"
	"github.com/lazymem/lazymem/cmd/internal/mcptools"
	"github.com/lazymem/lazymem/engine"
)

// The MCP tools in cluster mode (docs/CLUSTER.md, "MCP"): add and
// remember publish through the stream from any node, as POST /v1/records
// does; search, recall, list, delete and forget act on one agent's
// partition, so the whole JSON-RPC request is routed as POST /v1/recall
// is: answered by the partition's owner, forwarded there by any other
// node with its body and credential (the owner checks the credential
// and the agent again: tenancy holds through forwarding). feedback,
// consolidate and core are routed the same way (cluster_core.go).

// clusterToolCall answers a tools/call in cluster mode: the reply (a
// result, a tool error or a JSON-RPC error) is written to w.
func (s *server) clusterToolCall(w http.ResponseWriter, r *http.Request, body []byte, id, params json.RawMessage) {
	t := tenantOf(r)
	tool, args, rerr := s.mcpTool(t, params)
	if rerr != nil {
		s.rpcReply(w, id, nil, rerr)
		return
	}
	env := s.mcpEnv(r)
	cs := &clusterStore{s: s, r: r, t: t}
	env.Store = func(string) mcptools.Store { return cs }
	env.Core = func(agent string) mcptools.CoreStore { return clusterCoreStore{c: cs, agent: agent} }
	if tool.op == "appendRecords" {
		s.rpcReply(w, id, tool.Call(r.Context(), env, args), nil)
		return
	}
	var a struct {
		Agent string `json:"agent"`
	}
	_ = json.Unmarshal(args, &a) // a string when present (CheckArgs)
	agent, err := s.toolAgent(t, a.Agent)
	if err != nil || agent == "" {
		// The tool answers it, as a standalone daemon's does: the agent
		// refused, or none named (clusterStore names the field).
		s.rpcReply(w, id, tool.Call(r.Context(), env, args), nil)
		return
	}
	p := s.cluster.Partition(agent)
	forwarded := r.Header.Get(forwardedHeader) != ""
	for hop := 0; ; hop++ {
		var rw http.ResponseWriter = w
		var ew *rpcErrorWriter
		if !forwarded {
			// Routing errors become the tool call's error result; a
			// forwarded call's are left as they are for the node that
			// forwarded it (it routes again on Lazymem-Not-Owner).
			ew = &rpcErrorWriter{w: w, h: http.Header{}}
			rw = ew
		}
		l := s.owned(rw, r, p, body)
		if l == nil {
			if ew != nil {
				ew.finish(s, id)
			}
			return
		}
		cs.l, cs.p, cs.moved = l, p, nil
		res := tool.Call(r.Context(), env, args)
		l.Release()
		cs.l = nil
		switch {
		case cs.moved != nil && forwarded:
			s.clusterError(w, r, cs.moved, "") // the node that forwarded it routes it again
			return
		case cs.moved != nil && hop < maxReroutes:
			continue // given up before the forget was published: route again
		}
		s.rpcReply(w, id, res, nil)
		return
	}
}

// clusterStore is the store of the MCP tools in cluster mode: appends
// are published; recalls and forgets act on the owner's partition store
// l (nil: the call named no agent).
type clusterStore struct {
	s *server
	r *http.Request
	t *tenant
	l *cluster.Local
	p int
	// moved: the partition was given up before a forget was published
	// (ErrNotOwner): the call is routed again.
	moved error
}

func (c *clusterStore) Append(ctx context.Context, rec engine.Record) (uint64, error) {
	if c.t.limited() {
		return 0, fmt.Errorf("lazymem: records: the key %q has a quota, and quotas are not enforced in cluster mode", c.t.name)
	}
	ids, _, err := c.s.cluster.Append(ctx, []engine.Record{rec}, true, requestID(c.r))
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

func (c *clusterStore) Recall(ctx context.Context, q engine.Query) (*engine.Result, error) {
	if c.l == nil || q.Agent == "" || len(q.Agents) > 0 || c.s.cluster.Partition(q.Agent) != c.p {
		return nil, &engine.FieldError{Field: "query.agent", Reason: engine.ErrMissing, Detail: "name the agent: in cluster mode a search reaches one agent's partition"}
	}
	var res *engine.Result
	var err error
	if c.t.all {
		res, err = c.l.DB().Recall(ctx, q)
	} else {
		res, err = c.l.DB().Agent(q.Agent, c.t.quota).Recall(ctx, q)
	}
	if err != nil {
		return nil, err
	}
	for i := range res.Memories {
		publicRecord(c.l, &res.Memories[i].Record)
	}
	return res, nil
}

// Forget forgets sel (one agent's records, public ids) through the
// stream as POST /v1/forget does: ids of another partition are not the
// agent's and are ignored, as ids never assigned are.
func (c *clusterStore) Forget(ctx context.Context, sel engine.Selector) (engine.ForgetResult, error) {
	if c.l == nil || sel.Agent == "" || c.s.cluster.Partition(sel.Agent) != c.p {
		return engine.ForgetResult{}, &engine.FieldError{Field: "selector.agent", Reason: engine.ErrMissing, Detail: "name the agent"}
	}
	if len(sel.IDs) > 0 {
		ids := sel.IDs[:0:0]
		for _, id := range sel.IDs {
			if _, ip := cluster.SplitID(id); ip == c.p {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			return engine.ForgetResult{}, nil
		}
		sel.IDs = ids
	}
	// Every message of the partition before this point is applied first,
	// so the selector sees every acknowledged record.
	ctx, cancel := context.WithTimeout(ctx, c.s.lim.requestTimeout)
	defer cancel()
	l, err := c.s.cluster.CatchUp(ctx, c.p)
	if err != nil {
		return engine.ForgetResult{}, c.noteMoved(err)
	}
	defer l.Release()
	pubs, err := c.s.forgetSelected(ctx, c.p, l, sel)
	return engine.ForgetResult{Forgotten: len(pubs)}, err
}

// noteMoved notes err when it says the partition was given up before
// the call's write was published (ErrNotOwner): the call is routed
// again. It returns err.
func (c *clusterStore) noteMoved(err error) error {
	if errors.Is(err, cluster.ErrNotOwner) {
		c.moved = err
	}
	return err
}

// rpcErrorWriter stands for the reply while a tools/call is routed: a
// 200 (the owner's JSON-RPC reply, forwarded) goes through; an HTTP
// error (no owner yet, not caught up, a bad ?min_seq=) is kept, and
// finish answers it as the tool call's error result.
type rpcErrorWriter struct {
	w      http.ResponseWriter
	h      http.Header
	status int
	buf    bytes.Buffer
	passed bool
}

func (e *rpcErrorWriter) Header() http.Header { return e.h }

func (e *rpcErrorWriter) WriteHeader(code int) {
	if e.status != 0 {
		return
	}
	e.status = code
	if code == http.StatusOK {
		maps.Copy(e.w.Header(), e.h)
		e.w.WriteHeader(code)
		e.passed = true
	}
}

func (e *rpcErrorWriter) Write(b []byte) (int, error) {
	if e.status == 0 {
		e.WriteHeader(http.StatusOK)
	}
	if e.passed {
		return e.w.Write(b)
	}
	return e.buf.Write(b)
}

// finish answers the error kept, if any, as a tool error whose text is
// the error's message.
func (e *rpcErrorWriter) finish(s *server, id json.RawMessage) {
	if e.passed {
		return
	}
	var body struct {
		Error apiError `json:"error"`
	}
	msg := fmt.Sprintf("the partition's owner answered HTTP %d", e.status)
	if json.Unmarshal(e.buf.Bytes(), &body) == nil && body.Error.Message != "" {
		msg = strings.TrimPrefix(body.Error.Message, msgPrefix)
	}
	if ra := e.h.Get("Retry-After"); ra != "" {
		msg += " (retry in " + ra + " s)"
	}
	s.rpcReply(e.w, id, mcptools.Result{IsError: true, Content: []mcptools.Content{{Type: "text", Text: msg}}}, nil)
}
