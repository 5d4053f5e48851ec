package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cockroachdb/pebble/v2"
	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/engine/consolidate"
	"github.com/lazymem/lazymem/index"
)

// Defaults of CoreOptions.
const (
	// DefaultPromoteTopK: a record returned in the top k of three recalls
	// is queued for consolidation.
	DefaultPromoteTopK = 3
	// DefaultRecallWeight and DefaultFeedbackWeight weigh the recall and
	// feedback signals in the value score (see DB.Value).
	DefaultRecallWeight   = 0.5
	DefaultFeedbackWeight = 0.6
	// DefaultCoreBoost multiplies a core unit's score against raw records
	// (see CoreOptions.Boost).
	DefaultCoreBoost = 1.5
	// DefaultFlushInterval is how often recall counts and feedback are
	// persisted.
	DefaultFlushInterval = time.Second
	// DefaultRecallRing is how many recalls feedback can name.
	DefaultRecallRing = 1024
	// DefaultRoleMetaKey is the metadata key holding a speaker's role.
	DefaultRoleMetaKey = "speaker_role"
	// historyFactor scales a superseded unit's score, and it is always
	// kept below its successor's.
	historyFactor = 0.5
)

// CoreOptions configures value signals, the consolidation triggers and the
// core memory.
type CoreOptions struct {
	// Value holds the rule weights, the speaker roles, the threshold and
	// the context turns of package consolidate. Zero fields take its
	// defaults (threshold 0.5, two turns of context).
	Value consolidate.Options
	// Consolidator turns selected records into units. Default: the rule
	// consolidator (consolidate.NewRules with Value): offline and
	// deterministic.
	Consolidator consolidate.Consolidator
	// PromoteTopK queues a record once recalls have returned it in their
	// top k this many times. Default 3; negative disables the trigger.
	PromoteTopK int
	// RecallWeight and FeedbackWeight weigh the recall and the feedback
	// signals in the value score, in (0, 1]. Defaults 0.5 and 0.6.
	RecallWeight, FeedbackWeight float64
	// Boost multiplies the score a core unit gets from its best-scoring
	// source record, so the distilled statement ranks above the raw
	// utterance it came from. Default 1.5; 1 ranks them alike.
	Boost float64
	// RoleMetaKey is the metadata key holding a speaker's role ("host",
	// "pm", "finance"), weighed by the value rules; a record without it is
	// weighed by its Role. Default "speaker_role".
	RoleMetaKey string
	// FlushInterval is how often the recall counts and the feedback kept
	// in memory are written to the core store (unsynced). Default 1 s.
	FlushInterval time.Duration
	// RecallRing is how many recent recalls Feedback can name by
	// Result.RecallID. Default 1024.
	RecallRing int
	// Background runs the labelling pass in the background: every new
	// record is scored and labelled (TypeMetaKey becomes filterable on it)
	// and queued when it passes the threshold. Scoring costs 10-100 µs a
	// record, so it is off by default and labelling happens when a
	// consolidation runs. IdleTimeout turns it on.
	Background bool
	// IdleTimeout consolidates a session's queue once the background pass
	// has seen no new record of the session for this long (the session
	// ended without EndSession). Default 0: off.
	IdleTimeout time.Duration
}

func (o *CoreOptions) ensureDefaults() {
	o.Value.EnsureDefaults()
	if o.Consolidator == nil {
		// NewRules fails only on invalid Value options, which validate
		// then reports.
		if c, err := consolidate.NewRules(o.Value); err == nil {
			o.Consolidator = c
		}
	}
	if o.PromoteTopK == 0 {
		o.PromoteTopK = DefaultPromoteTopK
	}
	if o.RecallWeight == 0 {
		o.RecallWeight = DefaultRecallWeight
	}
	if o.FeedbackWeight == 0 {
		o.FeedbackWeight = DefaultFeedbackWeight
	}
	if o.Boost == 0 {
		o.Boost = DefaultCoreBoost
	}
	if o.RoleMetaKey == "" {
		o.RoleMetaKey = DefaultRoleMetaKey
	}
	if o.FlushInterval == 0 {
		o.FlushInterval = DefaultFlushInterval
	}
	if o.RecallRing == 0 {
		o.RecallRing = DefaultRecallRing
	}
	if o.IdleTimeout > 0 {
		o.Background = true
	}
}

