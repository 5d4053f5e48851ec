package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/index"
)

// Selector names the records Forget removes. It names ids, or an agent with
// optional narrowing filters, or both (then only the listed ids of that
// agent). Filters combine with AND, values within one filter with OR, as in
// a Query. A selector naming neither ids nor an agent is refused: there is
// no "forget everything" without naming the agent.
type Selector struct {
	// IDs are record ids. Ids never assigned or already forgotten are
	// ignored (they are not counted).
	IDs []uint64
	// Agent restricts the selection to one tenant; required unless IDs is
	// set.
	Agent string
	// Sessions and Roles narrow to these sessions and speakers (need Agent).
	Sessions []string
	Roles    []string
	// Where keeps records having, for every key, one of the values (needs
	// Agent).
	Where map[string][]string
	// Since and Until narrow to [Since, Until); zero is unbounded (need
	// Agent).
	Since, Until time.Time
}

// IDRange is the ids First..Last, both included.
type IDRange struct {
	First, Last uint64
}

// ForgetResult says what Forget removed.
type ForgetResult struct {
	// Forgotten is how many records were forgotten.
	Forgotten int
	// Ranges are the forgotten ids as ascending, disjoint, maximal runs.
	Ranges []IDRange
	// Reindexed is how many records were indexed again because they had
	// inherited words from a forgotten record (session context). 0 when no
	// forgotten record had a live successor in its session.
	Reindexed int
}

// validate checks the selector; field names start with "selector".
func (s *Selector) validate(o *Options) error {
	narrowed := len(s.Sessions) > 0 || len(s.Roles) > 0 || len(s.Where) > 0 || !s.Since.IsZero() || !s.Until.IsZero()
	if s.Agent == "" && len(s.IDs) == 0 {
		return fieldErr("selector.agent", ErrMissing, "name the agent (or ids): forgetting everything is not allowed")
	}
	if s.Agent == "" && narrowed {
		return fieldErr("selector.agent", ErrMissing, "sessions, roles, where, since and until narrow an agent: name it")
	}
	if err := checkString("selector.agent", s.Agent, o.MaxFieldBytes); err != nil {
		return err
	}
	for i, v := range s.Sessions {
		if v == "" {
			return fieldErr(fmt.Sprintf("selector.sessions[%d]", i), ErrEmpty, "")
		}
	}
	for i, v := range s.Roles {
		if v == "" {
			return fieldErr(fmt.Sprintf("selector.roles[%d]", i), ErrEmpty, "")
		}
	}
	for i, id := range s.IDs {
		if id == 0 {
			return fieldErr(fmt.Sprintf("selector.ids[%d]", i), ErrRange, "ids start at 1")
		}
	}
	if err := checkMeta("selector.where", s.Where, o); err != nil {
		return err
	}
	if err := checkTime("selector.since", s.Since); err != nil {
		return err
	}
	if err := checkTime("selector.until", s.Until); err != nil {
		return err
	}
	if !s.Since.IsZero() && !s.Until.IsZero() && !s.Since.Before(s.Until) {
		return fieldErr("selector.until", ErrRange, "until must be after since")
	}
	return nil
}

