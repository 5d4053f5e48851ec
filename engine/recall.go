package engine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/index"
	"github.com/lazymem/lazymem/vecmath"
)

// Memory is one recalled record with the evidence that ranked it.
type Memory struct {
	Record
	// Score is the fused score the memories are ranked by.
	Score float64
	// Sparse is the BM25 score (0 when the record was not a BM25 hit:
	// a session turn, or ModeDense).
	Sparse float64
	// Dense is the cosine similarity of the query and the constructed
	// memory text (0 in ModeSparse).
	Dense float64
	// Reasons says why the memory ranked, when Query.Explain is set:
	// "bm25 #2", "dense #1", "session", "recency x0.84".
	Reasons []string
}

// Result is the answer of Recall.
type Result struct {
	Memories []Memory
	Stats    RecallStats
}

// RecallStats says what a recall did and what it cost.
type RecallStats struct {
	Mode Mode
	// Text is what BM25 searched: the query text after time-expression
	// removal and synonym expansion.
	Text string
	// DenseText is the query text that was embedded (lazy and dense
	// modes): the text after time-expression removal, without the
	// speakers' names unless Query.KeepSpeakersInDense.
	DenseText string
	// Since and Until are the effective time window (after ParseTime).
	Since, Until time.Time
	// TimeExpr is the time expression ParseTime found, if any.
	TimeExpr string
	// Speakers are the query words found as roles of the searched agents:
	// their records were boosted by Query.SpeakerBoost.
	Speakers []string

	Filtered     int // records passing the filters
	Hits         int // BM25 hits (at most Candidates)
	SessionTurns int // candidates added by the session chain (not BM25 hits)
	Candidates   int // records that reached the selective stage
	Embedded     int // texts embedded by this recall (cache misses; the query counts)
	CacheHits    int // vectors found in the cache (memory or disk)
	DiskHits     int // of CacheHits, those read from disk
	Shared       int // vectors another recall was computing and this one waited for

	Durations StageDurations
}

// StageDurations is the wall time of each stage of one recall.
type StageDurations struct {
	Filter time.Duration // time parsing, filter bitmaps
	Broad  time.Duration // BM25 top-Candidates and the session chain
	Fetch  time.Duration // reading candidate records from the log
	Embed  time.Duration // cache lookups and the embedder call
	Score  time.Duration // dense scoring, fusion, top K
	Total  time.Duration
}

// cand is one candidate of the selective stage.
type cand struct {
	id         uint64
	sparse     float64
	sparseRank int // 1-based; 0: not a BM25 hit
	denseRank  int // 1-based; 0: no dense score
	session    bool
	speaker    bool // boosted by Query.SpeakerBoost
	dense      float32
	rec        Record
	fetched    bool
}

