package index

import (
	"fmt"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
)

// Re-indexing a few documents in place (Reindex). With SessionContext a
// document's postings hold its predecessor's words; when the predecessor
// is deleted, the successor must lose them (and take those of the live
// document before it). The postings of a sealed segment cannot change, and
// rebuilding the whole index for one forgotten turn costs the whole log
// (17.9 s for one record of a 1M Zipf store). Instead the index keeps an
// amendment segment: a memory segment holding the current postings of the
// documents re-indexed since the index was built, which every search,
// document frequency and the exhaustive reference read beside the other
// segments, while those documents' older postings are void in their own
// segment (read through the void set, as a deleted document's are through
// the tombstones, and dropped by the next merge of that segment).
//
// The amended ids are persisted in the MANIFEST (version 2); their postings
// are not: Open analyses them again from the Source, which must then be a
// DocSource (the log), each with the predecessor the index finds at that
// moment (the live document before it in its agent and session), which is
// what a rebuild of the whole index from the log gives it. Reindex
// rebuilds the amendment segment whole, so its cost grows with the
// documents amended since the index was built; a caller bounds it by
// rebuilding the whole index instead (the engine's Compact does, and
// resets the set).

// DocSource is a Source that also reads documents by id. Reindex and Open
// read the amended documents with it.
type DocSource interface {
	Source
	// Docs calls fn for each of ids (ascending) that the source still
	// holds, in ascending order; ids it lacks are skipped.
	Docs(ids []uint64, fn func(d *Doc) error) error
}

// Reindex indexes the live documents ids again: each with its own text and,
// with SessionContext, the predecessor the index finds now (the live
// document before it in its agent and session). Call it after Delete for
// the documents that inherited a deleted document's words. Ids that are
// not live are ignored. The Source given to Open must be a DocSource.
// Returns how many documents the amendment segment holds.
func (x *Index) Reindex(ids []uint64) (int, error) {
	return x.ReindexFunc(func() ([]uint64, error) { return ids, nil })
}

// ReindexFunc is Reindex of the ids pick returns, called while no Add is
// in flight: a document added after a Delete, whose context was worked out
// before it, is in the index when pick looks for the deleted documents'
// successors. An error from pick is returned as is, and nothing changes.
func (x *Index) ReindexFunc(pick func() ([]uint64, error)) (int, error) {
	x.addMu.Lock()
	defer x.addMu.Unlock()
	ids, err := pick()
	if err != nil {
		return 0, err
	}
	x.mu.RLock()
	closed := x.closed
	all := x.amended.Clone()
	for _, id := range ids {
		if id < endDoc && x.live.Contains(uint32(id)) {
			all.Add(uint32(id))
		}
	}
	all.AndNot(x.tomb)
	x.mu.RUnlock()
	if closed {
		return 0, ErrClosed
	}
	seg, got, err := x.buildAmend(all)
	if err != nil {
		return 0, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return 0, ErrClosed
	}
	x.installAmend(seg, got)
	x.wrote()
	if x.dir != "" {
		if err := x.writeManifestLocked(); err != nil {
			return 0, err
		}
	}
	return int(got.GetCardinality()), nil
}

// installAmend makes seg the amendment segment and got the amended set.
// Callers hold x.mu.
func (x *Index) installAmend(seg *segment, got *roaring.Bitmap) {
	x.amended = got
	x.void = roaring.Or(x.tomb, got)
	x.amend = seg
	if seg != nil && seg.empty() {
		x.amend = nil
	}
	x.recount()
}

