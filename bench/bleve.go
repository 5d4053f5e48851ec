package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	bleveindex "github.com/blevesearch/bleve_index_api"
)

// Bleve field names.
const (
	bleveText    = "text"
	bleveAgent   = "agent"
	bleveSession = "session"
	bleveRole    = "role"
	bleveTime    = "time"
	bleveMeta    = "meta" // sub-document: meta.<key>, keyword analysed
)

// BleveOptions configures the Bleve peer. The zero value is the
// configuration the comparison uses.
type BleveOptions struct {
	// BatchSize is the number of records per bleve.Batch. Default 1000.
	BatchSize int

	// TFIDF selects Bleve's classic tf-idf scoring instead of its BM25
	// model. Default false (BM25), the model lazymem implements.
	TFIDF bool

	// SettleTimeout bounds the wait for Bleve's persister and merger to go
	// idle after ingest. Default 10 minutes.
	SettleTimeout time.Duration

	// Conjunction evaluates the agent and time restrictions as zero-boost
	// clauses of a conjunction with the text query, which Bleve walks by
	// leapfrogging (Advance) over the most selective clause, instead of as
	// the non-scoring filter clause of a boolean query, which Bleve checks
	// on every document the text query matches. Scores are the same either
	// way (a zero boost zeroes a clause's weight and its share of the query
	// norm); only the evaluation differs. Default false (filter clause).
	Conjunction bool

	// StoreText keeps the text as a stored field and with term vectors, as
	// Bleve's default text mapping does. Default false: the comparison
	// returns ids only, and lazymem keeps text in its log, not its index.
	StoreText bool
}

// EnsureDefaults fills zero fields with their defaults.
func (o *BleveOptions) EnsureDefaults() {
	if o.BatchSize <= 0 {
		o.BatchSize = 1000
	}
	if o.SettleTimeout <= 0 {
		o.SettleTimeout = 10 * time.Minute
	}
}

// Validate reports a configuration that cannot work.
func (o *BleveOptions) Validate() error {
	if o.BatchSize <= 0 {
		return fmt.Errorf("%w: bleve BatchSize %d must be positive", ErrOptions, o.BatchSize)
	}
	return nil
}

// BleveMapping is the index mapping of the comparison: text analysed by
// Bleve's "en" analyzer (unicode tokenizer, possessive filter, lowercase,
// English stopwords, Snowball English stemmer: the same family of analysis
// as lazymem's tokenizer); agent, session and role as keyword fields; time
// as a datetime field; every metadata key as a keyword field meta.<key>.
// Nothing is stored and no doc values are kept: the query needs neither, and
// a lighter index is the fairer peer.
func BleveMapping(o BleveOptions) *mapping.IndexMappingImpl {
	kw := func() *mapping.FieldMapping {
		f := mapping.NewKeywordFieldMapping()
		f.Store, f.IncludeTermVectors, f.IncludeInAll, f.DocValues = false, false, false, false
		return f
	}
	text := mapping.NewTextFieldMapping()
	text.Analyzer = en.AnalyzerName
	text.Store, text.IncludeTermVectors = o.StoreText, o.StoreText
	text.IncludeInAll, text.DocValues = false, false

	tm := mapping.NewDateTimeFieldMapping()
	tm.Store, tm.IncludeInAll, tm.DocValues = false, false, false

	meta := mapping.NewDocumentMapping() // dynamic: any key the generator sends
	meta.DefaultAnalyzer = keyword.Name

	doc := mapping.NewDocumentMapping()
	doc.Dynamic = false
	doc.AddFieldMappingsAt(bleveText, text)
	doc.AddFieldMappingsAt(bleveAgent, kw())
	doc.AddFieldMappingsAt(bleveSession, kw())
	doc.AddFieldMappingsAt(bleveRole, kw())
	doc.AddFieldMappingsAt(bleveTime, tm)
	doc.AddSubDocumentMapping(bleveMeta, meta)

	im := mapping.NewIndexMapping()
	im.DefaultMapping = doc
	im.DefaultAnalyzer = keyword.Name
	im.DefaultField = bleveText
	im.StoreDynamic = false
	im.DocValuesDynamic = false
	im.IndexDynamic = true
	if !o.TFIDF {
		im.ScoringModel = bleveindex.BM25Scoring
	}
	return im
}