// Recall answers q: filters and BM25 narrow the store to candidates, only
// the candidates are embedded, and sparse and dense evidence are fused.
func (db *DB) Recall(ctx context.Context, q Query) (*Result, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, ErrClosed
	}
	t0 := time.Now()
	if err := q.prepare(&db.opts, db.cache != nil); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := &Result{}
	st := &res.Stats
	st.Mode = q.Mode
	now := q.Now
	if now.IsZero() {
		now = db.opts.Clock()
	}

	// Time expression and filters.
	text := q.Text
	since, until := q.Since, q.Until
	if q.ParseTime {
		if tr, ok := ParseTime(text, now); ok {
			text = tr.Rest
			st.TimeExpr = tr.Expr
			if since.IsZero() || tr.Since.After(since) {
				since = tr.Since
			}
			if until.IsZero() || tr.Until.Before(until) {
				until = tr.Until
			}
		}
	}
	st.Since, st.Until = since, until
	denseText := strings.TrimSpace(text)
	text = expandSynonyms(denseText, q.Synonyms)
	st.Text = text

	f := index.Filter{
		Sessions: q.Sessions,
		Roles:    q.Roles,
		Where:    indexFields(q.Where),
		Not:      indexFields(q.Not),
	}
	if q.Agent != "" {
		f.Agents = append(f.Agents, q.Agent)
	}
	f.Agents = append(f.Agents, q.Agents...)
	if !since.IsZero() {
		f.Since = since.UnixNano()
	}
	if !until.IsZero() {
		f.Until = until.UnixNano()
		if f.Until == 0 { // the epoch itself: keep it a bound
			f.Until = 1
		}
	}
	var bm *roaring.Bitmap
	if !since.IsZero() && !until.IsZero() && !since.Before(until) {
		bm = roaring.New() // empty window
	} else {
		var err error
		bm, err = db.idx.Filter(&f)
		if err != nil {
			return nil, fmt.Errorf("lazymem: engine: filter: %w", err)
		}
	}
	st.Filtered = int(bm.GetCardinality())
	var speakers *roaring.Bitmap
	if q.SpeakerBoost != 1 && st.Filtered > 0 {
		var err error
		speakers, st.Speakers, err = db.findSpeakers(denseText, f.Agents)
		if err != nil {
			return nil, err
		}
		if len(st.Speakers) > 0 {
			if stripped := stripWords(text, st.Speakers); strings.TrimSpace(stripped) != "" {
				text = stripped
				st.Text = text
			}
			// Spaces collapsed where a name was: the embedded text is also
			// the cache key.
			if stripped := strings.Join(strings.Fields(stripWords(denseText, st.Speakers)), " "); stripped != "" && !q.KeepSpeakersInDense {
				denseText = stripped
			}
		}
	}
	if q.Mode != ModeSparse {
		st.DenseText = denseText
	}
	t1 := time.Now()
	st.Durations.Filter = t1.Sub(t0)

	if q.Mode == ModeDense {
		if err := db.recallDense(ctx, &q, denseText, bm, speakers, now, res, t1); err != nil {
			return nil, err
		}
		db.recalls.Add(1)
		st.Durations.Total = time.Since(t0)
		return res, nil
	}

	// Broad stage: BM25 over the filter, then the session chain.
	var cands []cand
	pos := map[uint64]int{}
	if st.Filtered > 0 {
		if strings.TrimSpace(text) != "" {
			hits, err := db.idx.Search(text, bm, q.Candidates, nil)
			if err != nil {
				return nil, fmt.Errorf("lazymem: engine: search: %w", err)
			}
			for i, h := range hits {
				pos[h.ID] = len(cands)
				cands = append(cands, cand{id: h.ID, sparse: h.Score, sparseRank: i + 1})
			}
			st.Hits = len(hits)
		}
		if st.Hits == 0 && (strings.TrimSpace(text) == "" || st.TimeExpr != "") {
			// No text, or a time expression and no other word that matched
			// ("what happened yesterday?"): the latest records of the window,
			// which the dense stage then ranks. Without a time expression a
			// query matching nothing returns nothing.
			it := bm.ReverseIterator()
			for it.HasNext() && len(cands) < q.Candidates {
				id := uint64(it.Next())
				pos[id] = len(cands)
				cands = append(cands, cand{id: id})
			}
		}
		if q.CurrentSession != "" && q.SessionTurns > 0 {
			sf := f
			sf.Sessions = []string{q.CurrentSession}
			sb, err := db.idx.Filter(&sf)
			if err != nil {
				return nil, fmt.Errorf("lazymem: engine: session filter: %w", err)
			}
			sb.And(bm)
			it := sb.ReverseIterator()
			for n := 0; it.HasNext() && n < q.SessionTurns; n++ {
				id := uint64(it.Next())
				if j, ok := pos[id]; ok {
					cands[j].session = true
					continue
				}
				pos[id] = len(cands)
				cands = append(cands, cand{id: id, session: true})
				st.SessionTurns++
			}
		}
	}
	st.Candidates = len(cands)
	t2 := time.Now()
	st.Durations.Broad = t2.Sub(t1)

	// Selective stage: vectors by record id from memory; fetch, construct
	// and look up (or embed) the rest; score.
	recency := q.RecencyHalfLife > 0
	if recency || q.Mode == ModeLazy {
		var sel []int // nil: every candidate
		var vecs [][]float32
		if q.Mode == ModeLazy {
			vecs = make([][]float32, len(cands))
			sel = make([]int, 0, len(cands))
			for i := range cands {
				if v, ok := db.cache.getID(cands[i].id); ok {
					vecs[i] = v
					st.CacheHits++
				} else {
					sel = append(sel, i)
				}
			}
		}
		if recency {
			sel = nil // the prior needs every candidate's time
		}
		if err := db.fetch(cands, sel); err != nil {
			return nil, err
		}
		t3 := time.Now()
		st.Durations.Fetch = t3.Sub(t2)
		if q.Mode == ModeLazy {
			texts := make([]string, 1, len(cands)+1)
			texts[0] = denseText
			ids := make([]uint64, 1, len(cands)+1) // ids[0] = 0: the query
			var missAt []int
			for i := range cands {
				if vecs[i] == nil {
					texts = append(texts, db.opts.Construct(&cands[i].rec))
					ids = append(ids, cands[i].id)
					missAt = append(missAt, i)
				}
			}
			got, ls, err := db.cache.get(ctx, texts, ids)
			if err != nil {
				return nil, err
			}
			for j, i := range missAt {
				vecs[i] = got[j+1]
			}
			st.Embedded, st.DiskHits, st.Shared = ls.computed, ls.diskHits, ls.shared
			st.CacheHits += ls.hits + ls.diskHits
			t4 := time.Now()
			st.Durations.Embed = t4.Sub(t3)
			dim := db.cache.dim
			flat := make([]float32, len(cands)*dim)
			for i := range cands {
				copy(flat[i*dim:], vecs[i])
			}
			scores := make([]float32, len(cands))
			if err := vecmath.DotBatch(got[0], flat, dim, scores); err != nil {
				return nil, fmt.Errorf("lazymem: engine: dense scoring: %w", err)
			}
			for r, i := range vecmath.TopK(scores, len(scores)) {
				cands[i].dense = scores[i]
				cands[i].denseRank = r + 1
			}
		}
	}
	t3 := time.Now()
	fused := fuse(cands, &q, now, speakers)
	top := vecmath.TopK(fused, q.K)
	var rest []int
	for _, i := range top {
		if !cands[i].fetched {
			rest = append(rest, i)
		}
	}
	if len(rest) > 0 {
		if err := db.fetch(cands, rest); err != nil {
			return nil, err
		}
	}
	res.Memories = make([]Memory, 0, len(top))
	for _, i := range top {
		c := &cands[i]
		if !c.fetched { // deleted between search and fetch
			continue
		}
		m := Memory{Record: c.rec, Score: float64(fused[i]), Sparse: c.sparse, Dense: float64(c.dense)}
		if q.Explain {
			m.Reasons = reasons(c, &q, now)
		}
		res.Memories = append(res.Memories, m)
	}
	st.Durations.Score = time.Since(t3)
	st.Durations.Total = time.Since(t0)
	db.recalls.Add(1)
	return res, nil
}

