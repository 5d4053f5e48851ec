package index

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
)

// load reads the manifest and its segments; dirty reports that the
// manifest must be rewritten (segments were dropped).
func (x *Index) load(src Source) (dirty bool, err error) {
	if err := x.fs.MkdirAll(x.dir, 0o755); err != nil {
		return false, fmt.Errorf("lazymem: index: mkdir: %w", err)
	}
	// A new directory's own entry must be durable too, or a crash can lose
	// the directory with everything synced inside it.
	if err := syncDir(x.fs, x.fs.PathDir(x.dir)); err != nil {
		return false, fmt.Errorf("lazymem: index: sync parent dir: %w", err)
	}
	var m *manifest
	buf, err := readFile(x.fs, x.fs.PathJoin(x.dir, manifestName))
	switch {
	case err == nil:
		if m, err = decodeManifest(buf); err != nil {
			return false, err
		}
	case errors.Is(err, errNotExist) || isNotExist(err):
		m = &manifest{nextNum: 1, tomb: roaring.New(), amended: roaring.New()}
	default:
		return false, fmt.Errorf("lazymem: index: read manifest: %w", err)
	}
	x.nextNum = max(m.nextNum, 1)
	x.tomb = m.tomb
	x.amended = m.amended
	x.void = roaring.Or(x.tomb, x.amended)
	limit := uint64(math.MaxUint64)
	if src != nil {
		limit = src.LastID()
	}
	if sig := x.signature(); len(m.segs) > 0 && m.sig != sig {
		if src == nil {
			return false, fmt.Errorf("%w: index built with analyzer %q, options say %q, and no Source to rebuild from",
				ErrAnalyzerChanged, m.sig, sig)
		}
		x.dropSegments(m.segs, RepairAnalyzerChanged, nil)
		m.segs = nil // re-index everything from the log with the new rules
		dirty = true
	}
	keep := map[string]bool{}
	for i, ms := range m.segs {
		if uint64(ms.hi) > limit {
			// The log lacks these ids (it lost a tail): never claim them.
			x.dropSegments(m.segs[i:], RepairBeyondLog, nil)
			dirty = true
			break
		}
		name := segName(ms.num)
		b, err := readFile(x.fs, x.fs.PathJoin(x.dir, name))
		var s *segment
		if err == nil {
			s, err = openSegment(name, ms.num, b)
		}
		if err == nil && (s.lo != ms.lo || s.hi != ms.hi) {
			err = &CorruptionError{File: name, Offset: 16, Err: errors.New("id range differs from manifest")}
		}
		if err != nil {
			if src == nil {
				return false, fmt.Errorf("lazymem: index: open segment %s: %w", name, err)
			}
			// Index files are derived data: drop this segment and the
			// ones after it and rebuild their ids from the log.
			x.dropSegments(m.segs[i:], RepairCorrupt, err)
			dirty = true
			break
		}
		keep[name] = true
		x.segs = append(x.segs, s)
	}
	// Remove files no manifest references (crashed flushes and merges).
	names, err := x.fs.List(x.dir)
	if err != nil {
		return false, fmt.Errorf("lazymem: index: list: %w", err)
	}
	for _, n := range names {
		if (strings.HasSuffix(n, ".lzi") && !keep[n]) || n == manifestTemp {
			if err := x.fs.Remove(x.fs.PathJoin(x.dir, n)); err != nil {
				return false, fmt.Errorf("lazymem: index: remove orphan %s: %w", n, err)
			}
		}
		if num, ok := strings.CutSuffix(n, ".lzi"); ok {
			if v, err := strconv.ParseUint(num, 10, 64); err == nil && v >= x.nextNum {
				x.nextNum = v + 1
			}
		}
	}
	// Global structures: field postings, time index, live set.
	for _, s := range x.segs {
		if err := x.absorbSegment(s); err != nil {
			return false, err
		}
	}
	if len(x.segs) > 0 {
		x.lastID = x.segs[len(x.segs)-1].hi
		x.hasDocs = true
	}
	return dirty, nil
}

// absorbSegment adds segment s to the global structures. A sealed
// segment's field bitmaps are decoded afresh into memory they own
// (forEachField), so the first segment holding a value gives its bitmap
// over instead of a copy. Profile lesson (1M Zipf store, one index
// segment, 300 reopens): the copy was a quarter of the index's load and a
// third of Open's allocations.
func (x *Index) absorbSegment(s *segment) error {
	x.live.Or(s.present)
	it := s.present.Iterator()
	for it.HasNext() {
		id := it.Next()
		x.times.add(id, s.docTime(id))
	}
	// A key's map is sized from the first segment's count of its values:
	// growing it by doubling to every session's entry was ~5% of the load
	// (the same lesson: 2.2 s of rehashing in the 300 reopens).
	sized := func(k string, n int) {
		if n > 0 && x.fields[k] == nil {
			x.fields[k] = make(map[string]*roaring.Bitmap, n)
		}
	}
	return s.walkFields(sized, func(k, v string, bm *roaring.Bitmap) error {
		m := x.fields[k]
		if m == nil {
			m = make(map[string]*roaring.Bitmap)
			x.fields[k] = m
		}
		if k == keyAgent {
			x.agented.Or(bm)
		}
		switch b := m[v]; {
		case b != nil:
			b.Or(bm)
		case s.mut == nil:
			m[v] = bm
			x.noteRole(k, v)
		default:
			m[v] = bm.Clone()
			x.noteRole(k, v)
		}
		return nil
	})
}

// recount recomputes per-segment deletion counts and the live totals from
// the segments and the tombstones.
func (x *Index) recount() {
	x.nLive, x.sumLive = 0, 0
	x.live.AndNot(x.tomb)
	for _, s := range x.searchSegs() {
		x.recountSeg(s)
		x.nLive += uint64(s.nDocs) - uint64(s.nDeleted)
		x.sumLive += s.sumLen - s.delLen
	}
}

func (x *Index) recountSeg(s *segment) {
	s.nDeleted, s.delLen = 0, 0
	s.delMu.Lock()
	s.delDF = nil
	s.delMu.Unlock()
	tomb := x.tombOf(s)
	if tomb.IsEmpty() || s.empty() {
		return
	}
	d := roaring.And(tomb, s.present)
	it := d.Iterator()
	for it.HasNext() {
		id := it.Next()
		s.nDeleted++
		s.delLen += uint64(s.docLen(id))
	}
}

func (x *Index) rebuildTail(src Source) error {
	last := src.LastID()
	from := uint64(0)
	if x.hasDocs {
		from = uint64(x.lastID) + 1
	}
	if from > last && x.hasDocs {
		return nil
	}
	batch := make([]*Doc, 0, 512)
	docs := make([]Doc, 512)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := x.add(batch, false)
		x.rebuilt += uint64(len(batch))
		batch = batch[:0]
		return err
	}
	err := src.Scan(from, func(d *Doc) error {
		if d.ID > last || d.ID < from {
			return nil
		}
		c := &docs[len(batch)]
		*c = *d
		c.Meta = append(c.Meta[:0], d.Meta...)
		for i := range c.Meta {
			c.Meta[i].Values = slices.Clone(c.Meta[i].Values)
		}
		batch = append(batch, c)
		if len(batch) == cap(batch) {
			return flush()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("lazymem: index: rebuild from log: %w", err)
	}
	return flush()
}
