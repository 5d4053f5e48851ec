package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
)

func (x *Index) kickMerge() {
	select {
	case x.mergeKick <- struct{}{}:
	default:
	}
}

func (x *Index) mergeLoop() {
	defer x.wg.Done()
	// settle fires SettleAfter after the last write once the tiered
	// merges are done (settle.go); a write meanwhile moves it later.
	settle := time.NewTimer(time.Hour)
	settle.Stop()
	defer settle.Stop()
	for {
		select {
		case <-x.stop:
			return
		case <-settle.C:
			if wait := x.settleWait(); wait > 0 {
				settle.Reset(wait)
				continue
			}
			if _, err := x.mergeWith(x.pickSettle, false); err != nil && !errors.Is(err, ErrClosed) {
				x.mergeErrs.Add(1)
				x.backgroundError("merge", err)
			}
			continue
		case <-x.mergeKick:
		}
		for {
			select {
			case <-x.stop:
				return
			default:
			}
			did, err := x.mergeOnce(false)
			if err != nil {
				if !errors.Is(err, ErrClosed) {
					x.mergeErrs.Add(1)
					x.backgroundError("merge", err)
				}
				break
			}
			if !did {
				break
			}
		}
		if x.opts.SettleAfter > 0 {
			settle.Reset(max(x.settleWait(), 0))
		}
	}
}

// backgroundError reports a failure of background work (what: "flush" or
// "merge") to Options.OnBackgroundError.
func (x *Index) backgroundError(what string, err error) {
	if fn := x.opts.OnBackgroundError; fn != nil {
		fn(fmt.Errorf("%w: %s: %w", ErrBackground, what, err))
	}
}

// mergePolicy is the tiered merge policy as a pure function of segment
// sizes, so that it can be read and tested on its own (the transcripts in
// testdata/merge show it at work). A segment's tier is its size class,
// floor(log_factor(live docs / minDocs)), with everything at or below
// minDocs in tier 0; the policy merges the first run of factor neighbouring
// segments of one tier. Restricting runs to neighbours keeps every
// segment's id range contiguous; merging equal tiers bounds the work:
// every document is rewritten about once per tier it climbs.
type mergePolicy struct {
	factor  int    // Options.MergeFactor, >= 2
	minDocs uint64 // Options.MergeMinDocs, >= 1
}

func (x *Index) mergePolicy() mergePolicy {
	return mergePolicy{factor: x.opts.MergeFactor, minDocs: uint64(x.opts.MergeMinDocs)}
}

// tier is the size class of a segment holding live documents.
func (p mergePolicy) tier(live uint64) int {
	if live <= p.minDocs {
		return 0
	}
	t := 0
	for live >= p.minDocs*uint64(p.factor) {
		live /= uint64(p.factor)
		t++
	}
	return t
}

// pick returns the first run live[i:j] of factor consecutive segments of
// the same tier, given the live document counts of the sealed segments in
// id order; ok is false when there is none.
func (p mergePolicy) pick(live []uint64) (i, j int, ok bool) {
	f := p.factor
	for i = 0; i+f <= len(live); i++ {
		t := p.tier(live[i])
		j = i + 1
		for j < len(live) && p.tier(live[j]) == t && j-i < f {
			j++
		}
		if j-i == f {
			return i, j, true
		}
	}
	return 0, 0, false
}

// sealed returns the sealed segments, in id order. Callers hold x.mu.
func (x *Index) sealed() []*segment {
	var sealed []*segment
	for _, s := range x.segs {
		if s.mut != nil {
			break
		}
		sealed = append(sealed, s)
	}
	return sealed
}

// pickMerge returns the segments mergePolicy picks among the sealed ones;
// all=true returns every sealed segment (when merging them changes
// anything). Callers hold x.mu.
func (x *Index) pickMerge(all bool) []*segment {
	sealed := x.sealed()
	if all {
		if len(sealed) < 2 && (len(sealed) == 0 || sealed[0].nDeleted == 0) {
			return nil
		}
		return sealed
	}
	live := make([]uint64, len(sealed))
	for i, s := range sealed {
		live[i] = uint64(s.nDocs - s.nDeleted)
	}
	if i, j, ok := x.mergePolicy().pick(live); ok {
		return sealed[i:j]
	}
	return nil
}

// Merge merges every sealed segment into one, dropping deleted documents.
// Background merging uses the tiered policy instead; Merge is for tests,
// benchmarks and compaction after large deletions.
func (x *Index) Merge() error {
	_, err := x.mergeOnce(true)
	return err
}

func (x *Index) mergeOnce(all bool) (bool, error) {
	return x.mergeWith(func() []*segment { return x.pickMerge(all) }, false)
}