func (o *CoreOptions) validate() error {
	if err := o.Value.Validate(); err != nil {
		return fmt.Errorf("%w: Core.Value: %w", ErrOptions, err)
	}
	switch {
	case o.Consolidator == nil:
		return fmt.Errorf("%w: Core.Consolidator is nil", ErrOptions)
	case !(o.RecallWeight > 0 && o.RecallWeight <= 1):
		return fmt.Errorf("%w: Core.RecallWeight = %v, want (0, 1]", ErrOptions, o.RecallWeight)
	case !(o.FeedbackWeight > 0 && o.FeedbackWeight <= 1):
		return fmt.Errorf("%w: Core.FeedbackWeight = %v, want (0, 1]", ErrOptions, o.FeedbackWeight)
	case !(o.Boost > 0 && o.Boost <= 100):
		return fmt.Errorf("%w: Core.Boost = %v, want (0, 100]", ErrOptions, o.Boost)
	case o.FlushInterval < 0:
		return fmt.Errorf("%w: Core.FlushInterval = %v, want > 0", ErrOptions, o.FlushInterval)
	case o.RecallRing < 1:
		return fmt.Errorf("%w: Core.RecallRing = %d, want >= 1", ErrOptions, o.RecallRing)
	case o.IdleTimeout < 0:
		return fmt.Errorf("%w: Core.IdleTimeout = %v, want >= 0", ErrOptions, o.IdleTimeout)
	}
	return nil
}

// ConsolidateOptions narrows an explicit consolidation.
type ConsolidateOptions struct {
	// Session restricts it to one session of the agent ("": all).
	Session string
	// IDs are records of the agent to consolidate whatever their value,
	// besides the queued ones.
	IDs []uint64
}

// ConsolidateReport says what a consolidation did.
type ConsolidateReport struct {
	// Labelled is how many records were scored and labelled first.
	Labelled int
	// Selected is how many records went to the consolidator.
	Selected int
	// Units are the units stored, with their ids.
	Units []consolidate.Unit
	// Superseded are the ids of the units superseded by this
	// consolidation: earlier ones, and new ones a later new one replaced.
	Superseded []uint64
	// Duration is the wall time of the whole consolidation.
	Duration time.Duration
}

// Consolidate runs the explicit trigger for agent: it labels the agent's
// records not labelled yet (queueing those that pass the threshold), then
// turns every queued record, and opts.IDs, into core units: each with
// CoreOptions.Value.ContextTurns turns of its session either side, through
// the consolidator; new units supersede earlier live ones on the same
// topic, and are embedded and stored in the core store.
func (db *DB) Consolidate(ctx context.Context, agent string, opts ConsolidateOptions) (*ConsolidateReport, error) {
	if agent == "" {
		return nil, fieldErr("consolidate.agent", ErrMissing, "")
	}
	if err := checkString("consolidate.agent", agent, db.opts.MaxFieldBytes); err != nil {
		return nil, err
	}
	if err := checkString("consolidate.session", opts.Session, db.opts.MaxFieldBytes); err != nil {
		return nil, err
	}
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, ErrClosed
	}
	return db.consolidate(ctx, agent, opts.Session, opts.IDs)
}

// EndSession runs the end-of-session trigger: the session's queued records
// (after labelling the ones not labelled yet) become units.
func (db *DB) EndSession(ctx context.Context, agent, session string) (*ConsolidateReport, error) {
	if session == "" {
		return nil, fieldErr("end_session.session", ErrMissing, "")
	}
	return db.Consolidate(ctx, agent, ConsolidateOptions{Session: session})
}

// consolidate is one consolidation. Consolidations run one at a time
// (cs.run), so unit ids and supersession links stay consistent. The caller
// holds db.mu shared.
func (db *DB) consolidate(ctx context.Context, agent, session string, ids []uint64) (*ConsolidateReport, error) {
	t0 := time.Now()
	cs := db.core
	cs.run.Lock()
	defer cs.run.Unlock()
	rep := &ConsolidateReport{}
	if err := db.flushValues(); err != nil {
		return nil, err
	}
	f := index.Filter{Agents: []string{agent}}
	if session != "" {
		f.Sessions = []string{session}
	}
	scope, err := db.idx.Filter(&f)
	if err != nil {
		return nil, fmt.Errorf("lazymem: engine: consolidate: %w", err)
	}
	if rep.Labelled, err = db.label(scope); err != nil {
		return nil, err
	}
	cs.mu.Lock()
	sel := roaring.And(scope, cs.queued)
	for i, id := range ids {
		if id > math.MaxUint32 || !scope.Contains(uint32(id)) {
			cs.mu.Unlock()
			return nil, fieldErr(fmt.Sprintf("consolidate.ids[%d]", i), ErrUnknown, fmt.Sprintf("no record %d of agent %q in scope", id, agent))
		}
		sel.Add(uint32(id))
	}
	sel.AndNot(cs.consolidated)
	cs.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep.Selected = int(sel.GetCardinality())
	if rep.Selected == 0 {
		rep.Duration = time.Since(t0)
		return rep, nil
	}
	in, err := db.buildInput(agent, sel)
	if err != nil {
		return nil, err
	}
	units, err := db.opts.Core.Consolidator.Consolidate(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("lazymem: engine: consolidate: %w", err)
	}
	vecs, err := db.embedUnits(ctx, units)
	if err != nil {
		return nil, err
	}
	if err := db.storeUnits(agent, units, vecs, sel, rep); err != nil {
		return nil, err
	}
	rep.Duration = time.Since(t0)
	return rep, nil
}