// Forget removes the records sel names. From the moment it returns no read
// serves them: Get answers ErrNotFound (exactly as for an id never
// assigned), no recall mode finds them, no record after them in their
// session matches on the words it inherited from them through session
// context (such successors are indexed again), and their vectors are gone
// from the embedding cache unless a live record of the same agent has the
// same constructed text.
//
// The bytes leave the files at the next Compact (or background
// compaction). Forget is atomic across a crash: an intent file written
// before anything changes makes the next Open finish an interrupted Forget.
func (db *DB) Forget(ctx context.Context, sel Selector) (ForgetResult, error) {
	if err := sel.validate(&db.opts); err != nil {
		return ForgetResult{}, err
	}
	db.maintMu.Lock()
	defer db.maintMu.Unlock()
	db.mu.RLock()
	if db.closed {
		db.mu.RUnlock()
		return ForgetResult{}, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		db.mu.RUnlock()
		return ForgetResult{}, err
	}
	bm, err := db.resolveSelector(&sel)
	if err != nil || bm.IsEmpty() {
		db.mu.RUnlock()
		return ForgetResult{}, err
	}
	in, err := db.forgetIntent(bm)
	if err != nil {
		db.mu.RUnlock()
		return ForgetResult{}, err
	}
	if err := writeIntent(db.opts.FS, db.dir, in); err != nil {
		db.mu.RUnlock()
		return ForgetResult{}, err
	}
	err = db.applyForget(ctx, in, false)
	if err == nil && !in.reindex && len(in.sessions) > 0 {
		// A record appended to a forgotten session while Forget ran may
		// have taken a forgotten turn's words: look again, now that the
		// index no longer holds the forgotten records. (The intent on
		// disk lacks the flag: after a crash here, Compact indexes that
		// record again, index.StaleSuccessors.)
		in.reindex, err = db.hasSuccessors(in)
	}
	db.usage.mu.Lock()
	clear(db.usage.by)
	db.usage.mu.Unlock()
	db.mu.RUnlock()
	if err != nil {
		return ForgetResult{}, err
	}
	res := ForgetResult{Forgotten: int(bm.GetCardinality()), Ranges: ranges(bm)}
	if in.reindex {
		// If the DB closes meanwhile, the next Open finishes the intent.
		if res.Reindexed, err = db.reindexSuccessors(in); err != nil {
			return res, err
		}
	}
	if err := removeIntent(db.opts.FS, db.dir); err != nil {
		return res, err
	}
	db.forgotten.Add(uint64(res.Forgotten))
	return res, nil
}

// resolveSelector returns the live records sel names.
func (db *DB) resolveSelector(sel *Selector) (*roaring.Bitmap, error) {
	var f *index.Filter
	if sel.Agent != "" {
		f = &index.Filter{Agents: []string{sel.Agent}, Sessions: sel.Sessions, Roles: sel.Roles, Where: indexFields(sel.Where)}
		if !sel.Since.IsZero() {
			f.Since = sel.Since.UnixNano()
		}
		if !sel.Until.IsZero() {
			f.Until = sel.Until.UnixNano()
			if f.Until == 0 {
				f.Until = 1
			}
		}
	}
	var bm *roaring.Bitmap
	var err error
	if f == nil {
		bm, err = db.idx.Filter(nil)
	} else {
		bm, err = db.idx.Filter(f)
	}
	if err != nil {
		return nil, fmt.Errorf("lazymem: engine: forget: %w", err)
	}
	if len(sel.IDs) > 0 {
		ids := roaring.New()
		for _, id := range sel.IDs {
			if id < 1<<32-1 {
				ids.Add(uint32(id))
			}
		}
		bm.And(ids)
	}
	return bm, nil
}

