package index

import (
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// Filter selects records by metadata and time.
type Filter struct {
	Agents, Sessions, Roles []string // OR within each list; AND across lists; empty = no constraint
	Where                   []Field  // AND across keys, OR within a key's values
	Not                     []Field  // exclude any record matching any of these key/values
	Since, Until            int64    // [Since, Until) unix nanos; 0 = unbounded
}

// Filter returns the live documents matching f as a new bitmap the caller
// owns. A nil f selects every live document.
func (x *Index) Filter(f *Filter) (*roaring.Bitmap, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return nil, ErrClosed
	}
	if f == nil {
		return x.live.Clone(), nil
	}
	return x.filterLocked(f, false), nil
}

// FilterKey ties a filter bitmap returned by FilterKeyed to the index's
// own bitmap of one metadata value that holds it (an agent's), so that
// SearchKeyed can use the per-segment forms the index keeps of that value
// (filtercache.go). The zero FilterKey names nothing.
type FilterKey struct {
	x     *Index          // the index that made it: another's is ignored
	field *roaring.Bitmap // the index's bitmap of the value; F is a subset
	of    *roaring.Bitmap // F, the bitmap FilterKeyed returned
}

// FilterKeyed is Filter with the key SearchKeyed takes. The key holds for
// the returned bitmap as returned and as narrowed in place (And, AndNot,
// Remove), with this index only: an in-place Add or Or voids the promise
// it makes, and with it SearchKeyed's results.
func (x *Index) FilterKeyed(f *Filter) (*roaring.Bitmap, FilterKey, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return nil, FilterKey{}, ErrClosed
	}
	if f == nil {
		return x.live.Clone(), FilterKey{}, nil
	}
	bm := x.filterLocked(f, false)
	return bm, FilterKey{x: x, field: x.fieldKeyLocked(f), of: bm}, nil
}

// fieldKeyLocked returns the index's bitmap of a one-value clause of f (an
// agent, else a session, else a role), of which f's documents are a
// subset; nil when f has none. Callers hold x.mu.
func (x *Index) fieldKeyLocked(f *Filter) *roaring.Bitmap {
	for _, c := range [...]struct {
		key  string
		vals []string
	}{{keyAgent, f.Agents}, {keySession, f.Sessions}, {keyRole, f.Roles}} {
		if len(c.vals) == 1 {
			return x.fields[c.key][c.vals[0]]
		}
	}
	return nil
}

