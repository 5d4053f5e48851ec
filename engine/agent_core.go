package engine

import (
	"context"

	"github.com/lazymem/lazymem/engine/consolidate"
)

// Feedback judges memories this agent's recalls returned; see DB.Feedback.
// A recall id of another agent, or a record id of another agent, reads as
// unknown.
func (a *AgentDB) Feedback(ctx context.Context, recallID uint64, ids []uint64, signal int) error {
	if err := a.check(); err != nil {
		return err
	}
	return a.db.feedback(ctx, a.agent, recallID, ids, signal)
}

// Consolidate consolidates this agent's records; see DB.Consolidate.
func (a *AgentDB) Consolidate(ctx context.Context, opts ConsolidateOptions) (*ConsolidateReport, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	return a.db.Consolidate(ctx, a.agent, opts)
}

// EndSession ends one of this agent's sessions; see DB.EndSession.
func (a *AgentDB) EndSession(ctx context.Context, session string) (*ConsolidateReport, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	return a.db.EndSession(ctx, a.agent, session)
}

// Core lists this agent's core memory; see DB.Core.
func (a *AgentDB) Core(ctx context.Context, history bool) ([]consolidate.Unit, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	return a.db.Core(ctx, a.agent, history)
}

// Value returns the value of one of this agent's records; another agent's
// id is ErrNotFound, as for an id never assigned.
func (a *AgentDB) Value(ctx context.Context, id uint64) (Value, error) {
	if _, err := a.Get(ctx, id); err != nil {
		return Value{}, err
	}
	return a.db.Value(ctx, id)
}
