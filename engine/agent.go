package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/index"
)

// AgentDB is a handle scoped to one agent (tenant): DB is trusted code's
// handle, an AgentDB is what code acting for one tenant gets. None of its
// methods reaches another agent's records:
//
//   - Append and AppendBatch store records of this agent (a record naming
//     another agent is refused; an empty Agent is this one).
//   - Get of another agent's id answers ErrNotFound, exactly as for an id
//     never assigned.
//   - Recall searches this agent only: a Query naming another agent
//     (Agent or Agents) is refused.
//   - Forget forgets this agent's records only (Selector.Agent is this one;
//     listed ids of other agents are ignored).
//   - Export writes this agent's records only.
//
// # Scores
//
// BM25's document frequencies and average length are computed over every
// tenant's records, so a raw BM25 score would let one tenant probe whether
// others use a word. A scoped Recall therefore hides them: Memory.Score and
// Memory.Sparse are zero and Explain's "bm25" reasons carry the rank only.
// Memories are still ranked by the full fused score; Dense (a cosine of
// this tenant's own texts) is kept. The embedding cache is namespaced per
// agent, so its hit and embed counts reveal nothing of another tenant.
//
// # Quotas
//
// A Quota bounds the agent's live records and their text bytes; an append
// over it fails with ErrQuota (nothing of the batch is written).
type AgentDB struct {
	db    *DB
	agent string
	quota Quota
}

// Quota bounds one agent's store. Zero fields are unlimited.
type Quota struct {
	// MaxRecords bounds the agent's live (not forgotten) records.
	MaxRecords int64
	// MaxBytes bounds the sum of the Text bytes of the agent's live
	// records.
	MaxBytes int64
}

// agentUsage is one agent's live text bytes, for quota checks.
type agentUsage struct {
	bytes int64
}

// usageState is the DB's per-agent usage cache: filled from the log on an
// agent's first byte-quota check, kept up to date by its appends, and
// dropped by every Forget (recomputed on the next check).
type usageState struct {
	mu sync.Mutex
	by map[string]*agentUsage
}

