package index

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// freeze moves a non-empty mutable segment to the segment list (to be
// sealed by a flush) and returns the number of segments awaiting sealing.
func (x *Index) freeze() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	if s := x.mut; !s.empty() && !x.closed {
		x.segs = append(x.segs, s)
		x.mut = newMutable(s.hi+1, memHint{terms: s.mut.terms.len(), docs: len(s.mut.lens)})
		s.mut.fields = x.fieldsIn(s.lo, s.hi)
	}
	n := 0
	for _, s := range x.segs {
		if s.mut != nil {
			n++
		}
	}
	return n
}

func (x *Index) flushLoop() {
	defer x.wg.Done()
	for {
		select {
		case <-x.stop:
			return
		case <-x.flushKick:
		}
		if err := x.flushPending(); err != nil && !errors.Is(err, ErrClosed) {
			x.flushErrs.Add(1)
			x.backgroundError("flush", err)
		}
	}
}

// writeManifestLocked persists the sealed, file-backed segments and the
// tombstones. Callers hold x.mu (read or write).
func (x *Index) writeManifestLocked() error {
	if x.dir == "" {
		return nil
	}
	m := &manifest{nextNum: x.nextNum, tomb: x.tomb, amended: x.amended, sig: x.signature()}
	for _, s := range x.segs {
		if s.mut != nil {
			break // being flushed: not persisted yet
		}
		m.segs = append(m.segs, manifestSeg{num: s.num, lo: s.lo, hi: s.hi})
	}
	if err := writeManifest(x.fs, x.dir, m); err != nil {
		return fmt.Errorf("lazymem: index: write manifest: %w", err)
	}
	return nil
}

// Flush seals the mutable segment into an immutable one (persisted as a
// file when the index has a directory) and records it in the manifest,
// together with any segment frozen by Add and not yet sealed. Searches and
// Adds proceed during the encoding. A segment whose sealing failed stays
// searchable in memory and is retried by the next Flush.
func (x *Index) Flush() error {
	x.mu.RLock()
	closed := x.closed
	x.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	x.freeze()
	return x.flushPending()
}

// flushPending seals, in id order, every frozen segment.
func (x *Index) flushPending() error {
	x.flushMu.Lock()
	defer x.flushMu.Unlock()
	x.mu.RLock()
	var pending []*segment
	for _, s := range x.segs {
		if s.mut != nil {
			pending = append(pending, s)
		}
	}
	x.mu.RUnlock()
	for _, s := range pending {
		if err := x.sealOne(s); err != nil {
			return err
		}
	}
	return nil
}

func (x *Index) sealOne(s *segment) error {
	x.mu.Lock()
	num := x.nextNum
	x.nextNum++
	x.mu.Unlock()
	sealed, err := x.seal(s, num)
	if err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	i := slices.Index(x.segs, s)
	x.segs[i] = sealed
	x.recountSeg(sealed)
	x.flushes.Add(1)
	if err := x.writeManifestLocked(); err != nil {
		return err
	}
	x.kickMerge()
	return nil
}

// seal encodes a frozen mutable segment and writes its file.
func (x *Index) seal(s *segment, num uint64) (*segment, error) {
	m := s.mut
	b := &segBuilder{lo: s.lo, hi: s.hi, lens: m.lens, times: m.times, present: s.present.Clone(),
		nDocs: s.nDocs, sumLen: s.sumLen, fields: m.fields}
	type termRef struct {
		t string
		k int32
	}
	terms := make([]termRef, 0, m.terms.len())
	total, strLen := 0, 0
	for k := range m.terms.len() {
		t := m.terms.key(k)
		terms = append(terms, termRef{t, int32(k)})
		total += m.slab.at(int32(k)).df()
		strLen += len(t)
	}
	slices.SortFunc(terms, func(a, b termRef) int { return strings.Compare(a.t, b.t) })
	b.posts = make([]byte, 0, 3*total+blockMetaSize*(total/blockSize+len(terms)))
	b.table = make([]byte, 0, termEntrySize*len(terms))
	b.strs = make([]byte, 0, strLen)
	var docs, tfs []uint32
	for _, r := range terms {
		docs, tfs = m.slab.at(r.k).appendPostings(&m.arena, docs[:0], tfs[:0])
		b.addTerm(r.t, docs, tfs)
	}
	return x.writeSegment(b, num)
}

func (x *Index) writeSegment(b *segBuilder, num uint64) (*segment, error) {
	img, err := b.finish()
	if err != nil {
		return nil, fmt.Errorf("lazymem: index: encode segment: %w", err)
	}
	name := segName(num)
	if x.dir != "" {
		if err := writeFileSync(x.fs, x.fs.PathJoin(x.dir, name), img); err != nil {
			return nil, fmt.Errorf("lazymem: index: write %s: %w", name, err)
		}
		if err := syncDir(x.fs, x.dir); err != nil {
			return nil, fmt.Errorf("lazymem: index: sync dir: %w", err)
		}
	}
	return openSegment(name, num, img)
}
