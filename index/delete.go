package index

import (
	"slices"
)

// Delete tombstones documents: they disappear from Filter and Search at
// once, from global statistics at once, and physically at the next merge
// of their segment. With a directory, the tombstones are persisted before
// Delete returns. Unknown or already deleted ids are ignored.
func (x *Index) Delete(ids []uint64) error {
	x.wrote()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrClosed
	}
	changed := false
	all := x.allSegs()
	for _, id64 := range ids {
		if id64 >= endDoc {
			continue
		}
		id := uint32(id64)
		if !x.live.Contains(id) {
			continue
		}
		// An amended document's postings are the amendment segment's
		// (amend.go); its own segment's are void already.
		s := x.amend
		if s == nil || !x.amended.Contains(id) || !s.present.Contains(id) {
			i, _ := slices.BinarySearchFunc(all, id, func(s *segment, id uint32) int {
				switch {
				case s.hi < id:
					return -1
				case s.lo > id:
					return 1
				}
				return 0
			})
			if i >= len(all) || !all[i].present.Contains(id) {
				continue
			}
			s = all[i]
		}
		dl := s.docLen(id)
		x.tomb.Add(id)
		x.void.Add(id)
		x.live.Remove(id)
		s.nDeleted++
		s.delLen += uint64(dl)
		s.delMu.Lock()
		s.delDF = nil
		s.delMu.Unlock()
		x.nLive--
		x.sumLive -= uint64(dl)
		changed = true
	}
	if changed && x.dir != "" {
		return x.writeManifestLocked()
	}
	return nil
}