// fetch reads the records of cands (all, or those at the indices sel) from
// the log in one pass.
func (db *DB) fetch(cands []cand, sel []int) error {
	idx := map[uint64]int{}
	var ids []uint64
	add := func(i int) {
		idx[cands[i].id] = i
		ids = append(ids, cands[i].id)
	}
	if sel == nil {
		for i := range cands {
			add(i)
		}
	} else {
		for _, i := range sel {
			add(i)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	var c codec.Record
	err := db.log.GetMany(ids, func(id uint64, payload []byte) error {
		if _, err := codec.DecodeRecord(payload, &c); err != nil {
			return fmt.Errorf("%w: id %d: %w", ErrCorrupt, id, err)
		}
		k := &cands[idx[id]]
		k.rec = fromCodec(id, &c)
		k.fetched = true
		return nil
	})
	if err != nil {
		return fmt.Errorf("lazymem: engine: fetch: %w", err)
	}
	return nil
}

// fuse computes the fused score of every candidate.
func fuse(cands []cand, q *Query, now time.Time, speakers *roaring.Bitmap) []float32 {
	out := make([]float32, len(cands))
	if len(cands) == 0 {
		return out
	}
	ws, wd := 2*(1-q.DenseWeight), 2*q.DenseWeight
	dense := q.Mode == ModeLazy
	var maxS float64
	minD, maxD := float32(math.Inf(1)), float32(math.Inf(-1))
	for i := range cands {
		maxS = max(maxS, cands[i].sparse)
		minD, maxD = min(minD, cands[i].dense), max(maxD, cands[i].dense)
	}
	for i := range cands {
		c := &cands[i]
		var s float64
		switch {
		case !dense:
			// Sparse only: BM25 itself, and for candidates without a BM25
			// score (session turns, empty query) a tiny score that keeps
			// them in candidate order below every hit.
			s = c.sparse
			if c.sparseRank == 0 {
				s = 1e-9 / float64(1+i)
			}
		case q.Fusion == FusionWeighted:
			var sn, dn float64
			if maxS > 0 {
				sn = c.sparse / maxS
			}
			if maxD > minD {
				dn = float64(c.dense-minD) / float64(maxD-minD)
			}
			s = (1-q.DenseWeight)*sn + q.DenseWeight*dn
		default:
			if c.sparseRank > 0 {
				s += ws / float64(DefaultRRFK+c.sparseRank)
			}
			if c.denseRank > 0 {
				s += wd / float64(DefaultRRFK+c.denseRank)
			}
		}
		if q.RecencyHalfLife > 0 && c.fetched {
			s *= recencyFactor(c.rec.Time, q, now)
		}
		if speakers != nil && s > 0 && speakers.Contains(uint32(c.id)) {
			s *= q.SpeakerBoost
			c.speaker = true
		}
		out[i] = float32(s)
	}
	return out
}

func recencyFactor(t time.Time, q *Query, now time.Time) float64 {
	age := now.Sub(t)
	if age < 0 {
		age = 0
	}
	// Floored so that scores stay above float32's smallest normal number:
	// very old records keep their relative order instead of all tying at 0.
	decay := max(math.Exp2(-float64(age)/float64(q.RecencyHalfLife)), 1e-30)
	return (1 - q.RecencyWeight) + q.RecencyWeight*decay
}

func reasons(c *cand, q *Query, now time.Time) []string {
	var rs []string
	if c.sparseRank > 0 {
		rs = append(rs, fmt.Sprintf("bm25 #%d (%.3g)", c.sparseRank, c.sparse))
	}
	if c.denseRank > 0 {
		rs = append(rs, fmt.Sprintf("dense #%d (%.3f)", c.denseRank, c.dense))
	}
	if c.session {
		rs = append(rs, "session "+q.CurrentSession)
	}
	if c.speaker {
		rs = append(rs, fmt.Sprintf("speaker x%g", q.SpeakerBoost))
	}
	if q.RecencyHalfLife > 0 && c.fetched {
		rs = append(rs, fmt.Sprintf("recency x%.2f", recencyFactor(c.rec.Time, q, now)))
	}
	return rs
}

// denseChunk is how many records ModeDense fetches and embeds at a time.
const denseChunk = 4096

// recallDense scores every filtered record by cosine: the eager reference.
func (db *DB) recallDense(ctx context.Context, q *Query, text string, bm, speakers *roaring.Bitmap, now time.Time, res *Result, t1 time.Time) error {
	st := &res.Stats
	qv, ls, err := db.cache.get(ctx, []string{text}, nil)
	if err != nil {
		return err
	}
	st.Embedded, st.CacheHits, st.DiskHits = ls.computed, ls.hits+ls.diskHits, ls.diskHits
	st.Candidates = st.Filtered
	dim := db.cache.dim
	ids := bm.ToArray()
	scores := make([]float32, len(ids))
	times := make([]time.Time, len(ids))
	var flat []float32
	var fetchD, embedD time.Duration
	for lo := 0; lo < len(ids); lo += denseChunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		hi := min(lo+denseChunk, len(ids))
		tf := time.Now()
		cands := make([]cand, hi-lo)
		for i := range cands {
			cands[i].id = uint64(ids[lo+i])
		}
		if err := db.fetch(cands, nil); err != nil {
			return err
		}
		texts := make([]string, len(cands))
		for i := range cands {
			texts[i] = db.opts.Construct(&cands[i].rec)
			times[lo+i] = cands[i].rec.Time
		}
		te := time.Now()
		fetchD += te.Sub(tf)
		vecs, ls, err := db.cache.get(ctx, texts, nil)
		if err != nil {
			return err
		}
		st.Embedded += ls.computed
		st.CacheHits += ls.hits + ls.diskHits
		st.DiskHits += ls.diskHits
		st.Shared += ls.shared
		flat = slices.Grow(flat[:0], len(vecs)*dim)[:len(vecs)*dim]
		for i, v := range vecs {
			copy(flat[i*dim:], v)
		}
		if err := vecmath.DotBatch(qv[0], flat, dim, scores[lo:hi]); err != nil {
			return fmt.Errorf("lazymem: engine: dense scoring: %w", err)
		}
		for i := range cands {
			if !cands[i].fetched { // deleted meanwhile
				scores[lo+i] = float32(math.Inf(-1))
			}
		}
		embedD += time.Since(te)
	}
	st.Durations.Fetch, st.Durations.Embed = fetchD, embedD
	ts := time.Now()
	fused := make([]float32, len(scores))
	copy(fused, scores)
	for i := range fused {
		if q.RecencyHalfLife > 0 {
			fused[i] *= float32(recencyFactor(times[i], q, now))
		}
		if speakers != nil && fused[i] > 0 && speakers.Contains(ids[i]) {
			fused[i] *= float32(q.SpeakerBoost)
		}
	}
	top := vecmath.TopK(fused, q.K)
	sel := make([]cand, len(top))
	for j, i := range top {
		sel[j] = cand{id: uint64(ids[i]), dense: scores[i], denseRank: j + 1}
	}
	if err := db.fetch(sel, nil); err != nil {
		return err
	}
	for j, i := range top {
		c := &sel[j]
		if !c.fetched || math.IsInf(float64(scores[i]), -1) {
			continue
		}
		m := Memory{Record: c.rec, Score: float64(fused[i]), Dense: float64(scores[i])}
		if q.Explain {
			m.Reasons = reasons(c, q, now)
		}
		res.Memories = append(res.Memories, m)
	}
	st.Durations.Score = time.Since(ts)
	_ = t1
	return nil
}

// maxSpeakerWords bounds the query words checked against the role postings.
const maxSpeakerWords = 32

// findSpeakers returns the records of the agents whose role is a word of
// text (as typed, lowercased or capitalized), and those roles.
func (db *DB) findSpeakers(text string, agents []string) (*roaring.Bitmap, []string, error) {
	var bm *roaring.Bitmap
	var found []string
	seen := map[string]bool{}
	words := strings.FieldsFunc(text, func(r rune) bool { return !isWordRune(r) })
	if len(words) > maxSpeakerWords {
		words = words[:maxSpeakerWords]
	}
	for _, w := range words {
		if len(w) < 2 {
			continue
		}
		lw := strings.ToLower(w)
		for _, v := range []string{w, lw, strings.ToUpper(lw[:1]) + lw[1:]} {
			if seen[v] {
				continue
			}
			seen[v] = true
			rb, err := db.idx.Filter(&index.Filter{Agents: agents, Roles: []string{v}})
			if err != nil {
				return nil, nil, fmt.Errorf("lazymem: engine: role filter: %w", err)
			}
			if rb.IsEmpty() {
				continue
			}
			found = append(found, v)
			if bm == nil {
				bm = rb
			} else {
				bm.Or(rb)
			}
		}
	}
	return bm, found, nil
}

// stripWords removes every whole-word, case-insensitive occurrence of ws
// from text.
func stripWords(text string, ws []string) string {
	drop := map[string]bool{}
	for _, w := range ws {
		drop[strings.ToLower(w)] = true
	}
	var b strings.Builder
	start := -1
	flush := func(end int) {
		if start >= 0 {
			if !drop[strings.ToLower(text[start:end])] {
				b.WriteString(text[start:end])
			}
			start = -1
		}
	}
	for i, r := range text {
		if isWordRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
		b.WriteRune(r)
	}
	flush(len(text))
	return b.String()
}
