package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cockroachdb/pebble/v2"
	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/engine/consolidate"
)

// TypeMetaKey is the metadata key under which a record's labels can be
// filtered on: Query.Where{TypeMetaKey: {"decision"}} keeps the records
// labelled as decisions. Labels are not written with the record (scoring
// costs 10-100 µs a record, too slow for the append path): the key matches
// the records labelled so far, by a consolidation or the background pass
// (CoreOptions.Background).
const TypeMetaKey = "lazymem.type"

// valueEntry is the value signals of one record that only the engine sees.
// On disk ('v' id) it is a version byte (1, NEVER changes) then four
// uvarints: cands, topk, pos, neg.
type valueEntry struct {
	cands uint64 // recalls that made it a candidate
	topk  uint64 // recalls that returned it in their top k
	pos   uint64 // positive feedback
	neg   uint64 // negative feedback
}

const valueVersion = 1

func (v *valueEntry) add(d *valueEntry) {
	v.cands += d.cands
	v.topk += d.topk
	v.pos += d.pos
	v.neg += d.neg
}

func appendValueEntry(dst []byte, v *valueEntry) []byte {
	dst = append(dst, valueVersion)
	for _, n := range []uint64{v.cands, v.topk, v.pos, v.neg} {
		dst = binary.AppendUvarint(dst, n)
	}
	return dst
}

func decodeValueEntry(b []byte) (valueEntry, error) {
	var v valueEntry
	if len(b) == 0 || b[0] != valueVersion {
		return v, fmt.Errorf("%w: value entry version", ErrCorrupt)
	}
	d := codec.NewDecoder(b[1:])
	for _, p := range []*uint64{&v.cands, &v.topk, &v.pos, &v.neg} {
		*p = d.Uvarint()
	}
	if err := d.Err(); err != nil {
		return v, fmt.Errorf("%w: value entry: %w", ErrCorrupt, err)
	}
	if d.Len() != 0 {
		return v, fmt.Errorf("%w: value entry: %d bytes left over", ErrCorrupt, d.Len())
	}
	return v, nil
}

// Value is what the engine knows of a record's worth (DB.Value).
type Value struct {
	ID uint64
	// Labelled: the rules have scored the record (at a consolidation or in
	// the background pass); Types and Rules are meaningful only then.
	Labelled bool
	Types    []consolidate.Type
	// Rules is the rule score of its text and speaker role
	// (consolidate.Options.Value; 0 until labelled).
	Rules float64
	// Candidates and TopK count the recalls that made it a candidate and
	// that returned it; Positive and Negative count feedback.
	Candidates, TopK, Positive, Negative uint64
	// Queued: a trigger selected it for the next consolidation;
	// Consolidated: units were built from it already.
	Queued, Consolidated bool
	// Score is the value score (see valueScore).
	Score float64
}

// valueScore is the one value score of a record, in [0, 1]: a noisy-OR of
// its rule score, its recall signal and its positive feedback, damped by
// its negative feedback,
//
//	score = (1 - (1-rules)(1 - RecallWeight·min(1, topk/PromoteTopK))(1 - FeedbackWeight·min(1, pos)))
//	        · (1 - FeedbackWeight)^neg
//
// so a record returned PromoteTopK times, like a decision, passes the
// default threshold alone, and each negative vote takes FeedbackWeight of
// it away.
func valueScore(o *CoreOptions, rules float64, v *valueEntry) float64 {
	recall := 0.0
	if o.PromoteTopK > 0 {
		recall = min(1, float64(v.topk)/float64(o.PromoteTopK))
	}
	s := 1 - (1-rules)*(1-o.RecallWeight*recall)*(1-o.FeedbackWeight*min(1, float64(v.pos)))
	return s * math.Pow(1-o.FeedbackWeight, float64(v.neg))
}

// noteRecall counts what a finished recall touched: every candidate, and
// the records it returned. It only adds to an in-memory table; the
// background flush persists it.
func (db *DB) noteRecall(p *plan) {
	cs := db.core
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for i := range p.cands {
		if p.cands[i].id != 0 {
			cs.delta(p.cands[i].id).cands++
		}
	}
	for i := range p.res.Memories {
		if id := p.res.Memories[i].ID; id != 0 {
			cs.delta(id).topk++
		}
	}
}