// filterLocked returns the documents matching f; callers hold x.mu. With
// view set the result is for a search under the same lock: it may be a
// bitmap the index owns (read only: one metadata value's postings) and
// may hold deleted documents, which the search drops (its tombstone
// check). Profile lesson (Zipf 200k, rare terms, agent filter): the
// clone of the agent's bitmap that Filter returns was ~16% of the query.
func (x *Index) filterLocked(f *Filter, view bool) *roaring.Bitmap {
	clauses := make([]*roaring.Bitmap, 0, 4+len(f.Where))
	or := func(key string, vals []string) *roaring.Bitmap {
		m := x.fields[key]
		bms := make([]*roaring.Bitmap, 0, len(vals))
		for _, v := range vals {
			if b := m[v]; b != nil {
				bms = append(bms, b)
			}
		}
		switch len(bms) {
		case 0:
			return roaring.New()
		case 1:
			return bms[0]
		}
		if key == keyAgent && len(bms) >= len(m) && everyValue(vals, m) {
			return x.agented
		}
		return roaring.FastOr(bms...)
	}
	// Where: group values by key (a key may appear several times).
	var byKey map[string][]string
	var order []string
	if len(f.Where) > 0 {
		byKey = make(map[string][]string, len(f.Where))
		for _, w := range f.Where {
			if _, ok := byKey[w.Key]; !ok {
				order = append(order, w.Key)
			}
			byKey[w.Key] = append(byKey[w.Key], w.Values...)
		}
	}
	// A clause none of whose values any record holds makes the filter
	// empty: seen before any union is computed. Profile lesson (1M Zipf,
	// a recall over all 100 agents): the speaker lookups ask for each word
	// of the query as a role of those agents, and the union of the 100
	// agents' bitmaps, computed before the absent role was seen, was 70%
	// of the recall.
	if len(f.Agents) > 0 && !x.anyValue(keyAgent, f.Agents) ||
		len(f.Sessions) > 0 && !x.anyValue(keySession, f.Sessions) ||
		len(f.Roles) > 0 && !x.anyValue(keyRole, f.Roles) {
		return roaring.New()
	}
	for _, k := range order {
		if !x.anyValue(k, byKey[k]) {
			return roaring.New()
		}
	}
	if len(f.Agents) > 0 {
		clauses = append(clauses, or(keyAgent, f.Agents))
	}
	if len(f.Sessions) > 0 {
		clauses = append(clauses, or(keySession, f.Sessions))
	}
	if len(f.Roles) > 0 {
		clauses = append(clauses, or(keyRole, f.Roles))
	}
	for _, k := range order {
		clauses = append(clauses, or(k, byKey[k]))
	}
	fieldClauses := len(clauses)
	if f.Since != 0 || f.Until != 0 {
		clauses = append(clauses, x.times.rangeBitmap(f.Since, f.Until))
	}
	var res *roaring.Bitmap
	owned := true // res is a new bitmap, not one the index holds
	switch {
	case view && len(clauses) == 1:
		res, owned = clauses[0], false
	case view && len(clauses) > 1:
		res = roaring.FastAnd(clauses...)
	case view:
		res, owned = x.live, false
	case len(clauses) == 0:
		res = x.live.Clone()
	case fieldClauses > 0 && x.tomb.IsEmpty():
		// Field postings hold indexed ids only, and with no tombstone
		// every indexed id is live: the AND with the live set (a bitmap of
		// the whole id range) would change nothing. Profile lesson (agent
		// filter, 200k records): that AND was a third of a rare-term
		// query's broad stage.
		if len(clauses) == 1 {
			res = clauses[0].Clone()
		} else {
			res = roaring.FastAnd(clauses...)
		}
	default:
		clauses = append(clauses, x.live)
		res = roaring.FastAnd(clauses...)
	}
	for _, n := range f.Not {
		for _, v := range n.Values {
			if b := x.fields[n.Key][v]; b != nil {
				if !owned {
					res, owned = res.Clone(), true
				}
				res.AndNot(b)
			}
		}
	}
	return res
}

// everyValue reports whether vals, the values a clause lists, name every
// value of m, its key's bitmaps (a value may be listed twice; or calls it
// only when at least len(m) of them are held). Profile lesson (1M Zipf, a
// recall over all 100 agents, steady process): the union of the 100
// agents' bitmaps was half of the recall, and the index keeps that union
// (agented).
func everyValue(vals []string, m map[string]*roaring.Bitmap) bool {
	in := make([]string, 0, len(vals))
	for _, v := range vals {
		if m[v] != nil {
			in = append(in, v)
		}
	}
	if len(in) < len(m) {
		return false
	}
	slices.Sort(in)
	return len(slices.Compact(in)) == len(m)
}

// anyValue reports whether a record holds one of vals under key.
func (x *Index) anyValue(key string, vals []string) bool {
	m := x.fields[key]
	for _, v := range vals {
		if m[v] != nil {
			return true
		}
	}
	return false
}

// SearchWhere is Search restricted to the documents matching f (nil: all),
// as Search(query, Filter(f), k, dst) returns, without the copy of the
// filter's bitmap Filter makes for its caller: under one read lock the
// search reads the index's own bitmap of a one-value filter, and drops
// deleted documents itself.
func (x *Index) SearchWhere(query string, f *Filter, k int, dst []Hit) ([]Hit, error) {
	dst = dst[:0]
	if k <= 0 {
		return dst, nil
	}
	s := x.getSearcher()
	defer x.pool.Put(s)
	x.analyzeQuery(s, query)
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return dst, ErrClosed
	}
	var filter *roaring.Bitmap
	if f != nil {
		if filter = x.filterLocked(f, true); filter.IsEmpty() {
			return dst, nil
		}
		s.fkey = x.fieldKeyLocked(f)
	}
	defer func() { s.fkey = nil }()
	return x.searchLocked(s, filter, k, dst)
}

