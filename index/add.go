package index

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
)

// Add indexes documents. Ids must be strictly increasing across calls. The
// batch is validated first: on a validation error nothing is indexed.
func (x *Index) Add(docs []*Doc) error { return x.add(docs, true) }

// validateDocs checks a batch before anything of it is indexed.
func validateDocs(docs []*Doc) error {
	prev := uint64(0)
	for i, d := range docs {
		if d == nil {
			return ErrNilDoc
		}
		if d.ID >= endDoc {
			return fmt.Errorf("%w: %d", ErrIDRange, d.ID)
		}
		if i > 0 && d.ID <= prev {
			return fmt.Errorf("%w: %d after %d", ErrIDOrder, d.ID, prev)
		}
		for _, f := range d.Meta {
			if err := CheckMetaKey(f.Key); err != nil {
				return fmt.Errorf("document %d: %w", d.ID, err)
			}
		}
		prev = d.ID
	}
	return nil
}

// checkAppend reports whether docs may follow what is indexed. Callers hold
// x.addMu.
func (x *Index) checkAppend(docs []*Doc) error {
	x.mu.RLock()
	closed, bad := x.closed, x.hasDocs && docs[0].ID <= uint64(x.lastID)
	last := x.lastID
	x.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	if bad {
		return fmt.Errorf("%w: %d after %d", ErrIDOrder, docs[0].ID, last)
	}
	return nil
}

// AddAnalyzed indexes docs, whose analysis Analyze made (their ids may have
// been set since). It validates like Add and consumes a either way.
func (x *Index) AddAnalyzed(docs []*Doc, a *Analyzed) error {
	defer a.Release()
	if a == nil || a.x != x || a.n != len(docs) || a.bts == nil {
		return fmt.Errorf("%w: AddAnalyzed with an analysis of another batch", ErrOptions)
	}
	if len(docs) == 0 {
		return nil
	}
	if err := validateDocs(docs); err != nil {
		return err
	}
	x.addMu.Lock()
	defer x.addMu.Unlock()
	if err := x.checkAppend(docs); err != nil {
		return err
	}
	x.insertAnalyzed(docs, a)
	return x.afterAdd(true)
}

func (x *Index) add(docs []*Doc, autoFlush bool) error {
	if len(docs) == 0 {
		return nil
	}
	if err := validateDocs(docs); err != nil {
		return err
	}
	x.addMu.Lock()
	defer x.addMu.Unlock()
	if err := x.checkAppend(docs); err != nil {
		return err
	}
	// Analysis runs outside the write lock, on the worker pool for large
	// batches, while this goroutine inserts the chunks already analysed.
	a := x.startAnalysis(docs, true)
	x.insertAnalyzed(docs, a)
	a.Release()
	return x.afterAdd(autoFlush)
}

// insertAnalyzed inserts the chunks of docs in order, each as soon as a's
// workers have analysed it, taking the write lock once per chunk. Callers
// hold x.addMu.
func (x *Index) insertAnalyzed(docs []*Doc, a *Analyzed) {
	for c := range a.bts {
		a.wait(c)
		x.insertChunk(docs, a, c)
	}
}

// afterAdd starts a flush when the mutable segment is full. Callers hold
// x.addMu.
func (x *Index) afterAdd(autoFlush bool) error {
	x.wrote()
	x.mu.RLock()
	need := autoFlush && x.opts.FlushDocs > 0 && int(x.mut.nDocs) >= x.opts.FlushDocs
	x.mu.RUnlock()
	if !need {
		return nil
	}
	// Freeze the full mutable segment (it stays searchable) and let the
	// flusher goroutine encode and persist it while Adds continue. If the
	// flusher falls behind by two segments, this Add flushes synchronously
	// (back-pressure bounds the unpersisted, uncompacted memory).
	if x.freeze() >= 2 || x.opts.DisableBackgroundMerge {
		return x.Flush()
	}
	select {
	case x.flushKick <- struct{}{}:
	default:
	}
	return nil
}

