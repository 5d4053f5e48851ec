package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/index"
	"github.com/lazymem/lazymem/segment"
)

// ErrDamaged is wrapped by the error Repair returns when the store still
// fails verification after the repair.
var ErrDamaged = errors.New("lazymem: engine: store damaged")

// VerifyOptions configures Verify and Repair.
type VerifyOptions struct {
	// Options are the store's options; Log and Index matter (the index is
	// checked with the analyzer it was built with). Zero: the defaults, as
	// engine.Open uses them.
	Options Options
	// Progress, if not nil, is called as the work advances. Default: nil.
	Progress func(VerifyProgress)
}

// VerifyProgress reports how far a Verify or Repair is.
type VerifyProgress struct {
	Stage string // "log", "index", "repair", "reopen"
	Done  uint64 // units done in this stage (record ids for "log")
	Total uint64 // units in this stage; 0 when unknown
}

// Damage is one problem found in a store.
type Damage struct {
	// Kind: "log" (the log does not open), "segment" (a sealed segment
	// fails its checksum or format), "record" (a tail record, or a record
	// that does not decode), "index" (the index does not open),
	// "index-missing" (live log records the index lacks), "index-extra"
	// (indexed ids the log does not hold live).
	Kind string `json:"kind"`
	// Segment is the damaged segment's first id (or the record's id); 0
	// when not about one segment.
	Segment uint64 `json:"segment,omitempty"`
	// Offset is the byte offset of the damage inside the stored value; -1
	// when Pebble found it (a block checksum) and the offset is unknown.
	Offset int64 `json:"offset"`
	// FirstID and LastID bound the record ids affected (inclusive); 0 when
	// unknown.
	FirstID uint64 `json:"first_id,omitempty"`
	LastID  uint64 `json:"last_id,omitempty"`
	// Count is the number of ids affected (index kinds: the ids in the
	// range are not all affected).
	Count uint64 `json:"count,omitempty"`
	Err   string `json:"error,omitempty"`

	ce *segment.CorruptionError
}

// VerifyReport is what Verify found.
type VerifyReport struct {
	Dir      string `json:"dir"`
	Records  uint64 `json:"records"`  // ids assigned (1..Records)
	Live     uint64 `json:"live"`     // records read and decoded
	Segments int    `json:"segments"` // sealed segments
	Indexed  uint64 `json:"indexed"`  // live documents in the persisted index
	// Unindexed counts live records above the persisted index's last id:
	// not damage, the next Open indexes them from the log.
	Unindexed uint64   `json:"unindexed"`
	Damage    []Damage `json:"damage"`
}

// OK reports whether nothing is damaged.
func (r *VerifyReport) OK() bool { return len(r.Damage) == 0 }

// Verify checks the store in dir, which must not be open: every log record
// is read (checksums, decompression, layout) and decoded, and the index
// is compared with the log: every live log record up to the index's last
// id must be indexed, and the index must hold no id the log lacks. It
// changes no record and no index file (Pebble may write its own
// bookkeeping files when it opens the log). The error is for a store that cannot be checked at all
// (missing, locked, bad options); damage is in the report.
func Verify(dir string, opts VerifyOptions) (*VerifyReport, error) {
	return verify(context.Background(), dir, &opts)
}

