package bench

import (
	"fmt"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/lazymem/lazymem/index"
)

// memSource is the log as the index sees it during a bench: the first n
// records of docs. The bench advances n before each Add, the way the engine
// appends to the log before indexing, so a reopen finds nothing to rebuild.
type memSource struct {
	docs []index.Doc
	n    int
}

func (s *memSource) LastID() uint64 {
	if s.n == 0 {
		return 0
	}
	return s.docs[s.n-1].ID
}

func (s *memSource) Scan(from uint64, fn func(d *index.Doc) error) error {
	for i := 0; i < s.n; i++ {
		if s.docs[i].ID < from {
			continue
		}
		if err := fn(&s.docs[i]); err != nil {
			return err
		}
	}
	return nil
}

// Text makes memSource an index.TextSource, for Options.SessionContext: the
// docs are in id order with ids 1..n, as the workload generates them.
func (s *memSource) Text(id uint64) (string, error) {
	if id == 0 || id > uint64(s.n) || s.docs[id-1].ID != id {
		return "", fmt.Errorf("lazymem: bench: no document %d", id)
	}
	return s.docs[id-1].Text, nil
}

// IndexDocs converts the corpus into the index's document type.
func IndexDocs(docs []Doc) []index.Doc {
	out := make([]index.Doc, len(docs))
	for i := range docs {
		d := &docs[i]
		x := index.Doc{ID: d.ID, Time: d.Time, Agent: d.Agent, Session: d.Session, Role: d.Role, Text: d.Text}
		if len(d.Meta) > 0 {
			x.Meta = make([]index.Field, len(d.Meta))
			for j, f := range d.Meta {
				x.Meta[j] = index.Field{Key: f.Key, Values: f.Values}
			}
		}
		out[i] = x
	}
	return out
}

// Lazymem is lazymem's broad stage (index.Index: filter bitmap, then pruned
// BM25 top-k) as an Engine.
type Lazymem struct {
	x    *index.Index
	dir  string
	src  *memSource
	f    index.Filter
	ag   [1]string
	ss   [1]string
	hits []index.Hit
}

// BuildLazymem opens a fresh index at dir and adds docs in batches of batch
// records. Apply runs until the last Add returns, Durable until Flush has
// sealed the mutable segment to disk.
func BuildLazymem(dir string, docs []Doc, batch int, opts index.Options) (*Lazymem, IngestStats, error) {
	if batch <= 0 {
		batch = 1000
	}
	st := IngestStats{Engine: "lazymem", Records: len(docs)}
	src := &memSource{docs: IndexDocs(docs)}
	ptrs := make([]*index.Doc, len(src.docs))
	for i := range src.docs {
		ptrs[i] = &src.docs[i]
		st.Bytes += int64(len(src.docs[i].Text))
	}
	t0 := time.Now()
	x, err := index.Open(dir, opts, src)
	if err != nil {
		return nil, st, fmt.Errorf("lazymem: bench: index open %s: %w", dir, err)
	}
	for lo := 0; lo < len(ptrs); lo += batch {
		hi := min(lo+batch, len(ptrs))
		src.n = hi
		if err := x.Add(ptrs[lo:hi]); err != nil {
			_ = x.Close()
			return nil, st, fmt.Errorf("lazymem: bench: index add [%d,%d): %w", lo, hi, err)
		}
	}
	st.Apply = time.Since(t0)
	if err := x.Flush(); err != nil {
		_ = x.Close()
		return nil, st, fmt.Errorf("lazymem: bench: index flush: %w", err)
	}
	st.Durable = time.Since(t0)
	// The index as it is at rest: it settles by itself once left alone
	// for SettleAfter; here at once, timed apart from the ingest.
	t1 := time.Now()
	if err := x.Settle(); err != nil {
		_ = x.Close()
		return nil, st, fmt.Errorf("lazymem: bench: index settle: %w", err)
	}
	st.Settle = time.Since(t1)
	return &Lazymem{x: x, dir: dir, src: src}, st, nil
}

