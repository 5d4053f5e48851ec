package segment

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// usage counts, for each word of the log's vocabulary and each name of its
// name table, the sealed segments whose value uses it. Compact deletes the
// words and names no segment uses any more (gcWords, gcNames); with the
// counts it reads only the segments sealed since its last count and the
// ones it rewrites, instead of every segment of the log: at 1M records the
// walk of every segment's head and text frames was 0.9 s of each Compact.
//
// The first Compact of a process counts every segment (what each Compact
// did before). From then on the counts are kept by the changes to a
// counted segment: a rewrite takes off its old value's words and names and
// adds its new value's (rewrite), a drop takes off the dropped segments'
// (DropBefore), and a repair, whose damaged value cannot be read, makes
// the next Compact count every segment again. Segments sealed after the
// last count (first >= end) are counted by the next Compact. Touched only
// under Log.sealMu.
type usage struct {
	ok    bool              // the counts hold for every segment with first < end
	end   uint64            // the end of the last segment counted
	words []uint32          // word id -> segments using it
	names map[uint64]uint32 // name id -> segments using it

	// one segment's sets (scratch)
	w     wordSet
	n     map[uint64]bool
	codes []byte
}

// wordSet is a set of word ids: used[id] says id is in it, ids lists them
// (to clear used after a segment without walking the whole vocabulary).
type wordSet struct {
	used []bool
	ids  []uint32
}

// mark adds word id; false if id is not below the set's size.
func (s *wordSet) mark(id uint64) bool {
	if id >= uint64(len(s.used)) {
		return false
	}
	if !s.used[id] {
		s.used[id] = true
		s.ids = append(s.ids, uint32(id))
	}
	return true
}

// reset empties the set and sizes it for a vocabulary of n words.
func (s *wordSet) reset(n int) {
	for _, id := range s.ids {
		s.used[id] = false
	}
	s.ids = s.ids[:0]
	if len(s.used) < n {
		s.used = append(s.used, make([]bool, n-len(s.used))...)
	}
}

// errUsage wraps the reason a segment's words or names could not be
// counted: Compact then keeps every word and name.
var errUsage = errors.New("usage unknown")

// scan fills u.w and u.n with the words and names value v of the segment
// starting at first uses.
func (u *usage) scan(l *Log, first uint64, v []byte) error {
	u.w.reset(l.words.snap.Load().size())
	if u.n == nil {
		u.n = map[uint64]bool{}
	}
	clear(u.n)
	if len(v) == 0 {
		return nil
	}
	if hasNames(v[0]) {
		if err := l.comp.namesUsed(first, v, u.n); err != nil {
			return err
		}
	}
	if hasWords(v[0]) {
		if err := l.comp.wordsUsed(first, v, &u.w, &u.codes); err != nil {
			return err
		}
	}
	return nil
}

// add counts (delta 1) or takes off (delta -1) the words and names of
// value v of the segment starting at first.
func (u *usage) add(l *Log, first uint64, v []byte, delta int) error {
	if err := u.scan(l, first, v); err != nil {
		return err
	}
	if n := int(slices.Max(append(u.w.ids, 0))) + 1; len(u.words) < n {
		u.words = append(u.words, make([]uint32, n-len(u.words))...) // zeros, whatever the capacity held
	}
	for _, id := range u.w.ids {
		c := int64(u.words[id]) + int64(delta)
		if c < 0 {
			return fmt.Errorf("segment %d: word %d counted below zero", first, id)
		}
		u.words[id] = uint32(c)
	}
	for id := range u.n {
		c := int64(u.names[id]) + int64(delta)
		switch {
		case c < 0:
			return fmt.Errorf("segment %d: name %d counted below zero", first, id)
		case c == 0:
			delete(u.names, id)
		default:
			u.names[id] = uint32(c)
		}
	}
	return nil
}