// Bleve is the Bleve v2 (scorch) peer of the comparison.
type Bleve struct {
	idx  bleve.Index
	path string
	opts BleveOptions
}

// IngestStats reports one bulk load.
type IngestStats struct {
	Engine  string
	Records int
	Bytes   int64         // text bytes
	Apply   time.Duration // all batches accepted (searchable in memory)
	Durable time.Duration // Apply + persisted/flushed to disk and background work settled
	// Settle is the lazymem index's settle after Durable (index.Settle:
	// its newest segments merged into one, as the index does once left
	// alone for Options.SettleAfter); the searches run on the settled
	// index. 0 for the other engines.
	Settle time.Duration `json:",omitempty"`
}

// RecordsPerSec is the durable ingest rate.
func (s IngestStats) RecordsPerSec() float64 {
	if s.Durable <= 0 {
		return 0
	}
	return float64(s.Records) / s.Durable.Seconds()
}

func (s IngestStats) String() string {
	return fmt.Sprintf("%s: %d records (%.1f MB text) applied in %v, durable in %v: %.0f records/s",
		s.Engine, s.Records, float64(s.Bytes)/1e6, s.Apply.Round(time.Millisecond),
		s.Durable.Round(time.Millisecond), s.RecordsPerSec())
}

// BuildBleve creates a new scorch index at path (which must not exist) and
// loads docs into it in batches of opts.BatchSize. Ingest time runs until
// every batch is applied (Apply) and until the persister and merger have
// gone idle (Durable), so both engines are timed to the same point: all
// records on disk.
func BuildBleve(path string, docs []Doc, opts BleveOptions) (*Bleve, IngestStats, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, IngestStats{}, err
	}
	st := IngestStats{Engine: "bleve", Records: len(docs)}
	t0 := time.Now()
	idx, err := bleve.NewUsing(path, BleveMapping(opts), scorch.Name, scorch.Name, nil)
	if err != nil {
		return nil, st, fmt.Errorf("lazymem: bench: bleve new %s: %w", path, err)
	}
	b := &Bleve{idx: idx, path: path, opts: opts}
	batch := idx.NewBatch()
	var m map[string]any
	for i := range docs {
		d := &docs[i]
		st.Bytes += int64(len(d.Text))
		m = bleveDoc(m, d)
		if err := batch.Index(strconv.FormatUint(d.ID, 10), m); err != nil {
			_ = idx.Close()
			return nil, st, fmt.Errorf("lazymem: bench: bleve index doc %d: %w", d.ID, err)
		}
		if batch.Size() >= opts.BatchSize {
			if err := idx.Batch(batch); err != nil {
				_ = idx.Close()
				return nil, st, fmt.Errorf("lazymem: bench: bleve batch: %w", err)
			}
			batch.Reset()
		}
	}
	if batch.Size() > 0 {
		if err := idx.Batch(batch); err != nil {
			_ = idx.Close()
			return nil, st, fmt.Errorf("lazymem: bench: bleve batch: %w", err)
		}
	}
	st.Apply = time.Since(t0)
	if err := b.Settle(); err != nil {
		_ = idx.Close()
		return nil, st, err
	}
	st.Durable = time.Since(t0)
	return b, st, nil
}

// OpenBleve opens an index BuildBleve wrote and waits for it to settle.
func OpenBleve(path string, opts BleveOptions) (*Bleve, error) {
	opts.EnsureDefaults()
	idx, err := bleve.Open(path)
	if err != nil {
		return nil, fmt.Errorf("lazymem: bench: bleve open %s: %w", path, err)
	}
	b := &Bleve{idx: idx, path: path, opts: opts}
	if err := b.Settle(); err != nil {
		_ = idx.Close()
		return nil, err
	}
	return b, nil
}