// forgetIntent reads the records of bm and works out what forgetting them
// implies beyond the log and the index: the cache keys to drop and whether
// successors must be indexed again.
func (db *DB) forgetIntent(bm *roaring.Bitmap) (*intent, error) {
	in := &intent{ids: bm}
	ids := make([]uint64, 0, bm.GetCardinality())
	it := bm.Iterator()
	for it.HasNext() {
		ids = append(ids, uint64(it.Next()))
	}
	// Per agent: the constructed texts forgotten (each with the record's
	// text, pleasantries stripped); per agent+session: the forgotten ids (a
	// live record of the session above the lowest is a successor that may
	// have inherited words).
	texts := map[string]map[string]string{}
	type sessKey struct{ agent, session string }
	forgot := map[sessKey][]uint64{}
	var c codec.Record
	err := db.log.GetMany(ids, func(id uint64, payload []byte) error {
		if _, err := codec.DecodeRecord(payload, &c); err != nil {
			return fmt.Errorf("%w: id %d: %w", ErrCorrupt, id, err)
		}
		r := fromCodec(id, &c)
		if db.cache != nil {
			if texts[r.Agent] == nil {
				texts[r.Agent] = map[string]string{}
			}
			texts[r.Agent][db.construct(&r)] = theLexicon().stripPleasantries(r.Text)
		}
		if r.Session != "" {
			k := sessKey{r.Agent, r.Session}
			forgot[k] = append(forgot[k], id) // GetMany: ascending
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("lazymem: engine: forget: read: %w", err)
	}
	if db.opts.Index.SessionContext {
		for k, ids := range forgot {
			in.sessions = append(in.sessions, sessionLow{k.agent, k.session, ids[0], ids})
		}
		if in.reindex, err = db.hasSuccessors(in); err != nil {
			return nil, err
		}
	}
	// Cache keys: reference counted by constructed text within the agent.
	// A text another live record of the agent constructs keeps its vector.
	// Only texts the cache holds need counting: most records were never a
	// candidate, never embedded (the lazy design), and reading the agent's
	// live records to count is the expensive part. From here on the cache
	// stores no vector of these records (a recall or the working memory
	// embedding one now), so a key it does not hold now stays absent.
	if db.cache != nil {
		db.cache.forgetting(ids)
	}
	for agent, ts := range texts {
		for t := range ts {
			has, err := db.cache.has(cacheKey(agent, t))
			if err != nil {
				return nil, fmt.Errorf("lazymem: engine: forget: cache: %w", err)
			}
			if !has {
				delete(ts, t)
			}
		}
		if len(ts) == 0 {
			delete(texts, agent)
		}
	}
	for agent, ts := range texts {
		live, err := db.idx.Filter(&index.Filter{Agents: []string{agent}})
		if err != nil {
			return nil, fmt.Errorf("lazymem: engine: forget: %w", err)
		}
		live.AndNot(bm)
		if !live.IsEmpty() && !db.ownConstruct {
			// Only the records holding every word of a text can construct
			// it ("Role: Text", pleasantries stripped): the index names
			// them, instead of every record of the agent being read
			// (forgetting a recalled record of a 10k-record agent took
			// 0.5-1.4 s). Missing one would only drop a vector a live
			// record shares (it is embedded again when next recalled).
			read := roaring.New()
			for _, plain := range ts {
				h, ok, err := db.idx.Holding(plain, live)
				if err != nil {
					return nil, fmt.Errorf("lazymem: engine: forget: %w", err)
				}
				if !ok { // no word to look for
					read = live
					break
				}
				read.Or(h)
			}
			live = read
		}
		if !live.IsEmpty() {
			lids := make([]uint64, 0, live.GetCardinality())
			lit := live.Iterator()
			for lit.HasNext() {
				lids = append(lids, uint64(lit.Next()))
			}
			err := db.log.GetMany(lids, func(id uint64, payload []byte) error {
				if _, err := codec.DecodeRecord(payload, &c); err != nil {
					return fmt.Errorf("%w: id %d: %w", ErrCorrupt, id, err)
				}
				r := fromCodec(id, &c)
				delete(ts, db.construct(&r))
				return nil
			})
			if err != nil {
				return nil, fmt.Errorf("lazymem: engine: forget: read: %w", err)
			}
		}
		for t := range ts {
			in.keys = append(in.keys, cacheKey(agent, t))
		}
	}
	slices.Sort(in.keys)
	return in, nil
}

// applyForget deletes the intent's records from the log and the index and
// its keys from the cache. With replay (Open finishing an intent a crash
// interrupted, or retention after dropping segments) ids the log no longer
// holds get no tombstone.
func (db *DB) applyForget(ctx context.Context, in *intent, replay bool) error {
	ids := make([]uint64, 0, in.ids.GetCardinality())
	it := in.ids.Iterator()
	next := db.log.Next()
	for it.HasNext() {
		id := uint64(it.Next())
		if replay && id >= next {
			continue
		}
		ids = append(ids, id)
	}
	logIDs := ids
	if replay {
		// Only what the log still holds: a record already deleted, or in
		// a segment retention dropped, needs no tombstone.
		logIDs = make([]uint64, 0, len(ids))
		if err := db.log.GetMany(ids, func(id uint64, _ []byte) error {
			logIDs = append(logIDs, id)
			return nil
		}); err != nil {
			return fmt.Errorf("lazymem: engine: forget: log: %w", err)
		}
	}
	if err := db.log.Delete(ctx, logIDs); err != nil {
		return fmt.Errorf("lazymem: engine: forget: log: %w", err)
	}
	if err := db.idx.Delete(ids); err != nil {
		return fmt.Errorf("lazymem: engine: forget: index: %w", err)
	}
	if db.cache != nil {
		if err := db.cache.drop(in.keys, ids); err != nil {
			return fmt.Errorf("lazymem: engine: forget: cache: %w", err)
		}
	}
	db.facts.forget(ids)
	// Units built from the records are re-derived without them, or go.
	return db.coreForgetSources(ctx, ids)
}

// rebuildIndex replaces the index with one built from the log: records
// that inherited words from a forgotten one through session context are
// indexed with their live predecessor's instead, and the old index files,
// which hold the forgotten words, are removed. It returns how many records
// were indexed.
//
// The new index is built in dir/index.new while appends and recalls go on
// (the caller holds neither db.mu nor is inside a call holding it, and
// holds maintMu, so no record is deleted meanwhile); only the catch-up of
// the records appended during the build, the flush and the swap of the
// directories hold the store exclusively. A crash leaves index.new or
// index.old behind (Open removes them) or no index at all (Open rebuilds
// it from the log).
func (db *DB) rebuildIndex() (int, error) {
	fs := db.opts.FS
	idir := fs.PathJoin(db.dir, "index")
	ndir, old := idir+".new", idir+".old"

	db.mu.RLock()
	if db.closed {
		db.mu.RUnlock()
		return 0, ErrClosed
	}
	if err := fs.RemoveAll(ndir); err != nil {
		db.mu.RUnlock()
		return 0, fmt.Errorf("lazymem: engine: rebuild index: %w", err)
	}
	src := fixedSource{logSource{db.log}, db.log.Next() - 1}
	nx, err := index.Open(ndir, db.opts.Index, src)
	db.mu.RUnlock()
	if err != nil {
		return 0, fmt.Errorf("lazymem: engine: rebuild index: %w", err)
	}
	n := int(nx.Metrics().Rebuilt)

	db.mu.Lock()
	defer db.mu.Unlock()
	fail := func(err error) (int, error) {
		_ = nx.Close()
		_ = fs.RemoveAll(ndir)
		return 0, fmt.Errorf("lazymem: engine: rebuild index: %w", err)
	}
	if db.closed {
		return fail(ErrClosed)
	}
	// Catch up: the records appended while the new index was built.
	var batch []*index.Doc
	err = logSource{db.log}.Scan(src.last+1, func(d *index.Doc) error {
		batch = append(batch, d)
		if len(batch) == 512 {
			err := nx.Add(batch)
			n += len(batch)
			batch = batch[:0]
			return err
		}
		return nil
	})
	if err == nil && len(batch) > 0 {
		err = nx.Add(batch)
		n += len(batch)
	}
	if err == nil {
		err = nx.Flush()
	}
	if err == nil {
		err = nx.Close()
	}
	if err != nil {
		return fail(err)
	}
	if err := db.idx.Close(); err != nil {
		return 0, fmt.Errorf("lazymem: engine: rebuild index: close: %w", err)
	}
	err = fs.RemoveAll(old)
	if err == nil {
		err = fs.Rename(idir, old)
	}
	if err == nil {
		err = fs.Rename(ndir, idir)
	}
	if err == nil {
		err = syncDir(fs, db.dir)
	}
	var x *index.Index
	if err == nil {
		x, err = index.Open(idir, db.opts.Index, logSource{db.log})
	}
	if err != nil {
		// The log is intact (and the intent file, if any, stays): the
		// next Open rebuilds the index. This DB cannot search any more:
		// close it.
		db.closed = true
		if db.cache != nil {
			_ = db.cache.close()
		}
		_ = db.log.Close()
		if db.lock != nil {
			_ = db.lock.Close()
			db.lock = nil
		}
		return 0, fmt.Errorf("lazymem: engine: rebuild index (the store is closed; reopen it): %w", err)
	}
	db.idx = x
	if err := fs.RemoveAll(old); err != nil {
		return n, fmt.Errorf("lazymem: engine: rebuild index: remove old: %w", err)
	}
	return n, nil
}

// fixedSource is the log as a Source whose last id is fixed: the records
// appended after it are added by the caller.
type fixedSource struct {
	logSource
	last uint64
}

func (s fixedSource) LastID() uint64 { return s.last }

// sessionLow is a session holding forgotten records and the lowest of
// them: a live record of the session above it may have inherited words.
type sessionLow struct {
	agent, session string
	lowest         uint64
	ids            []uint64 // the session's forgotten records, ascending
}

// reindexSuccessors indexes again the records that inherited a forgotten
// record's words through session context: in each session of in, the next
// live record after each forgotten one, which now inherits from the live
// record before it. The index keeps them in its amendment segment
// (index.Reindex), so a Forget costs what it forgets, not the whole log
// (forgetting one record of a 1M store took 17.9 s with a rebuild). When
// the amended records would pass maxAmended and a sixty-fourth of the
// store, the whole index is rebuilt instead (which empties the segment).
// It returns how many records were indexed.
func (db *DB) reindexSuccessors(in *intent) (int, error) {
	return db.reindexAfter(func() ([]uint64, error) { return db.successors(in) }, true)
}

// reindexAfter indexes again the records pick returns (called while no
// append is being indexed: see index.ReindexFunc). Over the bound (see
// reindexSuccessors) it rebuilds the whole index when rebuild is set, and
// otherwise leaves the records to the next compaction (Compact).
func (db *DB) reindexAfter(pick func() ([]uint64, error), rebuild bool) (int, error) {
	n := 0
	_, err := db.idx.ReindexFunc(func() ([]uint64, error) {
		succ, err := pick()
		if err != nil {
			return nil, err
		}
		m := db.idx.Metrics()
		if total := m.Amended + uint64(len(succ)); total > maxAmended && total > m.Docs/64 {
			return nil, errTooManyAmended
		}
		n = len(succ)
		return succ, nil
	})
	switch {
	case errors.Is(err, errTooManyAmended) && rebuild:
		return db.rebuildIndex()
	case errors.Is(err, errTooManyAmended):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("lazymem: engine: reindex: %w", err)
	}
	return n, nil
}

// maxAmended: see reindexSuccessors.
const maxAmended = 4096

var errTooManyAmended = errors.New("lazymem: engine: too many records to index again")

// successors returns, for each session of in, the next live record after
// each of its forgotten records, ascending and once each.
func (db *DB) successors(in *intent) ([]uint64, error) {
	var out []uint64
	for _, k := range in.sessions {
		live, err := db.idx.Filter(&index.Filter{Agents: []string{k.agent}, Sessions: []string{k.session}})
		if err != nil {
			return nil, fmt.Errorf("lazymem: engine: forget: %w", err)
		}
		card := live.GetCardinality()
		for _, f := range k.ids {
			if r := live.Rank(uint32(f)); r < card { // r: live records at or below f
				if s, err := live.Select(uint32(r)); err == nil {
					out = append(out, uint64(s))
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// hasSuccessors reports whether a live record of a session of in follows
// one of in's records.
func (db *DB) hasSuccessors(in *intent) (bool, error) {
	for _, k := range in.sessions {
		rest, err := db.idx.Filter(&index.Filter{Agents: []string{k.agent}, Sessions: []string{k.session}})
		if err != nil {
			return false, fmt.Errorf("lazymem: engine: forget: %w", err)
		}
		rest.AndNot(in.ids)
		if !rest.IsEmpty() && uint64(rest.Maximum()) > k.lowest {
			return true, nil
		}
	}
	return false, nil
}

// ranges returns bm's ids as maximal runs.
func ranges(bm *roaring.Bitmap) []IDRange {
	var out []IDRange
	it := bm.Iterator()
	for it.HasNext() {
		id := uint64(it.Next())
		if n := len(out); n > 0 && out[n-1].Last+1 == id {
			out[n-1].Last = id
			continue
		}
		out = append(out, IDRange{id, id})
	}
	return out
}