// buildInput reads the selected records of agent and, for each, the turns
// of its session around it.
func (db *DB) buildInput(agent string, sel *roaring.Bitmap) (consolidate.Input, error) {
	in := consolidate.Input{Agent: agent}
	selIDs := make([]uint64, 0, sel.GetCardinality())
	for _, x := range sel.ToArray() {
		selIDs = append(selIDs, uint64(x))
	}
	recs, err := db.readRecords(selIDs)
	if err != nil {
		return in, err
	}
	n := max(db.opts.Core.Value.ContextTurns, 0)
	// Sessions in order of first selected record.
	bySession := map[string][]uint32{}
	for _, id := range selIDs {
		if r, ok := recs[id]; ok {
			s := r.Session
			if _, seen := bySession[s]; !seen {
				sf := index.Filter{Agents: []string{agent}, Sessions: []string{s}}
				if s == "" {
					sf.Sessions = nil
				}
				bm, err := db.idx.Filter(&sf)
				if err != nil {
					return in, fmt.Errorf("lazymem: engine: consolidate: %w", err)
				}
				bySession[s] = bm.ToArray()
			}
		}
	}
	ctxIDs := map[uint64][2][]uint64{}
	var need []uint64
	for _, id := range selIDs {
		r, ok := recs[id]
		if !ok {
			continue
		}
		turns := bySession[r.Session]
		i, _ := slices.BinarySearch(turns, uint32(id))
		var b, a []uint64
		for j := max(0, i-n); j < i; j++ {
			b = append(b, uint64(turns[j]))
		}
		for j := i + 1; j < min(len(turns), i+1+n); j++ {
			a = append(a, uint64(turns[j]))
		}
		ctxIDs[id] = [2][]uint64{b, a}
		need = append(need, b...)
		need = append(need, a...)
	}
	slices.Sort(need)
	need = slices.Compact(need)
	ctxRecs, err := db.readRecords(need)
	if err != nil {
		return in, err
	}
	// Relative dates ("by Friday", "下周一下午两点前") are resolved in the
	// zone of the engine's clock, as a recall's time expressions are: the
	// log keeps instants, and a record read back is in UTC.
	loc := db.opts.Clock().Location()
	turn := func(r Record) consolidate.Turn {
		return consolidate.Turn{ID: r.ID, Time: r.Time.In(loc), Speaker: r.Role, Role: db.speakerRole(&r), Text: r.Text}
	}
	for _, id := range selIDs {
		r, ok := recs[id]
		if !ok {
			continue // deleted meanwhile
		}
		s := consolidate.Selected{Turn: turn(r)}
		if s.Role == s.Speaker {
			s.Role = ""
		}
		for k, dst := range []*[]consolidate.Turn{&s.Before, &s.After} {
			for _, cid := range ctxIDs[id][k] {
				if c, ok := ctxRecs[cid]; ok {
					*dst = append(*dst, turn(c))
				}
			}
		}
		in.Records = append(in.Records, s)
	}
	return in, nil
}

