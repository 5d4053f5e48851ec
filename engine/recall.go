package engine

import (
	"context"
	"sync"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/lazymem/lazymem/engine/consolidate"
	"github.com/lazymem/lazymem/index"
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
	// Kind is KindRaw for a record, KindCore for a unit of core memory;
	// a core memory carries its Unit (type, topic, content, action items,
	// source ids) and its Record holds the unit's text, time and agent
	// (Record.ID is 0: the unit's id is Unit.ID).
	Kind string
	Unit *consolidate.Unit
}

// Result is the answer of Recall.
type Result struct {
	Memories []Memory
	// RecallID names this recall to Feedback (one of the last
	// Options.Core.RecallRing recalls).
	RecallID uint64
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
	// speakers' names (see Query.SpeakerBoost).
	DenseText string
	// Since and Until are the effective time window (after ParseTime).
	Since, Until time.Time
	// TimeExpr is the time expression ParseTime found, if any.
	TimeExpr string
	// Speakers are the query words found as roles of the searched agents:
	// their records were boosted by Query.SpeakerBoost.
	Speakers []string
	// Expansion is what the built-in lexicon added to the BM25 text (see
	// Query.NoExpansion).
	Expansion string
	// Notes say, in words, what the recall did beyond the plain pipeline:
	// a speaker question narrowed to the speaker's records, a fallback
	// dense pass and what the embedder can do in it.
	Notes []string

	Filtered     int // records passing the filters
	Hits         int // BM25 hits (at most Candidates)
	SessionTurns int // candidates added by the session chain (not BM25 hits)
	// Fallback is the number of candidates the fallback pass added: with
	// fewer than Query.K/2 BM25 hits (or none), the latest records of the
	// window and of the current session, at most Query.FallbackScan, so
	// that records passing the filters always give an answer.
	Fallback int
	// Neighbours is the number of candidates added as session neighbours
	// of the top BM25 hits (see neighbourSource).
	Neighbours int
	// SpeakerRecords is the number of candidates the speaker source added
	// (a speaker question, or a named speaker with few BM25 hits).
	SpeakerRecords int
	Candidates     int // records that reached the selective stage
	Embedded       int // texts embedded by this recall (cache misses; the query counts)
	CacheHits      int // vectors found in the cache (memory or disk)
	DiskHits       int // of CacheHits, those read from disk
	Shared         int // vectors another recall was computing and this one waited for

	Durations StageDurations
}

// StageDurations is the wall time of each stage of one recall.
type StageDurations struct {
	Filter time.Duration // time parsing, filter bitmaps, speaker detection
	Broad  time.Duration // the candidate sources: BM25 top-Candidates, the session chain
	Fetch  time.Duration // reading candidate records from the log
	Embed  time.Duration // cache lookups and the embedder call
	Score  time.Duration // dense scoring, fusion, top K
	Total  time.Duration
}

// plan is one recall on its way through the stages. Each stage reads what
// the earlier ones left in it and adds its own output; the statistics and
// the explanations are filled in as it goes.
type plan struct {
	db  *DB
	q   *Query
	now time.Time // the reference time: Query.Now or the DB's clock
	res Result

	// parse
	text string // what BM25 searches
	// terms are index terms BM25 searches besides text's, as they are:
	// the character bigrams of the glossary's Chinese translations.
	terms     []string
	denseText string // what is embedded
	since     time.Time
	until     time.Time
	// at is the moment the query's time expression names (TimeRange.At;
	// zero: none): with no BM25 hit the records nearest it rank first.
	at time.Time
	// dateSince and dateUntil: the window of a date the query names when
	// ParseTime is off (a soft prior; zero: none).
	dateSince, dateUntil time.Time
	dateExpr             string
	// prevExpr names the previous session ("last time", "上次开会"; see
	// recall_previous.go), prevMeeting when it names a meeting.
	prevExpr    string
	prevMeeting bool
	// filter
	filter index.Filter
	// justNow: the time expression is a just-now one (recall_justnow.go).
	justNow      bool
	bm           *roaring.Bitmap // the records passing the filters
	fkey         index.FilterKey // bm's key for SearchKeyed (bm is only narrowed in place)
	queryLowInfo bool            // the query is only pleasantries
	earlier      bool            // the query asks about an earlier state
	earlierWords bool            // ... in words (the lexicon's [earlier]), not as "last time"
	current      bool            // the query asks about the current state or a decision
	changed      bool            // ... whether something changed (asksChange)
	// newerOver: a newer answer -> the older one it passed
	// (supersedeCurrent); alike: whether two candidates answer the same
	// question by its tests (nil when it did not run that far).
	newerOver map[int]int
	alike     func(a, b int) bool
	mention   bool // the query asks who mentioned something
	// speakers
	speakers    *roaring.Bitmap // records spoken by a speaker the query names; nil: none
	speakerOnly bool            // nothing but the speaker is asked about
	// participants: the records of the speakers other than the user and
	// the assistant, in a speaker question about someone no role names
	// (recall_participants.go); nil: not such a question.
	participants *roaring.Bitmap
	// others: the records of the speakers named after the question's
	// subject (see findSubject); nil: one speaker, or a joint question.
	others      *roaring.Bitmap
	subjectName string
	// sources
	cands []cand
	pos   map[uint64]int // candidate id -> index in cands
	// sessions: the session bitmaps the neighbour source and rule asked
	// for (see plan.session).
	sessions map[sessionKey]*roaring.Bitmap
	// prior: the query whose recency prior the ranking applies, once
	// asked (priorQuery).
	prior *Query
	// selective
	qvec []float32   // the query's unit vector (lazy and dense)
	vecs [][]float32 // per candidate (lazy)
	// fuse
	fused []float32 // per candidate
	top   []int     // indices into cands, best first

	lap time.Time // start of the running stage
}

