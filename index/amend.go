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
// the tombstones; merges keep them, with the document's fields and time,
// until Purge drops them or the index is rebuilt).
//
// The amended ids are persisted in the MANIFEST (version 2); their postings
// are not: Open analyses them again from the Source, which must then be a
// DocSource (the log), each with the predecessor the index finds at that
// moment (the live document before it in its agent and session), which is
// what a rebuild of the whole index from the log gives it. Reindex appends
// to the amendment segment when the new documents lie above all it holds
// and none is amended already (a forgotten recent turn's successor), and
// otherwise builds it anew, at a cost that grows with the documents
// amended since the index was built; a caller bounds that by rebuilding
// the whole index instead (the engine's Compact does, and resets the set).

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
	add := roaring.New() // live documents not amended yet
	again := false       // a live document amended already
	for _, id := range ids {
		if id < endDoc && x.live.Contains(uint32(id)) {
			if x.amended.Contains(uint32(id)) {
				again = true
			} else {
				add.Add(uint32(id))
			}
		}
	}
	// Documents amended again (their predecessor changed once more) need
	// their postings in the amendment segment replaced: the segment is
	// built anew. New ones above all it holds (a forgotten recent turn's
	// successor, the common case) are appended to it.
	grow := x.amend != nil && !add.IsEmpty() && !again && add.Minimum() > x.amend.hi
	all := roaring.Or(x.amended, add)
	all.AndNot(x.tomb)
	x.mu.RUnlock()
	if closed {
		return 0, ErrClosed
	}
	if add.IsEmpty() && !again {
		return int(all.GetCardinality()), nil
	}
	var seg *segment
	var got *roaring.Bitmap
	var docs []amendDoc
	if grow {
		docs, got, err = x.analyseAmend(add)
	} else {
		docs, got, err = x.analyseAmend(all)
		if len(docs) > 0 {
			seg = newMutable(docs[0].id, memHint{})
		}
	}
	if err != nil {
		return 0, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return 0, ErrClosed
	}
	if grow {
		seg = x.amend
		got.Or(x.amended)
	}
	if seg != nil {
		seg.insertAmend(docs)
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

// amendDoc is one document's analysis for the amendment segment.
type amendDoc struct {
	id    uint32
	time  int64
	dl    uint32
	terms []string
	tfs   []uint32
}

// buildAmend reads the documents ids from the Source and analyses each
// with its own terms and its predecessor's, into a new memory segment.
// got holds the ids the Source still had.
func (x *Index) buildAmend(ids *roaring.Bitmap) (*segment, *roaring.Bitmap, error) {
	docs, got, err := x.analyseAmend(ids)
	if err != nil || len(docs) == 0 {
		return nil, got, err
	}
	seg := newMutable(docs[0].id, memHint{})
	seg.insertAmend(docs)
	return seg, got, nil
}

// analyseAmend reads the documents ids from the Source and analyses each
// with its own terms and, with SessionContext, its predecessor's. got
// holds the ids the Source still had.
func (x *Index) analyseAmend(ids *roaring.Bitmap) ([]amendDoc, *roaring.Bitmap, error) {
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
	cw := x.contextWeights()
	at := map[string]int{}
	var out []amendDoc
	err := ds.Docs(list, func(d *Doc) error {
		if d.ID >= endDoc || !ids.Contains(uint32(d.ID)) || (len(out) > 0 && uint32(d.ID) <= out[len(out)-1].id) {
			return fmt.Errorf("lazymem: index: reindex: document %d not asked for or out of order", d.ID)
		}
		clear(at)
		a := amendDoc{id: uint32(d.ID), time: d.Time}
		own := x.opts.Analyzer.Terms(nil, d.Text)
		for _, t := range own {
			if k, ok := at[t]; ok {
				a.tfs[k] += cw.own
				continue
			}
			at[t] = len(a.terms)
			a.terms = append(a.terms, t)
			a.tfs = append(a.tfs, cw.own)
		}
		a.dl = cw.own * uint32(len(own))
		if x.opts.SessionContext && d.Session != "" {
			if p := x.lookupPrev(d); p != nil {
				h := cw.share(uint32(len(own)), p.dl)
				for j, t := range p.terms {
					tf := h.tf(p.tfs[j])
					if tf == 0 {
						continue
					}
					if k, ok := at[t]; ok {
						a.tfs[k] += tf
						continue
					}
					at[t] = len(a.terms)
					a.terms = append(a.terms, t)
					a.tfs = append(a.tfs, tf)
				}
				a.dl += h.dl(p.dl)
			}
		}
		out = append(out, a)
		got.Add(a.id)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("lazymem: index: reindex: %w", err)
	}
	return out, got, nil
}

// insertAmend adds docs (ascending, above every document seg holds) to
// the memory segment seg. Callers hold x.mu when seg is searched.
func (seg *segment) insertAmend(docs []amendDoc) {
	m := seg.mut
	for _, a := range docs {
		for uint32(len(m.lens)) < a.id-seg.lo {
			m.lens = append(m.lens, 0)
			m.times = append(m.times, 0)
		}
		m.lens = append(m.lens, a.dl)
		m.times = append(m.times, a.time)
		seg.hi = a.id
		seg.nDocs++
		seg.sumLen += uint64(a.dl)
		seg.present.Add(a.id)
		for j, t := range a.terms {
			k := m.slot(t, termHash(t), termPre(t))
			m.slab.at(k).add(&m.arena, int(k&1), a.id, a.tfs[j], a.dl)
		}
	}
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
