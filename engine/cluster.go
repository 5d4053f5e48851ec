package engine

import (
	"context"
	"fmt"
	"io"

	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/index"
)

// The two calls a replicated front end (lazymemd --cluster) needs beyond
// Append and Forget: it checks a batch before publishing it to the
// replicated log, because a record every replica refuses at apply time
// would block its partition, and it resolves a Forget selector to ids
// before publishing the forget, because the replicas apply a forget by
// ids (a selector read on another replica's copy could name other
// records).

// ValidateBatch checks recs as AppendBatch would, without writing: nil
// when AppendBatch would accept them, else the *FieldError it would
// return ("records[3].agent"; "record.text" when single is true and recs
// holds one record).
func (db *DB) ValidateBatch(recs []Record, single bool) error {
	if len(recs) == 0 {
		return fieldErr("records", ErrMissing, "empty batch")
	}
	name := ""
	if single {
		name = "record"
	}
	var keys []string
	for i := range recs {
		r := &recs[i]
		if !recordOK(r, &db.opts) {
			return recordError(r, &db.opts, recordName(name, i))
		}
		d := index.Doc{Time: r.Time.UnixNano(), Agent: r.Agent, Session: r.Session, Role: r.Role, Text: r.Text}
		keys = sortedKeys(keys, r.Meta)
		for _, k := range keys {
			d.Meta = append(d.Meta, index.Field{Key: k, Values: r.Meta[k]})
		}
		var scratch []codec.Field
		c := docRecord(&d, &scratch)
		if n := codec.RecordSize(&c); n > db.opts.Log.MaxRecordBytes {
			return fieldErr(recordName(name, i), ErrTooLong, fmt.Sprintf("encoded %d bytes, log limit %d", n, db.opts.Log.MaxRecordBytes))
		}
	}
	return nil
}

// Select returns the ids of the live records sel names, ascending, as
// Forget would resolve them, without forgetting anything.
func (db *DB) Select(ctx context.Context, sel Selector) ([]uint64, error) {
	if err := sel.validate(&db.opts); err != nil {
		return nil, err
	}
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	bm, err := db.resolveSelector(&sel)
	if err != nil {
		return nil, err
	}
	ids := make([]uint64, 0, bm.GetCardinality())
	it := bm.Iterator()
	for it.HasNext() {
		ids = append(ids, uint64(it.Next()))
	}
	return ids, nil
}

// Expired reports whether r would be past its retention window now (the
// DB's Retention options and Clock), so that a replica applying the
// replicated log can leave out a record its retention pass would remove
// at once: a replay of an old log then never brings an expired record
// back, even until the next pass. Pins do not count: a record not yet
// stored cannot be pinned.
func (db *DB) Expired(r *Record) bool {
	ret := &db.opts.Retention
	w := ret.Window
	if aw, ok := ret.PerAgent[r.Agent]; ok {
		w = aw
	}
	return w > 0 && !r.Time.IsZero() && r.Time.Before(db.opts.Clock().Add(-w))
}

// BackupIndexed is Backup with the index: the index's sealed segments
// (the in-memory segment is flushed first) are copied too, taken before
// the log's checkpoint, so that opening the copy loads them instead of
// re-indexing every record, and re-indexes only what was appended in
// between. A replicated front end ships such copies to nodes that
// rebuild a partition (lazymemd --cluster's snapshots).
func (db *DB) BackupIndexed(ctx context.Context, dir string) error { return db.backup(ctx, dir, true) }

// ExportOmitting is Export without the metadata key omit in the records
// written: a replicated front end leaves out the key that carries its
// own record ids (an export ingests into a store that assigns its own).
func (db *DB) ExportOmitting(ctx context.Context, agent, omit string, w io.Writer) (int, error) {
	return db.export(ctx, agent, omit, w)
}