func verify(ctx context.Context, dir string, vo *VerifyOptions) (*VerifyReport, error) {
	opts := vo.Options
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if _, err := opts.FS.Stat(opts.FS.PathJoin(dir, "log")); err != nil {
		return nil, fmt.Errorf("lazymem: engine: verify %q: not a store: %w", dir, err)
	}
	rep := &VerifyReport{Dir: dir, Damage: []Damage{}}
	progress := func(stage string, done, total uint64) {
		if vo.Progress != nil {
			vo.Progress(VerifyProgress{Stage: stage, Done: done, Total: total})
		}
	}

	lo := opts.Log
	lo.DisableBackgroundSeal = true
	log, err := segment.Open(filepath.Join(dir, "log"), lo)
	if err != nil {
		if !segment.IsCorruption(err) {
			return nil, fmt.Errorf("lazymem: engine: verify: open log: %w", err)
		}
		rep.Damage = append(rep.Damage, Damage{Kind: "log", Offset: -1, Err: firstLine(err.Error())})
		return rep, nil
	}
	defer log.Close()
	rep.Records = log.Next() - 1
	rep.Segments = log.Metrics().Segments

	live := roaring.New()
	var c codec.Record
	err = log.Check(ctx, func(id uint64, p []byte) error {
		if _, err := codec.DecodeRecord(p, &c); err != nil {
			rep.Damage = append(rep.Damage, Damage{Kind: "record", Segment: id, Offset: -1, FirstID: id, LastID: id, Count: 1,
				Err: fmt.Sprintf("%v: %v", ErrCorrupt, err)})
			return nil
		}
		if id < math.MaxUint32 {
			live.Add(uint32(id))
		}
		rep.Live++
		return nil
	}, func(ce *segment.CorruptionError, first, end uint64) {
		kind := "segment"
		if end == first+1 && ce.Segment == first && !isSegmentStart(log, first) {
			kind = "record"
		}
		rep.Damage = append(rep.Damage, Damage{Kind: kind, Segment: ce.Segment, Offset: ce.Offset,
			FirstID: first, LastID: end - 1, Count: end - first, Err: firstLine(ce.Error()), ce: ce})
	}, func(done, total uint64) { progress("log", done, total) })
	if err != nil {
		return nil, fmt.Errorf("lazymem: engine: verify log: %w", err)
	}

	progress("index", 0, 0)
	xo := opts.Index
	xo.DisableBackgroundMerge = true
	idx, err := index.Open(filepath.Join(dir, "index"), xo, nil)
	if err != nil {
		rep.Damage = append(rep.Damage, Damage{Kind: "index", Offset: -1, Err: firstLine(err.Error())})
		return rep, nil
	}
	defer idx.Close()
	indexed, err := idx.Filter(nil)
	if err != nil {
		return nil, fmt.Errorf("lazymem: engine: verify index: %w", err)
	}
	rep.Indexed = indexed.GetCardinality()
	if extra := roaring.AndNot(indexed, live); !extra.IsEmpty() {
		rep.Damage = append(rep.Damage, bitmapDamage("index-extra", extra,
			"the index holds ids the log does not hold live"))
	}
	missing := roaring.AndNot(live, indexed)
	if !missing.IsEmpty() {
		var last uint32
		if !indexed.IsEmpty() {
			last = indexed.Maximum()
		}
		above := missing.Clone()
		if last > 0 {
			above.RemoveRange(0, uint64(last)+1)
		} else {
			above = missing.Clone()
		}
		rep.Unindexed = above.GetCardinality()
		missing.AndNot(above)
		if !missing.IsEmpty() {
			rep.Damage = append(rep.Damage, bitmapDamage("index-missing", missing,
				"live log records below the index's last id are not indexed"))
		}
	}
	progress("index", 1, 1)
	return rep, nil
}

// isSegmentStart reports whether id is the first id of a sealed segment
// (as opposed to a tail record).
func isSegmentStart(l *segment.Log, id uint64) bool {
	m := l.Metrics()
	return id < m.Next-uint64(m.TailRecords)
}

// firstLine drops the detail lines Pebble joins to its errors.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func bitmapDamage(kind string, ids *roaring.Bitmap, msg string) Damage {
	return Damage{Kind: kind, Offset: -1, FirstID: uint64(ids.Minimum()), LastID: uint64(ids.Maximum()),
		Count: ids.GetCardinality(), Err: msg}
}

// RepairReport is what Repair did.
type RepairReport struct {
	// Before is the verification that found the damage.
	Before *VerifyReport `json:"before"`
	// Quarantine is the folder, under the store, that holds what was set
	// aside ("" when nothing was damaged).
	Quarantine string `json:"quarantine,omitempty"`
	// Moved lists what was set aside, one line each.
	Moved []string `json:"moved"`
	// LostRecords counts record ids whose records could not be read and
	// are now deleted slots.
	LostRecords uint64 `json:"lost_records"`
	// After is the verification once repaired.
	After *VerifyReport `json:"after"`
}

