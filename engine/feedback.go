package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/segment"
)

// recallRing remembers the last recalls (what each returned) so that
// feedback can be checked against them. It is bounded
// (CoreOptions.RecallRing) and lives in memory only: after a restart,
// feedback names record ids without a recall id.
type recallRing struct {
	mu   sync.Mutex
	next uint64 // the last id given out
	buf  []recallEntry
}

type recallEntry struct {
	id     uint64
	agents []string
	recs   []uint64 // the raw records returned
	units  []uint64 // the core units returned
}

// add remembers a recall and returns its id (from 1).
func (r *recallRing) add(e recallEntry) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next++
	e.id = r.next
	r.buf[(r.next-1)%uint64(len(r.buf))] = e
	return e.id
}

func (r *recallRing) get(id uint64) (recallEntry, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if id == 0 || id > r.next || r.next-id >= uint64(len(r.buf)) {
		return recallEntry{}, false
	}
	e := r.buf[(id-1)%uint64(len(r.buf))]
	return e, e.id == id
}

// rememberRecall stores what p returned in the ring and returns the
// recall's id.
func (db *DB) rememberRecall(p *plan) uint64 {
	e := recallEntry{agents: p.filter.Agents}
	for i := range p.res.Memories {
		m := &p.res.Memories[i]
		if m.Unit != nil {
			e.units = append(e.units, m.Unit.ID)
		} else {
			e.recs = append(e.recs, m.ID)
		}
	}
	return db.ring.add(e)
}

// Feedback records a judgement on memories: signal +1 (useful) or -1 (not
// useful). With a recallID (Result.RecallID of one of the last
// CoreOptions.RecallRing recalls) every id must be one that recall
// returned: a record id, or the id of a core unit (the feedback then goes
// to the records the unit cites). With recallID 0 the ids are record ids
// and each must exist. Positive feedback queues a record for the next
// consolidation; a record with more negative than positive feedback
// leaves the queue. Feedback is counted in memory and persisted by the
// background flush, like recall counts.
func (db *DB) Feedback(ctx context.Context, recallID uint64, ids []uint64, signal int) error {
	return db.feedback(ctx, "", recallID, ids, signal)
}

// feedback is Feedback; a non-empty agent scopes it: the recall must be
// one of the agent's alone, and plain ids the agent's records.
func (db *DB) feedback(ctx context.Context, agent string, recallID uint64, ids []uint64, signal int) error {
	if signal != 1 && signal != -1 {
		return fieldErr("feedback.signal", ErrRange, fmt.Sprintf("%d, want +1 or -1", signal))
	}
	if len(ids) == 0 {
		return fieldErr("feedback.ids", ErrMissing, "")
	}
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var recs []uint64
	if recallID != 0 {
		e, ok := db.ring.get(recallID)
		if ok && agent != "" && (len(e.agents) != 1 || e.agents[0] != agent) {
			ok = false // another tenant's recall reads as unknown
		}
		if !ok {
			return fmt.Errorf("%w: feedback.recall_id %d is not one of the last %d recalls", ErrNotFound, recallID, len(db.ring.buf))
		}
		db.core.mu.Lock()
		for i, id := range ids {
			switch {
			case slices.Contains(e.recs, id):
				recs = append(recs, id)
			case slices.Contains(e.units, id):
				if u := db.core.units[id]; u != nil {
					recs = append(recs, u.u.SourceIDs...)
				}
			default:
				db.core.mu.Unlock()
				return fieldErr(fmt.Sprintf("feedback.ids[%d]", i), ErrUnknown, fmt.Sprintf("%d was not returned by recall %d", id, recallID))
			}
		}
		db.core.mu.Unlock()
	} else {
		var c codec.Record
		for i, id := range ids {
			p, err := db.log.Get(id, nil)
			if err == nil && agent != "" {
				if _, derr := codec.DecodeRecord(p, &c); derr != nil {
					return fmt.Errorf("%w: id %d: %w", ErrCorrupt, id, derr)
				}
				if c.Agent != agent {
					err = segment.ErrNotFound // another tenant's record reads as absent
				}
			}
			if err != nil {
				if errors.Is(err, segment.ErrNotFound) || errors.Is(err, segment.ErrDeleted) {
					return fieldErr(fmt.Sprintf("feedback.ids[%d]", i), ErrUnknown, fmt.Sprintf("no record %d", id))
				}
				return fmt.Errorf("lazymem: engine: feedback: %w", err)
			}
			recs = append(recs, id)
		}
	}
	cs := db.core
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, id := range recs {
		if signal > 0 {
			cs.delta(id).pos++
		} else {
			cs.delta(id).neg++
		}
	}
	return nil
}