// countUsage brings the counts up to date: every segment's when they do
// not hold, else the segments sealed since the last count. On an error the
// counts are left not holding; errUsage wraps a segment whose head or
// text frames could not be walked (damaged), other errors are the store's.
// Many segments (a count of every segment) are walked on up to
// maxCountWorkers goroutines, each counting its share apart.
func (l *Log) countUsage() error {
	u := &l.use
	l.segMu.RLock()
	segs := slices.Clone(l.segs)
	l.segMu.RUnlock()
	if !u.ok {
		u.words, u.names, u.end = nil, map[uint64]uint32{}, 0
	}
	u.ok = false
	var todo []segMeta
	for _, m := range segs {
		if m.first >= u.end {
			todo = append(todo, m)
		}
	}
	db, err := l.rdb()
	if err != nil {
		return err
	}
	defer l.dbMu.RUnlock()
	workers := 1
	if len(todo) >= parallelCountMin {
		workers = min(runtime.GOMAXPROCS(0), maxCountWorkers)
	}
	parts := make([]usage, workers)
	errs := make([]error, workers)
	var next atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			p := &parts[w]
			p.names = map[uint64]uint32{}
			for !stop.Load() {
				i := int(next.Add(1)) - 1
				if i >= len(todo) {
					return
				}
				m := todo[i]
				v, closer, err := value(db, m)
				if errors.Is(err, errSegmentGone) {
					continue
				}
				if err == nil {
					if err = p.add(l, m.first, v, 1); err != nil {
						err = fmt.Errorf("%w: segment %d: %w", errUsage, m.first, err)
					}
					closer.Close()
				}
				if err != nil {
					errs[w] = err
					stop.Store(true)
					return
				}
			}
		})
	}
	wg.Wait()
	var first error
	for _, err := range errs {
		if err != nil && (first == nil || errors.Is(first, errUsage) && !errors.Is(err, errUsage)) {
			first = err // the store's errors before a damaged segment's
		}
	}
	if first != nil {
		return first
	}
	for i := range parts {
		p := &parts[i]
		if len(u.words) < len(p.words) {
			u.words = append(u.words, make([]uint32, len(p.words)-len(u.words))...)
		}
		for id, c := range p.words {
			u.words[id] += c
		}
		for id, c := range p.names {
			u.names[id] += c
		}
	}
	if len(segs) > 0 {
		u.end = max(u.end, segs[len(segs)-1].end())
	}
	u.ok = true
	return nil
}

// usageKnown brings the counts up to date for gcNames or gcWords (what names
// the table) and reports whether they hold. When a segment could not be
// walked (damaged), which names and words it uses is unknown: every one
// is kept until a compaction after its repair (namesStale), and usageKnown
// returns false and no error; the store's errors are returned.
func (l *Log) usageKnown(what string) (bool, error) {
	err := l.countUsage()
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, errUsage) {
		return false, err
	}
	l.logf("lazymem: segment: compact: %s kept: %v", what, err)
	l.namesStale = true
	return false, nil
}

// A count of at least parallelCountMin segments runs on up to
// maxCountWorkers goroutines (the first Compact of a process: ~2,000
// segments at 1M records).
const (
	parallelCountMin = 64
	maxCountWorkers  = 4
)

// uncount takes off the counts of the counted segments among segs (their
// values as stored now), before a rewrite or a drop changes them.
func (l *Log) uncount(segs []segMeta) { l.adjust(segs, -1) }

// recount adds the counts of segment m's value as stored now (after a
// rewrite), if m was counted.
func (l *Log) recount(m segMeta) { l.adjust([]segMeta{m}, 1) }

// adjust adds delta to the counts of the words and names of the counted
// segments among segs. A segment it cannot read leaves the counts not
// holding.
func (l *Log) adjust(segs []segMeta, delta int) {
	u := &l.use
	if !u.ok {
		return
	}
	db, err := l.rdb()
	if err != nil {
		u.ok = false
		return
	}
	defer l.dbMu.RUnlock()
	for _, m := range segs {
		if m.first >= u.end {
			continue
		}
		v, closer, err := value(db, m)
		if errors.Is(err, errSegmentGone) {
			continue
		}
		if err == nil {
			err = u.add(l, m.first, v, delta)
			closer.Close()
		}
		if err != nil {
			l.logf("lazymem: segment: the next compaction reads every segment: segment %d: %v", m.first, err)
			u.ok = false
			return
		}
	}
}

// wordUsed reports whether a counted segment uses word id (countUsage
// succeeded just before).
func (u *usage) wordUsed(id int) bool { return id < len(u.words) && u.words[id] > 0 }