// Repair verifies the store in dir, which must not be open, and sets aside
// what cannot be read into a quarantine folder under dir
// (dir/quarantine/<time>/): the stored bytes of each damaged segment or
// record (then replaced by deleted slots: the ids stay assigned, the other
// records are untouched), the log's Pebble files when the log does not
// open (the newest WAL files are moved aside one by one until it does), and
// the index when it is damaged or disagrees with the log (Open rebuilds it
// from the log). It then opens the store and verifies it again; an error
// wrapping ErrDamaged means damage remains.
func Repair(dir string, opts VerifyOptions) (*RepairReport, error) {
	ctx := context.Background()
	before, err := verify(ctx, dir, &opts)
	if err != nil {
		return nil, err
	}
	rr := &RepairReport{Before: before, Moved: []string{}}
	if before.OK() {
		rr.After = before
		return rr, nil
	}
	rr.Quarantine = filepath.Join(dir, "quarantine", time.Now().UTC().Format("20060102T150405.000000000Z"))
	fs := storeFS(&opts.Options)
	if err := fs.MkdirAll(rr.Quarantine, 0o755); err != nil {
		return rr, fmt.Errorf("lazymem: engine: repair: %w", err)
	}
	step := func(done, total uint64) {
		if opts.Progress != nil {
			opts.Progress(VerifyProgress{Stage: "repair", Done: done, Total: total})
		}
	}
	// A log that did not open hid the rest of the damage: after salvaging
	// it, verify again and go on with what that finds.
	quarantineIndex := false
	rep := before
	for pass := 0; ; pass++ {
		var logDamage []Damage
		salvaged := false
		for _, d := range rep.Damage {
			quarantineIndex = true
			switch d.Kind {
			case "log":
				if err := rr.salvageLog(dir, &opts); err != nil {
					return rr, err
				}
				salvaged = true
			case "segment", "record":
				logDamage = append(logDamage, d)
			}
		}
		if len(logDamage) > 0 {
			if err := rr.quarantineRecords(ctx, dir, &opts, logDamage, step); err != nil {
				return rr, err
			}
		}
		if !salvaged || pass > 0 {
			break
		}
		if rep, err = verify(ctx, dir, &opts); err != nil {
			return rr, err
		}
	}
	if quarantineIndex {
		idir := filepath.Join(dir, "index")
		if _, err := fs.Stat(idir); err == nil {
			if err := fs.Rename(idir, filepath.Join(rr.Quarantine, "index")); err != nil {
				return rr, fmt.Errorf("lazymem: engine: repair: set the index aside: %w", err)
			}
			rr.Moved = append(rr.Moved, "index (rebuilt from the log by Open)")
		}
	}
	if err := writeJSON(fs, filepath.Join(rr.Quarantine, "damage.json"), before); err != nil {
		return rr, fmt.Errorf("lazymem: engine: repair: %w", err)
	}
	// Open rebuilds the index from the log; then check what we have.
	if opts.Progress != nil {
		opts.Progress(VerifyProgress{Stage: "reopen"})
	}
	db, err := Open(dir, opts.Options)
	if err != nil {
		return rr, fmt.Errorf("lazymem: engine: repair: open after repair: %w", err)
	}
	if err := db.Close(); err != nil {
		return rr, fmt.Errorf("lazymem: engine: repair: close after repair: %w", err)
	}
	rr.After, err = verify(ctx, dir, &opts)
	if err != nil {
		return rr, err
	}
	if !rr.After.OK() {
		return rr, fmt.Errorf("%w: %d problems remain after repair (first: %s)", ErrDamaged, len(rr.After.Damage), rr.After.Damage[0].Err)
	}
	return rr, nil
}