// readRecords reads ids (sorted) from the log; deleted ones are left out.
func (db *DB) readRecords(ids []uint64) (map[uint64]Record, error) {
	out := make(map[uint64]Record, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var c codec.Record
	err := db.log.GetMany(ids, func(id uint64, payload []byte) error {
		if _, err := codec.DecodeRecord(payload, &c); err != nil {
			return fmt.Errorf("%w: id %d: %w", ErrCorrupt, id, err)
		}
		out[id] = fromCodec(id, &c)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("lazymem: engine: read records: %w", err)
	}
	return out, nil
}

// embedUnits embeds the text of each unit (nil vectors without an
// embedder). The core memory is small, so it is embedded eagerly. The
// call bypasses the embedding cache: a unit's vector lives in the core
// store only, so forgetting the unit removes every copy of it.
func (db *DB) embedUnits(ctx context.Context, units []consolidate.Unit) ([][]float32, error) {
	vecs := make([][]float32, len(units))
	emb := db.opts.Embedder
	if emb == nil || len(units) == 0 {
		return vecs, nil
	}
	texts := make([]string, len(units))
	for i := range units {
		texts[i] = unitText(&units[i])
	}
	ctx, cancel := context.WithTimeout(ctx, db.opts.EmbedTimeout)
	defer cancel()
	got, err := emb.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("%w: core units: %w", ErrEmbed, err)
	}
	if len(got) != len(texts) {
		return nil, fmt.Errorf("%w: core units: %d vectors for %d texts", ErrEmbed, len(got), len(texts))
	}
	for i, v := range got {
		if len(v) != emb.Dim() {
			return nil, fmt.Errorf("%w: core units: vector of length %d, want %d", ErrEmbed, len(v), emb.Dim())
		}
		vecs[i] = unitLength(v)
	}
	return vecs, nil
}

// unitLength returns v scaled to unit length (v itself when it is zero),
// so its dot product with the unit-length query is a cosine.
func unitLength(v []float32) []float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		return v
	}
	inv := float32(1 / math.Sqrt(ss))
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}

// storeUnits assigns ids to the new units, links them with the agent's
// live units, and writes them (with the rewritten superseded units, the
// vectors and the bitmaps) in one synced batch.
func (db *DB) storeUnits(agent string, units []consolidate.Unit, vecs [][]float32, sel *roaring.Bitmap, rep *ConsolidateReport) error {
	cs := db.core
	cs.mu.Lock()
	defer cs.mu.Unlock()
	next := cs.nextUnit
	for i := range units {
		units[i].ID = next
		units[i].Agent = agent
		next++
	}
	var live []consolidate.Unit
	for _, id := range cs.byAgent[agent] {
		if u := &cs.units[id].u; u.Live() {
			live = append(live, *u)
		}
	}
	superseded, err := consolidate.Link(live, units)
	if err != nil {
		return fmt.Errorf("lazymem: engine: consolidate: link: %w", err)
	}
	b := cs.newBatch()
	defer cs.closeBatch(b)
	var buf []byte
	put := func(u *consolidate.Unit) error {
		buf = consolidate.AppendUnit(buf[:0], u)
		return b.Set(coreKey(coreUnit, u.ID), buf, nil)
	}
	for i := range units {
		if err := put(&units[i]); err != nil {
			return err
		}
		if vecs[i] != nil {
			if err := b.Set(coreKey(coreVector, units[i].ID), appendCoreVector(nil, db.opts.Embedder.Name(), vecs[i]), nil); err != nil {
				return err
			}
		}
	}
	rewritten := map[uint64]consolidate.Unit{}
	for i := range live {
		if slices.Contains(superseded, live[i].ID) {
			rewritten[live[i].ID] = live[i]
			if err := put(&live[i]); err != nil {
				return err
			}
		}
	}
	if err := b.Set(metaKey("next_unit"), binary.AppendUvarint(nil, next), nil); err != nil {
		return err
	}
	cs.consolidated.Or(sel)
	cs.queued.AndNot(sel)
	cs.bitmapsDirty = true
	if err := cs.putBitmaps(b); err != nil {
		return err
	}
	if err := cs.commit(b, pebble.Sync); err != nil {
		return fmt.Errorf("lazymem: engine: core store: store units: %w", err)
	}
	cs.nextUnit = next
	for id, u := range rewritten {
		cs.units[id].u = u
	}
	for i := range units {
		cs.units[units[i].ID] = &coreUnitEntry{u: units[i], vec: vecs[i]}
	}
	cs.reindex()
	rep.Units = units
	rep.Superseded = superseded
	for i := range units {
		if !units[i].Live() {
			rep.Superseded = append(rep.Superseded, units[i].ID)
		}
	}
	return nil
}

// Core returns the units of agent in id order: the live ones, and the
// superseded ones too when history is set.
func (db *DB) Core(ctx context.Context, agent string, history bool) ([]consolidate.Unit, error) {
	if agent == "" {
		return nil, fieldErr("core.agent", ErrMissing, "")
	}
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cs := db.core
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var out []consolidate.Unit
	for _, id := range cs.byAgent[agent] {
		if u := cs.units[id].u; history || u.Live() {
			out = append(out, u)
		}
	}
	return out, nil
}
