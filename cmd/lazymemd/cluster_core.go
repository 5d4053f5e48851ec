package main

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"

	"github.com/lazymem/lazymem/cmd/internal/cluster"
	"github.com/lazymem/lazymem/cmd/internal/mcptools"
	"github.com/lazymem/lazymem/cmd/internal/wire"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/engine/consolidate"
)

// Feedback, consolidation and core memory in cluster mode
// (docs/CLUSTER.md, "Feedback and core memory"). Each is answered by the
// owner of the agent's partition (forwarded there like a recall):
//   - feedback is a write: the owner checks the records, then publishes
//     it through the stream, and every node applying the partition counts
//     it in its copy (a rebuild replays it);
//   - consolidation runs on the owner's store only (the consolidator may
//     be a model: not run on every copy), and core memory is read there:
//     units live in the owner's store and reach the partition's
//     snapshots with them.

// feedbackOn checks a judgement on ids (public ids of partition p) on l,
// the owner's store, and publishes it: each id must be a record of agent
// ("" any agent: an admin) applied here (the wait is for the highest
// id's sequence). It returns the feedback message's sequence.
func (s *server) feedbackOn(ctx context.Context, p int, l *cluster.Local, agent string, ids []uint64, signal int) (uint64, error) {
	if signal != 1 && signal != -1 {
		return 0, &engine.FieldError{Field: "feedback.signal", Reason: engine.ErrRange, Detail: fmt.Sprintf("%d, want +1 or -1", signal)}
	}
	if len(ids) == 0 {
		return 0, &engine.FieldError{Field: "feedback.ids", Reason: engine.ErrMissing}
	}
	var newest uint64
	for _, id := range ids {
		if seq, ip := cluster.SplitID(id); ip == p {
			newest = max(newest, seq)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, defaultWait)
	err := s.cluster.Wait(wctx, p, newest)
	cancel()
	if err != nil {
		return 0, err
	}
	for i, id := range ids {
		unknown := &engine.FieldError{Field: fmt.Sprintf("feedback.ids[%d]", i), Reason: engine.ErrUnknown, Detail: fmt.Sprintf("no record %d", id)}
		if _, ip := cluster.SplitID(id); ip != p {
			return 0, unknown // another partition's: not the agent's
		}
		loc, ok := l.LocalID(id)
		if !ok {
			return 0, unknown
		}
		rec, err := l.DB().Get(ctx, loc)
		if err != nil || agent != "" && rec.Agent != agent {
			return 0, unknown // forgotten, or another tenant's record: absent
		}
	}
	return s.cluster.Feedback(ctx, p, slices.Clone(ids), signal)
}

// clusterFeedback answers POST /v1/feedback in cluster mode (agent
// checked against the tenant already; "" for an admin naming none: the
// ids' partition is then the first id's). A recall_id is accepted and
// not checked: recalls are one node's, the ids are what is judged.
func (s *server) clusterFeedback(w http.ResponseWriter, r *http.Request, body []byte, agent string, fb feedbackBody) {
	var p int
	switch {
	case agent != "":
		p = s.cluster.Partition(agent)
	case len(fb.IDs) == 0:
		s.fail(w, r, http.StatusBadRequest, apiError{Code: "invalid", Field: "feedback.ids", Message: "feedback.ids: missing: name the records judged"})
		return
	default:
		_, p = cluster.SplitID(fb.IDs[0])
		if p >= s.cluster.Partitions() {
			s.fail(w, r, http.StatusBadRequest, apiError{Code: "invalid", Field: "feedback.ids[0]", Message: fmt.Sprintf("feedback.ids[0]: no record %d", fb.IDs[0])})
			return
		}
	}
	l := s.owned(w, r, p, body)
	if l == nil {
		return
	}
	defer l.Release()
	seq, err := s.feedbackOn(r.Context(), p, l, agent, fb.IDs, fb.Signal)
	if err != nil {
		s.clusterError(w, r, err, "")
		return
	}
	s.reply(w, http.StatusOK, map[string]any{"judged": len(fb.IDs), "signal": fb.Signal, "seq": seq})
}

// consolidateOn consolidates agent's records on l, the owner's store of
// partition p, once it has applied every message of the partition
// acknowledged before the call; opts.IDs are public ids. The report's
// units cite public ids.
func (s *server) consolidateOn(ctx context.Context, p int, l *cluster.Local, t *tenant, agent string, opts engine.ConsolidateOptions) (*engine.ConsolidateReport, error) {
	wctx, cancel := context.WithTimeout(ctx, s.lim.requestTimeout)
	err := s.cluster.Wait(wctx, p, math.MaxUint64)
	cancel()
	if err != nil {
		return nil, err
	}
	locs := make([]uint64, 0, len(opts.IDs))
	for i, id := range opts.IDs {
		loc, ok := l.LocalID(id)
		if _, ip := cluster.SplitID(id); !ok || ip != p {
			return nil, &engine.FieldError{Field: fmt.Sprintf("consolidate.ids[%d]", i), Reason: engine.ErrUnknown, Detail: fmt.Sprintf("no record %d of agent %q", id, agent)}
		}
		locs = append(locs, loc)
	}
	opts.IDs = locs
	rep, err := l.DB().Agent(agent, t.quota).Consolidate(ctx, opts)
	if err != nil {
		return nil, err
	}
	publicUnits(l, rep.Units)
	return rep, nil
}

// coreOn is agent's core memory on l, the owner's store, its units
// citing public ids.
func coreOn(ctx context.Context, l *cluster.Local, t *tenant, agent string, history bool) ([]consolidate.Unit, error) {
	units, err := l.DB().Agent(agent, t.quota).Core(ctx, history)
	if err != nil {
		return nil, err
	}
	publicUnits(l, units)
	return units, nil
}

// publicUnits rewrites the units' source ids (the store's local ids) as
// public ids; a source forgotten since is left out.
func publicUnits(l *cluster.Local, units []consolidate.Unit) {
	for i := range units {
		src := units[i].SourceIDs[:0:0]
		for _, loc := range units[i].SourceIDs {
			if pub, ok := l.Public(loc); ok {
				src = append(src, pub)
			}
		}
		units[i].SourceIDs = src
	}
}

// clusterConsolidate answers POST /v1/consolidate from the owner of the
// agent's partition.
func (s *server) clusterConsolidate(w http.ResponseWriter, r *http.Request, body []byte, agent string, cb consolidateBody) {
	p := s.cluster.Partition(agent)
	l := s.owned(w, r, p, body)
	if l == nil {
		return
	}
	defer l.Release()
	rep, err := s.consolidateOn(r.Context(), p, l, tenantOf(r), agent, engine.ConsolidateOptions{Session: cb.Session, IDs: cb.IDs})
	if err != nil {
		s.clusterError(w, r, err, "")
		return
	}
	s.reply(w, http.StatusOK, wire.FromConsolidateReport(rep))
}

// clusterCore answers GET /v1/core from the owner of the agent's
// partition.
func (s *server) clusterCore(w http.ResponseWriter, r *http.Request, agent string, history bool) {
	l := s.owned(w, r, s.cluster.Partition(agent), nil)
	if l == nil {
		return
	}
	defer l.Release()
	units, err := coreOn(r.Context(), l, tenantOf(r), agent, history)
	if err != nil {
		s.clusterError(w, r, err, "")
		return
	}
	s.reply(w, http.StatusOK, map[string]any{"agent": agent, "units": wire.FromUnits(units)})
}

// clusterCoreStore is the CoreStore of the MCP tools in cluster mode for
// one agent: the owner's partition store the call was routed to.
type clusterCoreStore struct {
	c     *clusterStore
	agent string
}

// store is the owner's partition store, or the error naming field when
// the call reached no partition of the agent.
func (cc clusterCoreStore) store(field string) (*cluster.Local, error) {
	c := cc.c
	if c.l == nil || cc.agent == "" || c.s.cluster.Partition(cc.agent) != c.p {
		return nil, &engine.FieldError{Field: field, Reason: engine.ErrMissing, Detail: "name the agent: in cluster mode a call reaches one agent's partition"}
	}
	return c.l, nil
}

func (cc clusterCoreStore) Feedback(ctx context.Context, _ uint64, ids []uint64, signal int) error {
	l, err := cc.store("feedback.agent")
	if err != nil {
		return err
	}
	_, err = cc.c.s.feedbackOn(ctx, cc.c.p, l, cc.agent, ids, signal)
	return cc.c.noteMoved(err)
}

func (cc clusterCoreStore) Consolidate(ctx context.Context, opts engine.ConsolidateOptions) (*engine.ConsolidateReport, error) {
	l, err := cc.store("consolidate.agent")
	if err != nil {
		return nil, err
	}
	rep, err := cc.c.s.consolidateOn(ctx, cc.c.p, l, cc.c.t, cc.agent, opts)
	return rep, cc.c.noteMoved(err)
}

func (cc clusterCoreStore) Core(ctx context.Context, history bool) ([]consolidate.Unit, error) {
	l, err := cc.store("agent")
	if err != nil {
		return nil, err
	}
	return coreOn(ctx, l, cc.c.t, cc.agent, history)
}

var _ mcptools.CoreStore = clusterCoreStore{}