// delta returns the unflushed value entry of id. Caller holds mu.
func (cs *coreStore) delta(id uint64) *valueEntry {
	v := cs.values[id]
	if v == nil {
		v = new(valueEntry)
		cs.values[id] = v
	}
	return v
}

// flushValues persists the value deltas and the bitmaps, and applies the
// recall and feedback triggers: a record returned PromoteTopK times, or
// with more positive than negative feedback, is queued; one with more
// negative feedback is unqueued. Nothing is synced: a crash loses at most
// the counts of the last interval.
//
// The persisted entries are read without cs.mu (one Pebble read a record,
// tens of thousands after a second of busy recalls: hundreds of
// milliseconds, which every recall's noteRecall and core merge waited for
// when they were read under it: the warm recall benchmark's p99 outlier,
// docs/benchmarks/cold.md); the deltas being flushed stay visible in
// cs.flushing meanwhile, and a record forgotten meanwhile (removed from
// cs.flushing by coreForget) is not written back.
func (db *DB) flushValues() error {
	cs := db.core
	cs.flushMu.Lock()
	defer cs.flushMu.Unlock()
	cs.mu.Lock()
	if len(cs.values) == 0 && !cs.bitmapsDirty {
		cs.mu.Unlock()
		return nil
	}
	pending := cs.values
	cs.values, cs.flushing = map[uint64]*valueEntry{}, pending
	cs.mu.Unlock()
	done := false
	defer func() {
		if !done { // failed: the deltas go back to be flushed next time
			cs.mu.Lock()
			for id, d := range cs.flushing {
				cs.delta(id).add(d)
			}
			cs.flushing = nil
			cs.mu.Unlock()
		}
	}()

	ids := make([]uint64, 0, len(pending))
	for id := range pending {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	merged := make([]valueEntry, len(ids))
	for j, id := range ids {
		v, err := cs.readValue(id)
		if err != nil {
			return err
		}
		v.add(pending[id])
		merged[j] = v
	}
	// The batch is built without mu too; if a record was forgotten
	// meanwhile it is built again without it, under mu.
	b, err := cs.valueBatch(ids, merged, nil)
	if err != nil {
		return err
	}
	defer func() {
		if b != nil {
			cs.closeBatch(b)
		}
	}()
	if cs.afterFlushRead != nil {
		cs.afterFlushRead()
	}

	cs.mu.Lock()
	defer cs.mu.Unlock() // before the deferred restore above
	if len(cs.flushing) != len(ids) {
		cs.closeBatch(b)
		if b, err = cs.valueBatch(ids, merged, cs.flushing); err != nil {
			return err
		}
	}
	for j, id := range ids {
		if _, ok := cs.flushing[id]; !ok { // forgotten meanwhile
			continue
		}
		v := &merged[j]
		if id <= math.MaxUint32 && !cs.consolidated.Contains(uint32(id)) {
			promote := db.opts.Core.PromoteTopK > 0 && v.topk >= uint64(db.opts.Core.PromoteTopK)
			switch {
			case v.neg > v.pos:
				cs.queued.Remove(uint32(id))
			case promote || v.pos > v.neg:
				cs.queued.Add(uint32(id))
			}
			cs.bitmapsDirty = true
		}
	}
	if err := cs.putBitmaps(b); err != nil {
		return err
	}
	if err := cs.commit(b, pebble.NoSync); err != nil {
		return fmt.Errorf("lazymem: engine: core store: flush values: %w", err)
	}
	cs.flushing = nil
	done = true
	return nil
}

// valueBatch returns a batch setting the entries merged of ids; with
// only set, those of the ids in it.
func (cs *coreStore) valueBatch(ids []uint64, merged []valueEntry, only map[uint64]*valueEntry) (*pebble.Batch, error) {
	b := cs.newBatch()
	var buf []byte
	for j, id := range ids {
		if only != nil {
			if _, ok := only[id]; !ok {
				continue
			}
		}
		buf = appendValueEntry(buf[:0], &merged[j])
		if err := b.Set(coreKey(coreValue, id), buf, nil); err != nil {
			cs.closeBatch(b)
			return nil, err
		}
	}
	return b, nil
}

// readValue reads the persisted value entry of id (zero if none). It
// needs no lock: flushValues reads without mu, Value under it.
func (cs *coreStore) readValue(id uint64) (valueEntry, error) {
	b, closer, err := cs.pdb.Get(coreKey(coreValue, id))
	if errors.Is(err, pebble.ErrNotFound) {
		return valueEntry{}, nil
	}
	if err != nil {
		return valueEntry{}, fmt.Errorf("lazymem: engine: core store: %w", err)
	}
	defer closer.Close()
	return decodeValueEntry(b)
}

// Value returns what the engine knows of record id's worth: its labels,
// its rule score, its recall and feedback counts, and the value score
// that combines them.
func (db *DB) Value(ctx context.Context, id uint64) (Value, error) {
	rec, err := db.Get(ctx, id) // checks closed and existence
	if err != nil {
		return Value{}, err
	}
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return Value{}, ErrClosed
	}
	cs := db.core
	cs.mu.Lock()
	defer cs.mu.Unlock()
	v, err := cs.readValue(id)
	if err != nil {
		return Value{}, err
	}
	if d := cs.values[id]; d != nil {
		v.add(d)
	}
	if d := cs.flushing[id]; d != nil {
		v.add(d)
	}
	out := Value{ID: id, Candidates: v.cands, TopK: v.topk, Positive: v.pos, Negative: v.neg}
	if id <= math.MaxUint32 {
		x := uint32(id)
		out.Labelled, out.Queued, out.Consolidated = cs.labelled.Contains(x), cs.queued.Contains(x), cs.consolidated.Contains(x)
		for _, t := range consolidate.Types {
			if cs.types[t].Contains(x) {
				out.Types = append(out.Types, t)
			}
		}
	}
	if out.Labelled {
		out.Rules = db.ruleValue(&rec)
	}
	out.Score = valueScore(&db.opts.Core, out.Rules, &v)
	return out, nil
}

