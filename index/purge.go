package index

import "github.com/RoaringBitmap/roaring/v2"

// Purge removes deleted documents from the index's files: it seals the
// mutable segment, then rewrites each sealed segment that holds a deleted
// document, or the void postings of an amended one (amend.go), on its
// own, without them: a deleted document leaves whole (postings, fields,
// time), an amended one keeps its fields, time and length but not the
// postings it had before Reindex (its search postings are the amendment
// segment's, which lives in memory and is analysed again from the log by
// Open). Terms left without postings leave the segment's term table. It
// returns the number of segments rewritten.
//
// What the index answers does not change. Segments holding neither are
// not read. Each rewrite is a merge of one segment (the merge lock is
// held, adds and searches proceed, the MANIFEST names the new file before
// the old one is removed); the cost is proportional to the segments
// rewritten, not to the index, unless they are the whole index (a settled
// index is one segment).
//
// Deletions and Reindex calls made while Purge runs may stay in the files
// until the next Purge; the engine makes none (it purges under its
// maintenance lock). Which amended documents were purged is kept in
// memory only: after a reopen the next Purge rewrites their segments
// once more.
func (x *Index) Purge() (int, error) {
	if err := x.Flush(); err != nil {
		return 0, err
	}
	n := 0
	for {
		did, err := x.mergeWith(x.pickPurge, true)
		if err != nil {
			return n, err
		}
		if !did {
			return n, nil
		}
		n++
	}
}

// pickPurge returns the first sealed segment holding a deleted document or
// an amended one whose void postings were not purged yet. Callers hold
// x.mu.
func (x *Index) pickPurge() []*segment {
	if x.tomb.IsEmpty() && x.amended.IsEmpty() {
		return nil
	}
	mute := roaring.AndNot(x.amended, x.purged)
	for _, s := range x.sealed() {
		if s.empty() {
			continue
		}
		if s.present.Intersects(x.tomb) || s.present.Intersects(mute) {
			return []*segment{s}
		}
	}
	return nil
}

// StaleSuccessors returns the live documents that follow a deleted one in
// its agent's session (Successors of every tombstone) and were not
// indexed again since: with SessionContext they may hold a deleted
// document's words (a caller that deleted without Reindex, or crashed
// between the two). A document added after the deletion, with its live
// predecessor, may be among them; indexing it again changes nothing.
// Ascending, each once.
func (x *Index) StaleSuccessors() []uint64 {
	x.mu.RLock()
	tomb, amended := x.tomb.Clone(), x.amended.Clone()
	x.mu.RUnlock()
	if tomb.IsEmpty() {
		return nil
	}
	succ := x.Successors(tomb)
	out := succ[:0]
	for _, id := range succ {
		if !amended.Contains(uint32(id)) {
			out = append(out, id)
		}
	}
	return out
}