// insertChunk inserts chunk c of the batch all, analysed by a, with
// session context when the index has it on. Callers hold x.addMu.
func (x *Index) insertChunk(all []*Doc, a *Analyzed, c int) {
	docs, bts := chunkOf(all, c), a.bts
	if x.opts.SessionContext {
		bts[c] = x.withContext(docs, bts[c], chunkOf(all, bts[c].crossFrom)[0].ID)
	}
	x.insert(docs, bts[c], x.opts.SessionContext)
}

// insert adds analysed documents to the mutable segment and the global
// structures, and with remember makes the last document of each session
// the session's remembered one (rememberChunk). Callers hold x.addMu.
//
// A large chunk is inserted on two goroutines: this one resolves the
// terms' slots and adds the postings of even slots, a helper adds the
// documents' own structures (lengths, fields, bitmaps) and remembers, then
// adds the postings of odd slots, which live in the other half of the
// arena. Profile lesson (one writer, session context, Zipf corpus): the
// serial insert was most of the writer's CPU, while the second core idled
// once the batch was analysed.
func (x *Index) insert(docs []*Doc, bt *batchTerms, remember bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	m := x.mut.mut
	if len(bt.terms) < parallelInsertMin || runtime.GOMAXPROCS(0) < 2 {
		x.insertDocs(docs, bt)
		m.resolveSlots(bt)
		m.addPostings(docs, bt, -1)
		if remember {
			x.rememberChunk(docs, bt)
		}
		return
	}
	var wg sync.WaitGroup
	resolved := make(chan struct{})
	wg.Go(func() {
		x.insertDocs(docs, bt)
		if remember {
			x.rememberChunk(docs, bt)
		}
		<-resolved
		m.addPostings(docs, bt, 1)
	})
	m.resolveSlots(bt)
	close(resolved)
	m.addPostings(docs, bt, 0)
	wg.Wait()
}

// parallelInsertMin is the number of postings from which insert uses a
// second goroutine.
const parallelInsertMin = 1024

// resolveSlots fills bt.entSlot with the slot of each term entry of bt,
// adding the terms the segment lacks. Each distinct term of the chunk is
// looked up once, before the postings: the lookups do not depend on each
// other, so their cache misses overlap, and the hashes come from the
// parallel analysis.
func (m *memSeg) resolveSlots(bt *batchTerms) {
	slotOf := slices.Grow(bt.slotOf[:0], len(bt.uterms))[:len(bt.uterms)]
	bt.sink[2] = m.terms.warm(bt.uhash)
	for c, t := range bt.uterms {
		slotOf[c] = m.slot(t, bt.uhash[c], bt.upre[c])
	}
	bt.slotOf = slotOf
	ent := slices.Grow(bt.entSlot[:0], len(bt.terms))[:len(bt.terms)]
	for i := range bt.docs {
		a := &bt.docs[i]
		for j := a.off; j < a.off+a.n; j++ {
			if c := bt.tid[j]; c >= 0 {
				ent[j] = slotOf[c]
			} else {
				t := bt.terms[j]
				ent[j] = m.slot(t, termHash(t), termPre(t))
			}
		}
		for j := range a.xn {
			if e := a.xoff + j; bt.tid[e] >= 0 { // inheritEarlier's
				ent[e] = slotOf[bt.tid[e]]
			} else {
				ent[e] = m.slot(bt.terms[e], bt.xhash[a.xh+j], termPre(bt.terms[e]))
			}
		}
	}
	bt.entSlot = ent
}

// addPostings adds the postings of docs whose slots (bt.entSlot) are in
// half h (0 even, 1 odd), or all of them when h is -1.
func (m *memSeg) addPostings(docs []*Doc, bt *batchTerms, h int32) {
	ent := bt.entSlot
	bt.sink[max(h, 0)] = m.warm(bt.slotOf, h)
	for i, d := range docs {
		id := uint32(d.ID)
		a := &bt.docs[i]
		for j := a.off; j < a.off+a.n; j++ {
			if k := ent[j]; h < 0 || k&1 == h {
				m.slab.at(k).add(&m.arena, int(k&1), id, bt.tfs[j], a.dl)
			}
		}
		for j := a.xoff; j < a.xoff+a.xn; j++ {
			if k := ent[j]; h < 0 || k&1 == h {
				m.slab.at(k).add(&m.arena, int(k&1), id, bt.tfs[j], a.dl)
			}
		}
	}
}