// speakerRole is the role the value rules weigh: the record's
// CoreOptions.RoleMetaKey metadata ("host", "pm") when it has one, else
// its Role.
func (db *DB) speakerRole(r *Record) string {
	if vs := r.Meta[db.opts.Core.RoleMetaKey]; len(vs) > 0 {
		return vs[0]
	}
	return r.Role
}

func (db *DB) ruleValue(r *Record) float64 {
	return db.opts.Core.Value.Value(r.Text, strings.ToLower(db.speakerRole(r)))
}

// label scores and labels the records of ids not labelled yet, and queues
// those whose rule score reaches the threshold or that carry a decision or
// a preference. It runs at consolidation time and in the background pass,
// never on the append path.
func (db *DB) label(ids *roaring.Bitmap) (int, error) {
	cs := db.core
	cs.mu.Lock()
	todo := roaring.AndNot(ids, cs.labelled)
	cs.mu.Unlock()
	if todo.IsEmpty() {
		return 0, nil
	}
	o := &db.opts.Core.Value
	all := todo.ToArray()
	n := 0
	for start := 0; start < len(all); start += 1024 {
		chunk := all[start:min(len(all), start+1024)]
		ids64 := make([]uint64, len(chunk))
		for i, x := range chunk {
			ids64[i] = uint64(x)
		}
		type lab struct {
			id    uint32
			types []consolidate.Type
			queue bool
		}
		labs := make([]lab, 0, len(chunk))
		var c codec.Record
		var replies []Record // turns that open as an acceptance
		err := db.log.GetMany(ids64, func(id uint64, payload []byte) error {
			if _, err := codec.DecodeRecord(payload, &c); err != nil {
				return fmt.Errorf("%w: id %d: %w", ErrCorrupt, id, err)
			}
			r := fromCodec(id, &c)
			s := o.Signals(r.Text, strings.ToLower(db.speakerRole(&r)))
			score := consolidate.Score(s, o.Weights)
			labs = append(labs, lab{uint32(id), s.Types,
				score >= o.Threshold || s.Has(consolidate.TypeDecision) || s.Has(consolidate.TypePreference)})
			if consolidate.MayAccept(r.Text) {
				replies = append(replies, r)
			}
			return nil
		})
		if err != nil {
			return n, fmt.Errorf("lazymem: engine: label: %w", err)
		}
		accepted, err := db.acceptedProposals(replies)
		if err != nil {
			return n, fmt.Errorf("lazymem: engine: label: %w", err)
		}
		read := len(labs)
		for _, id := range accepted {
			labs = append(labs, lab{id: uint32(id), queue: true})
		}
		cs.mu.Lock()
		for _, l := range labs {
			cs.labelled.Add(l.id)
			for _, t := range l.types {
				cs.types[t].Add(l.id)
			}
			if l.queue && !cs.consolidated.Contains(l.id) {
				cs.queued.Add(l.id)
			}
		}
		// Records deleted meanwhile count as labelled: nothing to score.
		for _, x := range chunk {
			cs.labelled.Add(x)
		}
		cs.bitmapsDirty = true
		cs.mu.Unlock()
		n += read
	}
	return n, nil
}