// cand is one candidate of the selective stage.
type cand struct {
	id          uint64
	from        sourceSet // the sources that proposed it
	sparse      float64
	sparseRank  int // 1-based; 0: not a BM25 hit
	denseRank   int // 1-based; 0: no dense score
	session     bool
	speaker     bool    // boosted by Query.SpeakerBoost
	lowInfo     bool    // its text is only pleasantries
	question    bool    // its text is a question
	superseded  bool    // moved above an older candidate answering the same question
	original    bool    // moved above a newer one, in a question about the earlier state
	settles     bool    // a settling turn that took a proposal's place (recall_newer.go)
	dated       bool    // its time is in the window of a date the query names
	neighbours  bool    // its score took a share of its session neighbours'
	timed       bool    // a when question, and its text states a time
	narrated    bool    // an experience question, and its text narrates one
	echoed      bool    // moved above the reply that echoes its words (recall_echo.go)
	answered    bool    // moved above the question in the history it answers (recall_echo.go)
	participant bool    // the best record of its speaker, moved up (recall_participants.go)
	coverage    float32 // mention questions: the factor of its own words (0: not applied)
	dense       float32
	// fact is what fusion reads of the record (facts.go): set by the
	// selective stage for every candidate it could read or knew.
	fact    fact
	rec     Record // read from the log when fetched; else only rec.Time, from fact
	fetched bool
	damaged bool // its record could not be read (a damaged log block)
}

// Recall answers q: filters and BM25 narrow the store to candidates, only
// the candidates are embedded, and sparse and dense evidence are fused.
// The stages are listed in recall.
func (db *DB) Recall(ctx context.Context, q Query) (*Result, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, ErrClosed
	}
	p, err := db.recall(ctx, q)
	if err != nil {
		return nil, err
	}
	db.recalls.Add(1)
	db.noteRecall(p)
	p.res.RecallID = db.rememberRecall(p)
	p.releaseCands()
	return &p.res, nil
}

// recall runs q through the stages and returns the finished plan.
func (db *DB) recall(ctx context.Context, q Query) (*plan, error) {
	t0 := time.Now()
	if err := q.prepare(&db.opts, db.cache != nil); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p := db.newPlan(&q, t0)
	p.parse()
	if err := p.applyFilter(); err != nil {
		return nil, err
	}
	if err := p.widenJustNow(); err != nil {
		return nil, err
	}
	if err := p.dropEmptyWindow(); err != nil {
		return nil, err
	}
	if err := p.previous(); err != nil {
		return nil, err
	}
	if err := p.namedMeeting(); err != nil {
		return nil, err
	}
	if err := p.detectSpeakers(); err != nil {
		return nil, err
	}
	p.stageDone(&p.res.Stats.Durations.Filter)
	if q.Mode == ModeDense {
		if err := p.dense(ctx); err != nil { // every filtered record, no sources
			return nil, err
		}
	} else {
		for _, s := range p.sources() {
			if err := s.candidates(ctx, p); err != nil {
				return nil, err
			}
		}
		p.res.Stats.Candidates = len(p.cands)
		p.stageDone(&p.res.Stats.Durations.Broad)
		if err := p.selective(ctx); err != nil {
			return nil, err
		}
		if err := p.fuse(); err != nil {
			return nil, err
		}
		if err := p.assemble(); err != nil {
			return nil, err
		}
		p.stageDone(&p.res.Stats.Durations.Score)
	}
	p.res.Stats.Durations.Total = time.Since(t0)
	return p, nil
}

// candBufs keeps the candidates' slice and position map of finished
// recalls for the next ones. Profile lesson (1M Zipf, agent filter, a
// process after Open): growing the slice of ~47 candidates of 216 bytes
// was a third of a recall's 128 KB of allocations, and until the heap
// reaches its goal every allocated page is one the process never
// touched (a page fault each).
var candBufs sync.Pool // *candBuf

type candBuf struct {
	cands []cand
	pos   map[uint64]int
}

// maxPooledCands: a recall that proposed more candidates (a dense
// recall over a large filter) leaves its buffers to the collector.
const maxPooledCands = 1024

// newPlan starts the plan of a prepared query.
func (db *DB) newPlan(q *Query, t0 time.Time) *plan {
	p := &plan{db: db, q: q, now: q.Now, lap: t0}
	if b, _ := candBufs.Get().(*candBuf); b != nil {
		p.cands, p.pos = b.cands, b.pos
	} else {
		p.pos = map[uint64]int{}
	}
	if p.now.IsZero() {
		p.now = db.opts.Clock()
	}
	p.res.Stats.Mode = q.Mode
	return p
}

// releaseCands gives the candidates' buffers back to candBufs once the
// result is built (it copies what it returns: Memory holds a copy of the
// record).
func (p *plan) releaseCands() {
	cands, pos := p.cands, p.pos
	p.cands, p.pos = nil, nil
	if cap(cands) > maxPooledCands || len(pos) > maxPooledCands {
		return
	}
	clear(cands) // the records' strings go with the result or the collector
	clear(pos)
	candBufs.Put(&candBuf{cands: cands[:0], pos: pos})
}

// stageDone sets *d to the time since the last stage ended.
func (p *plan) stageDone(d *time.Duration) {
	t := time.Now()
	*d = t.Sub(p.lap)
	p.lap = t
}