// warm reads the memTerm of each slot of slots in half h (all with h -1),
// then the arena word of its last posting, and returns a sum of what it
// read (the caller keeps it, so the loads stay). The loads of one pass do
// not depend on each other, so the CPU overlaps their cache misses;
// addPostings, which reads and writes the same lines one posting after
// the other, then finds them in the cache. Profile lesson (Zipf corpus,
// session context): memTerm.add was a fifth of the ingest's CPU, most of
// it waiting on the cold memTerm of a rare term and on its last chunk.
func (m *memSeg) warm(slots []int32, h int32) uint32 {
	var s uint32
	for _, k := range slots {
		if h < 0 || k&1 == h {
			s += m.slab.at(k).n
		}
	}
	for _, k := range slots {
		if h < 0 || k&1 == h {
			t := m.slab.at(k)
			if n := t.n; n > memInline {
				start, _ := chunkStart(n - 1)
				s += m.arena.word(t.tail + 2*(n-1-start))[0]
			}
		}
	}
	return s
}

// insertDocs adds what insert adds per document, the postings aside: the
// mutable segment's lengths and times, the field postings, the bitmaps.
func (x *Index) insertDocs(docs []*Doc, bt *batchTerms) {
	s := x.mut
	m := s.mut
	for i, d := range docs {
		id := uint32(d.ID)
		if s.empty() && len(x.segs) == 0 && !x.hasDocs {
			s.lo, s.hi = id, id-1
		}
		for uint32(len(m.lens)) < id-s.lo {
			m.lens = append(m.lens, 0)
			m.times = append(m.times, 0)
		}
		a := &bt.docs[i]
		m.lens = append(m.lens, a.dl)
		m.times = append(m.times, d.Time)
		s.hi = id
		s.nDocs++
		s.sumLen += uint64(a.dl)
		s.present.Add(id)
		x.addField(keyAgent, d.Agent, id)
		x.addField(keySession, d.Session, id)
		x.addField(keyRole, d.Role, id)
		for _, f := range d.Meta {
			for _, v := range f.Values {
				x.addField(f.Key, v, id)
			}
		}
		x.times.add(id, d.Time)
		x.live.Add(id)
		x.nLive++
		x.sumLive += uint64(a.dl)
		if x.void.Contains(id) { // persisted deletion of a re-indexed record, or amended (amend.go)
			if x.tomb.Contains(id) {
				x.live.Remove(id)
			}
			s.nDeleted++
			s.delLen += uint64(a.dl)
			x.nLive--
			x.sumLive -= uint64(a.dl)
		}
		x.lastID, x.hasDocs = id, true
	}
}

// slot returns the slab index of term t, whose hash is h and prefix pre,
// adding the term when the segment does not hold it.
func (m *memSeg) slot(t string, h, pre uint64) int32 {
	k, added := m.terms.findOrAdd(t, h, pre, m.slab.n)
	if added {
		m.slab.alloc()
	}
	return k
}

func (x *Index) addField(key, val string, id uint32) {
	if val == "" && strings.HasPrefix(key, "\x00") {
		return
	}
	if x.fields[key][val] == nil {
		x.noteRole(key, val)
	}
	x.fields.add(key, val, id)
	if key == keyAgent {
		x.agented.Add(id)
	}
}

// noteRole lists val in x.roles when key is the role's (RolesSince).
func (x *Index) noteRole(key, val string) {
	if key == keyRole {
		x.roles = append(x.roles, strings.Clone(val))
	}
}

// fieldsIn extracts the field postings of ids [lo, hi] from the global
// ones (a sealed segment stores its own part). Callers hold x.mu.
func (x *Index) fieldsIn(lo, hi uint32) fieldSet {
	r := roaring.New()
	r.AddRange(uint64(lo), uint64(hi)+1)
	out := make(fieldSet)
	for k, m := range x.fields {
		for v, bm := range m {
			if bm.IsEmpty() || bm.Maximum() < lo || bm.Minimum() > hi {
				continue
			}
			sub := roaring.And(bm, r)
			if sub.IsEmpty() {
				continue
			}
			om := out[k]
			if om == nil {
				om = make(map[string]*roaring.Bitmap)
				out[k] = om
			}
			om[v] = sub
		}
	}
	return out
}
