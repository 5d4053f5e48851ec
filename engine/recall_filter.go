package engine

import (
	"fmt"

	"github.com/RoaringBitmap/roaring/v2"
)

// applyFilter turns the query's agents, sessions, roles, Where/Not and the
// parsed time window into one bitmap of the records that may be recalled.
func (p *plan) applyFilter() error {
	q := p.q
	f := &p.filter
	f.Sessions = q.Sessions
	f.Roles = q.Roles
	where, types, err := p.db.splitTypeWhere(q.Where)
	if err != nil {
		return err
	}
	f.Where = indexFields(where)
	f.Not = indexFields(q.Not)
	if q.Agent != "" {
		f.Agents = append(f.Agents, q.Agent)
	}
	f.Agents = append(f.Agents, q.Agents...)
	if !p.since.IsZero() {
		f.Since = p.since.UnixNano()
	}
	if !p.until.IsZero() {
		f.Until = p.until.UnixNano()
		if f.Until == 0 { // the epoch itself: keep it a bound
			f.Until = 1
		}
	}
	if !p.since.IsZero() && !p.until.IsZero() && !p.since.Before(p.until) {
		p.bm = roaring.New() // empty window
	} else {
		bm, key, err := p.db.idx.FilterKeyed(f)
		if err != nil {
			return fmt.Errorf("lazymem: engine: filter: %w", err)
		}
		p.bm, p.fkey = bm, key
	}
	if types != nil {
		p.bm.And(types)
	}
	p.res.Stats.Filtered = int(p.bm.GetCardinality())
	return nil
}