// mergeWith merges the segments pick returns (called under x.mu; none:
// nothing to do) into one and reports whether it merged. With purge the
// amended documents' void postings leave too (purge.go).
func (x *Index) mergeWith(pick func() []*segment, purge bool) (bool, error) {
	x.mergeMu.Lock()
	defer x.mergeMu.Unlock()
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return false, ErrClosed
	}
	in := pick()
	if len(in) == 0 {
		x.mu.Unlock()
		return false, nil
	}
	in = slices.Clone(in)
	// Only deleted documents leave: an amended one keeps its fields, time
	// and (void) postings in its segment until a purge or a rebuild.
	tomb := x.tomb.Clone()
	var mute *roaring.Bitmap
	if purge {
		mute = x.amended.Clone()
	}
	num := x.nextNum
	x.nextNum++
	x.mu.Unlock()

	out, err := x.buildMerged(in, tomb, mute, num)
	if err != nil {
		return false, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return false, ErrClosed
	}
	i := slices.Index(x.segs, in[0])
	if i < 0 || i+len(in) > len(x.segs) || !slices.Equal(x.segs[i:i+len(in)], in) {
		return false, fmt.Errorf("lazymem: index: merge inputs changed")
	}
	segs := slices.Clone(x.segs[:i])
	if out != nil {
		segs = append(segs, out)
	}
	segs = append(segs, x.segs[i+len(in):]...)
	old := x.segs
	x.segs = segs
	if out != nil {
		x.recountSeg(out)
	}
	if err := x.writeManifestLocked(); err != nil {
		x.segs = old
		return false, err
	}
	if purge {
		// The amended documents of the rewritten range (others stay).
		r := roaring.New()
		r.AddRange(uint64(in[0].lo), uint64(in[len(in)-1].hi)+1)
		r.And(mute)
		x.purged.Or(r)
	}
	x.merges.Add(1)
	x.fcache.drop(in)
	if x.dir != "" {
		for _, s := range in {
			// The manifest no longer references it; an error only leaves an
			// orphan that the next Open removes.
			_ = x.fs.Remove(x.fs.PathJoin(x.dir, segName(s.num)))
		}
	}
	return true, nil
}

// buildMerged concatenates the inputs (ascending, contiguous ranges) into
// one segment over their whole id range, dropping documents in tomb and
// the postings (not the fields, time or length) of those in mute, which
// may be nil. When every document was deleted the result holds no
// documents but keeps the id range, so segment ranges stay contiguous.
func (x *Index) buildMerged(in []*segment, tomb, mute *roaring.Bitmap, num uint64) (*segment, error) {
	b, err := mergeBuilder(in, tomb, mute)
	if err != nil {
		return nil, err
	}
	return x.writeSegment(b, num)
}