// buildAmend reads the documents ids from the Source and analyses each
// with its own terms and its predecessor's, into a new memory segment.
// got holds the ids the Source still had.
func (x *Index) buildAmend(ids *roaring.Bitmap) (*segment, *roaring.Bitmap, error) {
	got := roaring.New()
	if ids.IsEmpty() {
		return nil, got, nil
	}
	ds, ok := x.src.(DocSource)
	if !ok {
		return nil, nil, fmt.Errorf("lazymem: index: reindex: the source cannot read documents by id")
	}
	list := make([]uint64, 0, ids.GetCardinality())
	it := ids.Iterator()
	for it.HasNext() {
		list = append(list, uint64(it.Next()))
	}
	seg := newMutable(uint32(list[0]), memHint{})
	m := seg.mut
	cw := x.contextWeights()
	at := map[string]int{}
	var terms []string
	var tfs []uint32
	err := ds.Docs(list, func(d *Doc) error {
		if d.ID >= endDoc || d.ID < uint64(seg.lo) || (seg.nDocs > 0 && uint32(d.ID) <= seg.hi) {
			return fmt.Errorf("lazymem: index: reindex: document %d out of order", d.ID)
		}
		id := uint32(d.ID)
		clear(at)
		terms, tfs = terms[:0], tfs[:0]
		own := x.opts.Analyzer.Terms(nil, d.Text)
		for _, t := range own {
			if k, ok := at[t]; ok {
				tfs[k] += cw.own
				continue
			}
			at[t] = len(terms)
			terms = append(terms, t)
			tfs = append(tfs, cw.own)
		}
		dl := cw.own * uint32(len(own))
		if x.opts.SessionContext && d.Session != "" {
			if p := x.lookupPrev(d); p != nil {
				h := cw.share(uint32(len(own)), p.dl)
				for j, t := range p.terms {
					tf := h.tf(p.tfs[j])
					if tf == 0 {
						continue
					}
					if k, ok := at[t]; ok {
						tfs[k] += tf
						continue
					}
					at[t] = len(terms)
					terms = append(terms, t)
					tfs = append(tfs, tf)
				}
				dl += h.dl(p.dl)
			}
		}
		for uint32(len(m.lens)) < id-seg.lo {
			m.lens = append(m.lens, 0)
			m.times = append(m.times, 0)
		}
		m.lens = append(m.lens, dl)
		m.times = append(m.times, d.Time)
		seg.hi = id
		seg.nDocs++
		seg.sumLen += uint64(dl)
		seg.present.Add(id)
		got.Add(id)
		for j, t := range terms {
			k := m.slot(t, termHash(t), termPre(t))
			m.slab.at(k).add(&m.arena, int(k&1), id, tfs[j], dl)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("lazymem: index: reindex: %w", err)
	}
	return seg, got, nil
}

// searchSegs is every segment a search reads: the sealed ones, the mutable
// one and the amendment segment.
func (x *Index) searchSegs() []*segment {
	all := x.allSegs()
	if x.amend == nil {
		return all
	}
	return append(slices.Clip(all), x.amend)
}

// tombOf is the set of ids whose postings in s a search skips: in the
// amendment segment the deleted documents, elsewhere the deleted and the
// amended ones.
func (x *Index) tombOf(s *segment) *roaring.Bitmap {
	if s == x.amend {
		return x.tomb
	}
	return x.void
}

// Successors returns the documents whose predecessor (SessionContext: the
// previous live document of the same agent and session) was one of gone,
// now deleted: for each agent and session holding some of gone, the first
// live document after each of them. Ascending, each once. A caller passes
// them to Reindex after a Delete whose documents it did not read (the
// engine's retention).
func (x *Index) Successors(gone *roaring.Bitmap) []uint64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	var out []uint64
	agents := x.fields[keyAgent]
	for _, sb := range x.fields[keySession] {
		if !sb.Intersects(gone) {
			continue
		}
		// Most sessions retention touches expired whole: nothing after.
		ls, gs := roaring.And(sb, x.live), roaring.And(sb, gone)
		if ls.IsEmpty() || ls.Maximum() < gs.Minimum() {
			continue
		}
		for _, ab := range agents {
			if !ab.Intersects(gs) {
				continue
			}
			g, live := roaring.And(gs, ab), roaring.And(ls, ab)
			card := live.GetCardinality()
			it := g.Iterator()
			for it.HasNext() {
				if r := live.Rank(it.Next()); r < card { // r: live documents at or below it
					if s, err := live.Select(uint32(r)); err == nil {
						out = append(out, uint64(s))
					}
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Holding returns the documents of filter whose postings hold every term
// of text as the analyzer reads it (own or inherited through session
// context: a superset of the documents whose own text holds them all).
// ok is false when text has no term. The engine's Forget reads these
// instead of every record of an agent to learn whether another record
// constructs the same text as a forgotten one.
func (x *Index) Holding(text string, filter *roaring.Bitmap) (docs *roaring.Bitmap, ok bool, err error) {
	terms := x.opts.Analyzer.Terms(nil, text)
	if len(terms) == 0 {
		return nil, false, nil
	}
	slices.Sort(terms)
	terms = slices.Compact(terms)
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return nil, false, ErrClosed
	}
	docs = roaring.New()
	var ti termInfo
	var it postingsIter
	for _, seg := range x.searchSegs() {
		if seg.empty() || (filter != nil && !filter.IntersectsWithInterval(uint64(seg.lo), uint64(seg.hi)+1)) {
			continue
		}
		tomb := x.tombOf(seg)
		// The segment's candidates: the postings of its rarest term of
		// text, narrowed by each other term in turn.
		var cand []uint32
		infos := make([]termInfo, 0, len(terms))
		for _, t := range terms {
			if !seg.term(t, &ti) {
				infos = nil
				break
			}
			infos = append(infos, ti)
		}
		if infos == nil {
			continue
		}
		slices.SortFunc(infos, func(a, b termInfo) int { return int(a.df) - int(b.df) })
		it.reset(&infos[0])
		for it.Next() {
			if d := it.At(); (filter == nil || filter.Contains(d)) && !tomb.Contains(d) {
				cand = append(cand, d)
			}
		}
		if err := it.Err(); err != nil {
			return nil, false, err
		}
		for i := 1; i < len(infos) && len(cand) > 0; i++ {
			it.reset(&infos[i])
			kept := cand[:0]
			for _, d := range cand {
				if it.Seek(d) && it.At() == d {
					kept = append(kept, d)
				}
			}
			if err := it.Err(); err != nil {
				return nil, false, err
			}
			cand = kept
		}
		docs.AddMany(cand)
	}
	return docs, true, nil
}