// denseFilterRatio: a MaxScore traversal under a filter copies the
// filter's documents of the segment into a plain bitset (denseFilter) when
// they number at most this many times the query's postings there. The copy
// costs a few ns per filter document; each candidate's check then costs
// one bit test instead of a roaring Contains (a binary search over the
// keys, then one inside an array container).
const denseFilterRatio = 4

// denseFilter is a bitset over one segment's id range, reused across
// queries by the searcher.
type denseFilter struct {
	lo    uint32
	words []uint64
}

// fillDense sets s.dense to filter's documents in seg's id range.
func (s *searcher) fillDense(filter *roaring.Bitmap, seg *segment) {
	d := &s.dense
	n := int((seg.hi-seg.lo)/64) + 1
	if cap(d.words) < n {
		d.words = make([]uint64, n)
	}
	d.words = d.words[:n]
	clear(d.words)
	d.lo = seg.lo
	it := &s.fit.it // the filter-driven loop's iterator, idle here
	it.Initialize(filter)
	it.AdvanceIfNeeded(seg.lo)
	for it.HasNext() {
		id := it.Next()
		if id > seg.hi {
			break
		}
		o := id - seg.lo
		d.words[o/64] |= 1 << (o % 64)
	}
}

// contains reports whether id (within the segment's range) is set.
func (d *denseFilter) contains(id uint32) bool {
	o := id - d.lo
	return d.words[o/64]&(1<<(o%64)) != 0
}

// filterCursor tells whether ids, asked in ascending order, are in a
// filter bitmap: a forward-only iterator whose step gallops inside a
// container, instead of roaring's Contains, which searches the container
// keys and then the container from its start for every id. MaxScore's
// candidates come in ascending order, so each check resumes where the
// last one stopped. Profile lesson (Zipf 200k, rare terms, agent filter
// of ~1,000 ids a segment): Contains per candidate was a quarter of the
// search (binary searches, each step a mispredicted branch). The iterator
// is a value the searcher reuses, so a query allocates none.
type filterCursor struct {
	it roaring.IntIterator
}

// reset points the cursor at bm's first id >= from.
func (c *filterCursor) reset(bm *roaring.Bitmap, from uint32) {
	c.it.Initialize(bm)
	c.it.AdvanceIfNeeded(from)
}

// contains reports whether id is in the bitmap; id must be at least the
// previous call's.
func (c *filterCursor) contains(id uint32) bool {
	c.it.AdvanceIfNeeded(id)
	return c.it.HasNext() && c.it.PeekNext() == id
}

// sparseFilter: roaring keeps a container of ids in an array while it
// holds at most 1/16 of its 65,536 ids; a filter below that density in a
// segment's range is checked with the cursor, a denser one with Contains
// (a bitmap container's bit test needs no search, and the cursor would
// scan its words between candidates).
const sparseFilter = 16

// filterHas reports whether doc, at least the previous call's, is in
// filter (the segment's filter of a MaxScore traversal).
func (s *searcher) filterHas(filter *roaring.Bitmap, doc uint32) bool {
	if s.useCur {
		return s.fcur.contains(doc)
	}
	return filter.Contains(doc)
}

// RolesSince returns the roles the index came to hold after the first n
// it held (every one for n = 0), and how many it holds now: a caller that
// keeps what it read (to match a part of a name, "小梅", against the
// roles) asks again with that count, and reads only the new roles. A role whose documents are all forgotten stays listed until the
// next Open.
func (x *Index) RolesSince(n int) ([]string, int, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return nil, 0, ErrClosed
	}
	if n < 0 || n > len(x.roles) {
		n = 0
	}
	return slices.Clone(x.roles[n:]), len(x.roles), nil
}