// agentUsage returns the agent's live records and, when bytes is set, the
// sum of their text bytes. The caller holds db.mu shared.
func (db *DB) agentUsage(agent string, bytes bool) (int64, int64, error) {
	bm, err := db.idx.Filter(&index.Filter{Agents: []string{agent}})
	if err != nil {
		return 0, 0, err
	}
	recs := int64(bm.GetCardinality())
	if !bytes {
		return recs, 0, nil
	}
	db.usage.mu.Lock()
	defer db.usage.mu.Unlock()
	if u := db.usage.by[agent]; u != nil {
		return recs, u.bytes, nil
	}
	ids := make([]uint64, 0, recs)
	it := bm.Iterator()
	for it.HasNext() {
		ids = append(ids, uint64(it.Next()))
	}
	var total int64
	var c codec.Record
	err = db.log.GetMany(ids, func(id uint64, payload []byte) error {
		if _, err := codec.DecodeRecord(payload, &c); err != nil {
			return fmt.Errorf("%w: id %d: %w", ErrCorrupt, id, err)
		}
		total += int64(len(c.Text))
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	if db.usage.by == nil {
		db.usage.by = map[string]*agentUsage{}
	}
	db.usage.by[agent] = &agentUsage{bytes: total}
	return recs, total, nil
}

// Agent returns a handle scoped to agent, with quota q (zero: none).
// The agent name is validated on first use.
func (db *DB) Agent(agent string, q Quota) *AgentDB {
	return &AgentDB{db: db, agent: agent, quota: q}
}

// Name returns the handle's agent.
func (a *AgentDB) Name() string { return a.agent }

func (a *AgentDB) check() error {
	if a.agent == "" {
		return fieldErr("agent", ErrMissing, "")
	}
	return checkString("agent", a.agent, a.db.opts.MaxFieldBytes)
}

// Append stores r for this agent.
func (a *AgentDB) Append(ctx context.Context, r Record) (uint64, error) {
	ids, err := a.appendBatch(ctx, []Record{r}, "record")
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// AppendBatch stores recs for this agent; see DB.AppendBatch.
func (a *AgentDB) AppendBatch(ctx context.Context, recs []Record) ([]uint64, error) {
	if len(recs) == 0 {
		return nil, fieldErr("records", ErrMissing, "empty batch")
	}
	return a.appendBatch(ctx, recs, "")
}

func (a *AgentDB) appendBatch(ctx context.Context, recs []Record, single string) ([]uint64, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	own := make([]Record, len(recs))
	var bytes int64
	for i, r := range recs {
		if r.Agent != "" && r.Agent != a.agent {
			return nil, fieldErr(recordName(single, i)+".agent", ErrScope,
				fmt.Sprintf("%q is not this handle's agent", r.Agent))
		}
		r.Agent = a.agent
		own[i] = r
		bytes += int64(len(r.Text))
	}
	if err := a.checkQuota(int64(len(recs)), bytes); err != nil {
		return nil, err
	}
	ids, err := a.db.appendBatch(ctx, own, single)
	if err == nil || len(ids) > 0 {
		a.db.usage.mu.Lock()
		if u := a.db.usage.by[a.agent]; u != nil {
			u.bytes += bytes
		}
		a.db.usage.mu.Unlock()
	}
	return ids, err
}

// checkQuota fails when adding n records of b text bytes would pass the
// quota. Concurrent appends of one agent may each pass the check: the
// quota is exact for one writer per agent, approximate (by at most the
// concurrent batches) otherwise.
func (a *AgentDB) checkQuota(n, b int64) error {
	q := a.quota
	if q.MaxRecords <= 0 && q.MaxBytes <= 0 {
		return nil
	}
	db := a.db
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return ErrClosed
	}
	recs, bytes, err := db.agentUsage(a.agent, q.MaxBytes > 0)
	if err != nil {
		return err
	}
	if q.MaxRecords > 0 && recs+n > q.MaxRecords {
		return fmt.Errorf("%w: agent %q: %d records + %d would pass the limit of %d records",
			ErrQuota, a.agent, recs, n, q.MaxRecords)
	}
	if q.MaxBytes > 0 && bytes+b > q.MaxBytes {
		return fmt.Errorf("%w: agent %q: %d text bytes + %d would pass the limit of %d bytes",
			ErrQuota, a.agent, bytes, b, q.MaxBytes)
	}
	return nil
}

// Get returns the record id if it is this agent's; otherwise ErrNotFound,
// the same error as for an id never assigned.
func (a *AgentDB) Get(ctx context.Context, id uint64) (Record, error) {
	r, err := a.db.Get(ctx, id)
	if err != nil {
		return Record{}, err
	}
	if r.Agent != a.agent {
		return Record{}, fmt.Errorf("%w: id %d", ErrNotFound, id)
	}
	return r, nil
}

// Recall searches this agent's records. Query.Agent may be empty or this
// agent; Query.Agents may list only this agent. Raw BM25 scores are hidden
// (see AgentDB).
func (a *AgentDB) Recall(ctx context.Context, q Query) (*Result, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	if q.Agent != "" && q.Agent != a.agent {
		return nil, fieldErr("query.agent", ErrScope, fmt.Sprintf("%q is not this handle's agent", q.Agent))
	}
	for i, ag := range q.Agents {
		if ag != a.agent {
			return nil, fieldErr(fmt.Sprintf("query.agents[%d]", i), ErrScope, fmt.Sprintf("%q is not this handle's agent", ag))
		}
	}
	q.Agent, q.Agents = a.agent, nil
	res, err := a.db.Recall(ctx, q)
	if err != nil {
		return nil, err
	}
	for i := range res.Memories {
		m := &res.Memories[i]
		m.Score, m.Sparse = 0, 0
		for j, r := range m.Reasons {
			if strings.HasPrefix(r, "bm25 ") {
				if k := strings.Index(r, " ("); k > 0 {
					m.Reasons[j] = r[:k]
				}
			}
		}
	}
	return res, nil
}

// Forget forgets records of this agent; see DB.Forget. Selector.Agent may
// be empty or this agent.
func (a *AgentDB) Forget(ctx context.Context, sel Selector) (ForgetResult, error) {
	if err := a.check(); err != nil {
		return ForgetResult{}, err
	}
	if sel.Agent != "" && sel.Agent != a.agent {
		return ForgetResult{}, fieldErr("selector.agent", ErrScope, fmt.Sprintf("%q is not this handle's agent", sel.Agent))
	}
	sel.Agent = a.agent
	return a.db.Forget(ctx, sel)
}

// Pin exempts this agent's records ids from retention; an id of another
// agent is ErrNotFound. See DB.Pin.
func (a *AgentDB) Pin(ctx context.Context, ids ...uint64) error {
	if err := a.check(); err != nil {
		return err
	}
	return a.db.setPins(ctx, ids, true, a.agent)
}

// Unpin makes this agent's records ids subject to retention again; an id
// of another agent is ErrNotFound. See DB.Unpin.
func (a *AgentDB) Unpin(ctx context.Context, ids ...uint64) error {
	if err := a.check(); err != nil {
		return err
	}
	return a.db.setPins(ctx, ids, false, a.agent)
}