// mergeBuilder is buildMerged's segment before it is encoded.
func mergeBuilder(in []*segment, tomb, mute *roaring.Bitmap) (*segBuilder, error) {
	lo, hi := in[0].lo, in[len(in)-1].hi
	n := int(hi - lo + 1)
	b := &segBuilder{lo: lo, hi: hi, lens: make([]uint32, n), times: make([]int64, n),
		present: roaring.New(), fields: make(fieldSet)}
	for _, s := range in {
		p := roaring.AndNot(s.present, tomb)
		b.present.Or(p)
		it := p.Iterator()
		for it.HasNext() {
			id := it.Next()
			dl := s.docLen(id)
			b.lens[id-lo] = dl
			b.times[id-lo] = s.docTime(id)
			b.nDocs++
			b.sumLen += uint64(dl)
		}
		err := s.forEachField(func(k, v string, bm *roaring.Bitmap) error {
			bm = roaring.AndNot(bm, tomb)
			if bm.IsEmpty() {
				return nil
			}
			m := b.fields[k]
			if m == nil {
				m = make(map[string]*roaring.Bitmap)
				b.fields[k] = m
			}
			if e := m[v]; e != nil {
				e.Or(bm)
			} else {
				m[v] = bm
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	// The output's sections are at most the inputs' together (deletions
	// and fewer partial blocks only shrink them): size them once instead
	// of growing (and copying) ~100 MB by doubling (profile: 15% of a merge).
	var nPosts, nTable, nStrs int
	for _, s := range in {
		nPosts, nTable, nStrs = nPosts+len(s.posts), nTable+len(s.table), nStrs+len(s.strs)
	}
	b.posts = make([]byte, 0, nPosts+nPosts/64)
	b.table = make([]byte, 0, nTable)
	b.strs = make([]byte, 0, nStrs)
	// Deleted (and muted) ids in the merged range, if any (most merges
	// have none).
	var del *roaring.Bitmap
	if mute != nil && !mute.IsEmpty() {
		tomb = roaring.Or(tomb, mute)
	}
	if !tomb.IsEmpty() && tomb.IntersectsWithInterval(uint64(lo), uint64(hi)+1) {
		del = tomb
	}
	if s := in[0]; len(in) == 1 && s.v3 && s.pg && !s.v4 && b.version() == segVersion5 {
		return b, b.copyTerms(s, del)
	}
	// k-way merge of the sorted term tables.
	pos := make([]int, len(in))
	var docs, tfs []uint32
	var p postingsIter
	var ti termInfo
	for {
		var best []byte
		for i, s := range in {
			if pos[i] < s.nTerms {
				t := s.termAt(pos[i])
				if best == nil || string(t) < string(best) {
					best = t
				}
			}
		}
		if best == nil {
			break
		}
		term := string(best)
		docs, tfs = docs[:0], tfs[:0]
		for i, s := range in {
			if pos[i] >= s.nTerms || string(s.termAt(pos[i])) != term {
				continue
			}
			s.entry(pos[i], &ti)
			pos[i]++
			p.reset(&ti)
			for p.Next() {
				if d := p.At(); del == nil || !del.Contains(d) {
					docs = append(docs, d)
					tfs = append(tfs, p.TF())
				}
			}
			if err := p.Err(); err != nil {
				return nil, &CorruptionError{File: segName(s.num), Err: err}
			}
		}
		b.addTerm(term, docs, tfs)
	}
	return b, nil
}

// holdsAny reports whether p (reset to a term's postings) holds one of
// the ascending ids dl.
func holdsAny(p *postingsIter, dl []uint32) bool {
	for j := 0; j < len(dl); {
		if !p.Seek(dl[j]) {
			return false
		}
		at := p.At()
		if at == dl[j] {
			return true
		}
		k, _ := slices.BinarySearch(dl[j:], at) // the first dropped id >= at
		j += k
	}
	return false
}

// copyTerms adds the terms of s, a version 5 segment rewritten alone (a
// purge), to b: a term none of whose postings is in del keeps its encoded
// postings as they are (a term's block offsets are relative to its
// start, and a kept document's length does not change, so its block
// corners hold), only its entry's offsets change; the others are decoded
// and encoded again without those postings. Profile lesson (the purge of
// a settled 1M index, one segment, one record forgotten): encoding every
// term again was 28% of the purge, decoding it 15%.
func (b *segBuilder) copyTerms(s *segment, del *roaring.Bitmap) error {
	lowest := uint32(math.MaxUint32) // the lowest dropped id in s
	var dl []uint32                  // the dropped ids in s, ascending
	if del != nil {
		r := roaring.New()
		r.AddRange(uint64(s.lo), uint64(s.hi)+1)
		r.And(del)
		if !r.IsEmpty() {
			lowest = r.Minimum()
			dl = r.ToArray()
		}
	}
	var docs, tfs []uint32
	var p postingsIter
	var ti termInfo
	for i := 0; i < s.nTerms; i++ {
		e := s.table[i*termEntrySize : (i+1)*termEntrySize]
		start, end := postOffV3(e), uint64(len(s.posts))
		if i+1 < s.nTerms {
			end = postOffV3(s.table[(i+1)*termEntrySize:])
		}
		term := s.termAt(i)
		clean := binary.LittleEndian.Uint32(e[8:]) < lowest // its last posting is below every dropped id
		docs, tfs = docs[:0], tfs[:0]
		if !clean {
			// Whether the term holds a dropped id: its postings and the
			// dropped ids intersected by seeks (the postings' blocks
			// skipped by their last ids), so a term holding none is
			// copied without decoding all of it. Profile lesson (the
			// purge of a settled 1M index, one record forgotten): the
			// walk of every posting through Next and the bitmap's
			// Contains was 3.2 of the purge's 14.4 s.
			s.entry(i, &ti)
			p.reset(&ti)
			clean = !holdsAny(&p, dl)
			if err := p.Err(); err != nil {
				return &CorruptionError{File: segName(s.num), Err: err}
			}
		}
		if clean && start <= end && end <= uint64(len(s.posts)) {
			b.addEncoded(term, e, s.posts[start:end])
			continue
		}
		// Decoded and encoded again without the dropped ids (or whole,
		// never for a file segBuilder wrote, when the term's postings are
		// not where its offsets say: they follow in term order).
		s.entry(i, &ti)
		p.reset(&ti)
		for p.Next() {
			if d := p.At(); clean || !del.Contains(d) {
				docs = append(docs, d)
				tfs = append(tfs, p.TF())
			}
		}
		if err := p.Err(); err != nil {
			return &CorruptionError{File: segName(s.num), Err: err}
		}
		b.addTerm(string(term), docs, tfs)
	}
	return nil
}