// bleveDoc fills m (reused across calls: Batch.Index maps the value before
// it returns) with d's fields.
func bleveDoc(m map[string]any, d *Doc) map[string]any {
	if m == nil {
		m = make(map[string]any, 6)
	}
	clear(m)
	m[bleveText] = d.Text
	m[bleveAgent] = d.Agent
	m[bleveSession] = d.Session
	m[bleveRole] = d.Role
	m[bleveTime] = time.Unix(0, d.Time).UTC()
	if len(d.Meta) > 0 {
		meta := make(map[string]any, len(d.Meta))
		for _, f := range d.Meta {
			meta[f.Key] = f.Values
		}
		m[bleveMeta] = meta
	}
	return m
}

// settleQuiet is how long scorch's counters must stay still before Settle
// believes the background work is over.
const settleQuiet = 500 * time.Millisecond

// Settle waits until scorch's persister and merger have nothing left to do,
// so that queries are not timed against a moving index and ingest is timed
// to the point where every record is on disk. Scorch's own
// index_bgthreads_active flag is not enough: after a reopen the persister
// has nothing to persist and never advances LastPersistedEpoch, so the flag
// can stay true forever on an idle index. Settle therefore also accepts:
// no in-memory segment at the root (all persisted), no file merge running,
// and the root epoch, persister and merge-planner counters unchanged for
// settleQuiet.
func (b *Bleve) Settle() error {
	if b.idx == nil {
		return ErrClosed
	}
	adv, err := b.idx.Advanced()
	if err != nil {
		return fmt.Errorf("lazymem: bench: bleve advanced: %w", err)
	}
	sc, ok := adv.(*scorch.Scorch)
	if !ok {
		return nil // not scorch: nothing runs in the background
	}
	u := func(m map[string]any, k string) uint64 { v, _ := m[k].(uint64); return v }
	var last [4]uint64
	var since time.Time
	deadline := time.Now().Add(b.opts.SettleTimeout)
	for {
		m := sc.StatsMap()
		if active, ok := m["index_bgthreads_active"].(bool); ok && !active {
			return nil
		}
		now := time.Now()
		idle := u(m, "TotMemorySegmentsAtRoot") == 0 &&
			u(m, "TotFileMergeZapBeg") == u(m, "TotFileMergeZapEnd") &&
			u(m, "TotFileMergePlanTasks") == u(m, "TotFileMergePlanTasksDone")+u(m, "TotFileMergePlanTasksErr")
		cur := [4]uint64{u(m, "CurRootEpoch"), u(m, "TotPersistLoopBeg"), u(m, "TotFileMergePlan"), u(m, "TotFileMergeLoopBeg")}
		switch {
		case !idle || cur != last:
			last, since = cur, now
		case now.Sub(since) >= settleQuiet:
			return nil
		}
		if now.After(deadline) {
			return fmt.Errorf("%w after %v", ErrNotSteady, b.opts.SettleTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Name implements Engine.
func (b *Bleve) Name() string { return b.name(b.opts.Conjunction) }

// name is the engine name of a formulation: "bleve" with the filter
// clause, "bleve-conj" with the conjunction.
func (b *Bleve) name(conj bool) string {
	if conj {
		return "bleve-conj"
	}
	return "bleve"
}

// Formulation returns an Engine over the same index that builds its queries
// with the filter clause (conj false) or the conjunction (conj true), so
// both formulations can be timed side by side on one index.
func (b *Bleve) Formulation(conj bool) Engine { return bleveView{b, conj} }

type bleveView struct {
	b    *Bleve
	conj bool
}

func (v bleveView) Name() string { return v.b.name(v.conj) }

func (v bleveView) Search(q *Query, k int, dst []Hit) ([]Hit, error) {
	return v.b.search(q, k, v.conj, dst)
}

// Path is the index directory.
func (b *Bleve) Path() string { return b.path }

// BleveQuery builds the Bleve query for q: a match query on the text (OR of
// the analysed terms, scored) restricted to the agent term, the session term
// and the [Since, Until) datetime range. With conjunction false the restrictions are
// the non-scoring filter clause of a boolean query; with it true they are
// zero-boost clauses of a conjunction. Either way the ranking is pure text
// relevance, as with lazymem's filter bitmap.
func BleveQuery(q *Query, conjunction bool) query.Query {
	mq := bleve.NewMatchQuery(q.Text)
	mq.SetField(bleveText)
	var filters []query.Query
	if q.Agent != "" {
		tq := bleve.NewTermQuery(q.Agent)
		tq.SetField(bleveAgent)
		if conjunction {
			tq.SetBoost(0)
		}
		filters = append(filters, tq)
	}
	if q.Session != "" {
		tq := bleve.NewTermQuery(q.Session)
		tq.SetField(bleveSession)
		if conjunction {
			tq.SetBoost(0)
		}
		filters = append(filters, tq)
	}
	if q.Since != 0 || q.Until != 0 {
		var start, end time.Time
		if q.Since != 0 {
			start = time.Unix(0, q.Since).UTC()
		}
		if q.Until != 0 {
			end = time.Unix(0, q.Until).UTC()
		}
		incl, excl := true, false
		rq := bleve.NewDateRangeInclusiveQuery(start, end, &incl, &excl)
		rq.SetField(bleveTime)
		if conjunction {
			rq.SetBoost(0)
		}
		filters = append(filters, rq)
	}
	switch {
	case len(filters) == 0:
		return mq
	case conjunction:
		return bleve.NewConjunctionQuery(append([]query.Query{mq}, filters...)...)
	}
	bq := bleve.NewBooleanQuery()
	bq.AddMust(mq)
	if len(filters) == 1 {
		bq.AddFilter(filters[0])
	} else {
		bq.AddFilter(bleve.NewConjunctionQuery(filters...))
	}
	return bq
}

// Search implements Engine: top k by Bleve's score (ties as Bleve orders
// them), ids only, in the formulation BleveOptions.Conjunction selects.
func (b *Bleve) Search(q *Query, k int, dst []Hit) ([]Hit, error) {
	return b.search(q, k, b.opts.Conjunction, dst)
}

func (b *Bleve) search(q *Query, k int, conj bool, dst []Hit) ([]Hit, error) {
	if b.idx == nil {
		return dst, ErrClosed
	}
	if k <= 0 {
		return dst, ErrBadK
	}
	req := bleve.NewSearchRequestOptions(BleveQuery(q, conj), k, 0, false)
	res, err := b.idx.SearchInContext(context.Background(), req)
	if err != nil {
		return dst, fmt.Errorf("lazymem: bench: bleve search: %w", err)
	}
	for _, h := range res.Hits {
		id, err := strconv.ParseUint(h.ID, 10, 64)
		if err != nil {
			return dst, fmt.Errorf("%w: %q", ErrBadID, h.ID)
		}
		dst = append(dst, Hit{ID: id, Score: h.Score})
	}
	return dst, nil
}

// DiskBytes is the size of the index directory tree as scorch reports it.
func (b *Bleve) DiskBytes() uint64 {
	if b.idx == nil {
		return 0
	}
	v, _ := b.idx.StatsMap()["index"].(map[string]any)
	n, _ := v["CurOnDiskBytes"].(uint64)
	return n
}

// Segments is the number of file segments at scorch's root.
func (b *Bleve) Segments() uint64 {
	if b.idx == nil {
		return 0
	}
	adv, err := b.idx.Advanced()
	if err != nil {
		return 0
	}
	sc, ok := adv.(*scorch.Scorch)
	if !ok {
		return 0
	}
	n, _ := sc.StatsMap()["TotFileSegmentsAtRoot"].(uint64)
	return n
}

// Close closes the index; the directory stays.
func (b *Bleve) Close() error {
	if b.idx == nil {
		return nil
	}
	err := b.idx.Close()
	b.idx = nil
	if err != nil {
		return fmt.Errorf("lazymem: bench: bleve close: %w", err)
	}
	return nil
}