// acceptedProposals returns, for the replies that accept the turn before
// them in their session as the rule consolidator reads it (a proposal
// from another speaker: "Let's set the pool size to 32" / "Done. …"),
// the ids of both turns: neither labels a decision alone, together they
// are one (consolidate.ProposalAccepted). The reply, not the proposal,
// looks back: the turn before it is always in the log when it is
// labelled, while a proposal may be labelled before its answer arrives.
func (db *DB) acceptedProposals(replies []Record) ([]uint64, error) {
	if len(replies) == 0 {
		return nil, nil
	}
	turns := sessionTurns{db: db}
	var prevs, ids []uint64
	var idx []int
	for i := range replies {
		prev, ok, err := turns.neighbour(&replies[i], replies[i].ID, -1)
		if err != nil {
			return nil, err
		}
		if ok {
			prevs, idx = append(prevs, prev), append(idx, i)
		}
	}
	sorted := slices.Clone(prevs)
	slices.Sort(sorted)
	recs, err := db.readRecords(slices.Compact(sorted))
	if err != nil {
		return nil, err
	}
	turn := func(r *Record) consolidate.Turn {
		return consolidate.Turn{ID: r.ID, Time: r.Time, Speaker: r.Role, Text: r.Text}
	}
	for k, i := range idx {
		p, ok := recs[prevs[k]]
		if ok && consolidate.ProposalAccepted(turn(&p), turn(&replies[i])) {
			ids = append(ids, p.ID, replies[i].ID)
		}
	}
	return ids, nil
}

// typeFilter returns the records labelled with one of the named types, for
// a query's Where[TypeMetaKey]; an unknown name is an error naming it.
func (db *DB) typeFilter(field string, names []string) (*roaring.Bitmap, error) {
	out := roaring.New()
	cs := db.core
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for i, n := range names {
		t, err := consolidate.ParseType(n)
		if err != nil {
			return nil, fieldErr(fmt.Sprintf("%s[%d]", field, i), ErrUnknown,
				fmt.Sprintf("%q, want decision, action_item, preference, outcome or fact", n))
		}
		out.Or(cs.types[t])
	}
	return out, nil
}

// splitTypeWhere takes the TypeMetaKey clause out of a query's Where: the
// rest goes to the index, the clause becomes a bitmap of labelled records
// (nil when there is none).
func (db *DB) splitTypeWhere(where map[string][]string) (map[string][]string, *roaring.Bitmap, error) {
	names, ok := where[TypeMetaKey]
	if !ok {
		return where, nil, nil
	}
	rest := make(map[string][]string, len(where)-1)
	for k, v := range where {
		if k != TypeMetaKey {
			rest[k] = v
		}
	}
	bm, err := db.typeFilter("query.where[\""+TypeMetaKey+"\"]", names)
	return rest, bm, err
}