// quarantineRecords sets aside the damaged segments and records.
func (rr *RepairReport) quarantineRecords(ctx context.Context, dir string, opts *VerifyOptions, damage []Damage, step func(done, total uint64)) error {
	lo := opts.Options.Log
	lo.DisableBackgroundSeal = true
	log, err := segment.Open(filepath.Join(dir, "log"), lo)
	if err != nil {
		return fmt.Errorf("lazymem: engine: repair: open log: %w", err)
	}
	for i, d := range damage {
		step(uint64(i), uint64(len(damage)))
		if d.ce == nil { // a record that does not decode: delete it
			if err := log.Delete(ctx, []uint64{d.FirstID}); err != nil {
				log.Close()
				return fmt.Errorf("lazymem: engine: repair: delete record %d: %w", d.FirstID, err)
			}
			rr.LostRecords++
			rr.Moved = append(rr.Moved, fmt.Sprintf("record %d (does not decode): deleted", d.FirstID))
			continue
		}
		file, n, err := log.Quarantine(ctx, d.ce, rr.Quarantine)
		if err != nil {
			log.Close()
			return fmt.Errorf("lazymem: engine: repair: %w", err)
		}
		rr.LostRecords += uint64(n)
		what := fmt.Sprintf("%s %d (ids %d..%d): %d unreadable records now deleted, the others kept", d.Kind, d.Segment, d.FirstID, d.LastID, n)
		if file != "" {
			what += "; stored bytes in " + filepath.Base(file)
		}
		rr.Moved = append(rr.Moved, what)
	}
	step(uint64(len(damage)), uint64(len(damage)))
	return log.Close()
}

// salvageLog makes a log that Pebble refuses to open (a damaged WAL)
// open again: the whole log directory is copied into the quarantine first,
// then the newest WAL files are moved there one at a time until the log
// opens. The records of a moved WAL that were not yet in sstables are
// lost; they are reported by the ids the log no longer holds.
func (rr *RepairReport) salvageLog(dir string, opts *VerifyOptions) error {
	fs := storeFS(&opts.Options)
	ldir := filepath.Join(dir, "log")
	backup := filepath.Join(rr.Quarantine, "log-copy")
	if err := copyDir(fs, ldir, backup); err != nil {
		return fmt.Errorf("lazymem: engine: repair: copy the log aside: %w", err)
	}
	rr.Moved = append(rr.Moved, "log (copied whole to log-copy before salvage)")
	names, err := fs.List(ldir)
	if err != nil {
		return err
	}
	slices.Sort(names)
	var wals []string
	for _, n := range names {
		if strings.HasSuffix(n, ".log") {
			wals = append(wals, filepath.Join(ldir, n))
		}
	}
	lo := opts.Options.Log
	lo.DisableBackgroundSeal = true
	for i := len(wals) - 1; i >= 0; i-- {
		dst := filepath.Join(rr.Quarantine, filepath.Base(wals[i]))
		if err := fs.Rename(wals[i], dst); err != nil {
			return fmt.Errorf("lazymem: engine: repair: set WAL aside: %w", err)
		}
		rr.Moved = append(rr.Moved, "WAL "+filepath.Base(wals[i])+" (damaged or after the damage)")
		l, err := segment.Open(ldir, lo)
		if err == nil {
			return l.Close()
		}
		if !segment.IsCorruption(err) {
			return fmt.Errorf("lazymem: engine: repair: open log: %w", err)
		}
	}
	return fmt.Errorf("%w: the log does not open even without its WAL files", ErrDamaged)
}

// storeFS is the filesystem of a store opened with o: Options.FS, or the
// OS when it is unset.
func storeFS(o *Options) vfs.FS {
	if o.FS != nil {
		return o.FS
	}
	return vfs.Default
}

// copyDir copies the regular files of src into dst (created).
func copyDir(fs vfs.FS, src, dst string) error {
	if err := fs.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	names, err := fs.List(src)
	if err != nil {
		return err
	}
	for _, n := range names {
		st, err := fs.Stat(fs.PathJoin(src, n))
		if err != nil {
			return err
		}
		if st.IsDir() {
			continue
		}
		if err := vfs.Copy(fs, fs.PathJoin(src, n), fs.PathJoin(dst, n)); err != nil {
			return err
		}
	}
	return nil
}

// writeJSON writes v, indented, to name on fs, synced.
func writeJSON(fs vfs.FS, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