// OpenLazymem reopens an index BuildLazymem wrote over the same docs.
func OpenLazymem(dir string, docs []Doc, opts index.Options) (*Lazymem, error) {
	src := &memSource{docs: IndexDocs(docs)}
	src.n = len(src.docs)
	x, err := index.Open(dir, opts, src)
	if err != nil {
		return nil, fmt.Errorf("lazymem: bench: index open %s: %w", dir, err)
	}
	return &Lazymem{x: x, dir: dir, src: src}, nil
}

// Index exposes the wrapped index (metrics, tests).
func (l *Lazymem) Index() *index.Index { return l.x }

// Name implements Engine.
func (l *Lazymem) Name() string { return "lazymem" }

// where sets l.f to q's filter; false when q has none.
func (l *Lazymem) where(q *Query) bool {
	if q.Agent == "" && q.Session == "" && q.Since == 0 && q.Until == 0 {
		return false
	}
	l.f = index.Filter{Since: q.Since, Until: q.Until}
	if q.Agent != "" {
		l.ag[0] = q.Agent
		l.f.Agents = l.ag[:]
	}
	if q.Session != "" {
		l.ss[0] = q.Session
		l.f.Sessions = l.ss[:]
	}
	return true
}

// filter builds the candidate bitmap of q; nil when q has no filter.
func (l *Lazymem) filter(q *Query) (*roaring.Bitmap, error) {
	if !l.where(q) {
		return nil, nil
	}
	bm, err := l.x.Filter(&l.f)
	if err != nil {
		return nil, fmt.Errorf("lazymem: bench: filter: %w", err)
	}
	return bm, nil
}

// Search implements Engine: the filter and the pruned BM25 top-k, both
// timed, in one SearchWhere (the filter not copied out of the index).
// Exhaustive builds the filter with Filter, so the report's check
// compares the two ways too.
func (l *Lazymem) Search(q *Query, k int, dst []Hit) ([]Hit, error) {
	if l.x == nil {
		return dst, ErrClosed
	}
	if k <= 0 {
		return dst, ErrBadK
	}
	var f *index.Filter
	if l.where(q) {
		f = &l.f
	}
	var err error
	l.hits, err = l.x.SearchWhere(q.Text, f, k, l.hits[:0])
	if err != nil {
		return dst, fmt.Errorf("lazymem: bench: search: %w", err)
	}
	for _, h := range l.hits {
		dst = append(dst, Hit{ID: h.ID, Score: h.Score})
	}
	return dst, nil
}

// Exhaustive is the same index answered by SearchExhaustive, the reference
// the pruned Search must agree with.
func (l *Lazymem) Exhaustive() Engine { return lazymemExhaustive{l} }

type lazymemExhaustive struct{ l *Lazymem }

func (e lazymemExhaustive) Name() string { return "lazymem-exhaustive" }

func (e lazymemExhaustive) Search(q *Query, k int, dst []Hit) ([]Hit, error) {
	l := e.l
	if l.x == nil {
		return dst, ErrClosed
	}
	if k <= 0 {
		return dst, ErrBadK
	}
	bm, err := l.filter(q)
	if err != nil {
		return dst, err
	}
	hs, err := l.x.SearchExhaustive(q.Text, bm, k)
	if err != nil {
		return dst, fmt.Errorf("lazymem: bench: exhaustive search: %w", err)
	}
	for _, h := range hs {
		dst = append(dst, Hit{ID: h.ID, Score: h.Score})
	}
	return dst, nil
}

// Close closes the index; the directory stays.
func (l *Lazymem) Close() error {
	if l.x == nil {
		return nil
	}
	err := l.x.Close()
	l.x = nil
	if err != nil {
		return fmt.Errorf("lazymem: bench: index close: %w", err)
	}
	return nil
}
