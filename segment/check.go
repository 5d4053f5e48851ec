package segment

import (
	"context"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Check reads every record of the log without stopping at damage and
// without using or filling the cache: fn gets each live record in id
// order, bad each damaged sealed segment or tail record with the ids
// [first, end) it covers. progress, if not nil, gets the ids checked so
// far and the ids to check. It returns fn's first error, ctx's error, or
// an error that is not damage (the store cannot be read at all).
func (l *Log) Check(ctx context.Context, fn func(id uint64, payload []byte) error,
	bad func(ce *CorruptionError, first, end uint64), progress func(done, total uint64)) error {
	l.segMu.RLock()
	segs := append([]segMeta(nil), l.segs...)
	l.segMu.RUnlock()
	total := l.committed.Load() - 1
	var ts []uint64
	report := func(ce *CorruptionError, first, end uint64) {
		if bad != nil {
			bad(ce, first, end)
		}
	}
	for _, m := range segs {
		if err := ctx.Err(); err != nil {
			return err
		}
		ts = l.tombstones(ts[:0], m.first, m.end())
		d, closer, err := l.read(m, false)
		var ce *CorruptionError
		switch {
		case errors.Is(err, errSegmentGone):
			continue
		case errors.As(err, &ce):
			report(ce, m.first, m.end()) // read counted it
		case err != nil:
			return err
		default:
			closer.Close()
			for id := m.first; id < m.end(); id++ {
				for len(ts) > 0 && ts[0] < id {
					ts = ts[1:]
				}
				if len(ts) > 0 && ts[0] == id {
					continue
				}
				if p, ok := d.get(id); ok {
					if err := fn(id, p); err != nil {
						return err
					}
				}
			}
		}
		if progress != nil {
			progress(m.end()-1, total)
		}
	}
	l.segMu.RLock()
	sealed := l.sealed
	l.segMu.RUnlock()
	var buf []byte
	for id := sealed; id <= total; id++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		var err error
		buf, err = l.getTail(id, buf[:0])
		var ce *CorruptionError
		switch {
		case errors.Is(err, ErrDeleted):
		case errors.Is(err, pebble.ErrNotFound):
			// Sealed meanwhile: Check is meant for a quiet log; say so.
			return fmt.Errorf("lazymem: segment: check: tail record %d moved during the check", id)
		case errors.As(err, &ce):
			l.corruptions.Add(1)
			report(ce, id, id+1)
		case err != nil:
			return err
		default:
			if err := fn(id, buf); err != nil {
				return err
			}
		}
		if progress != nil && (id%1024 == 0 || id == total) {
			progress(id, total)
		}
	}
	return nil
}

// Quarantine sets a damaged record or segment aside and makes the log
// usable again: the stored bytes, when Pebble can still read them, are
// written to dir (on the log's filesystem) as segment-<first>.bin or
// record-<id>.bin, then the damaged records are replaced by deleted slots
// (Repair for a sealed segment, Delete for a tail record). It returns the
// file written ("" when nothing was readable) and how many record slots
// were lost.
func (l *Log) Quarantine(ctx context.Context, ce *CorruptionError, dir string) (file string, n int, err error) {
	if ce == nil {
		return "", 0, fmt.Errorf("lazymem: segment: quarantine: nil corruption error")
	}
	l.segMu.RLock()
	inTail := ce.Segment >= l.sealed
	l.segMu.RUnlock()
	key, name := makeKey(prefixSegment, ce.Segment), fmt.Sprintf("segment-%d.bin", ce.Segment)
	if inTail {
		key, name = makeKey(prefixTail, ce.Segment), fmt.Sprintf("record-%d.bin", ce.Segment)
	}
	if raw, ok := l.rawValue(key); ok {
		fs := l.opts.FS
		if err := fs.MkdirAll(dir, 0o755); err != nil {
			return "", 0, fmt.Errorf("lazymem: segment: quarantine: %w", err)
		}
		file = fs.PathJoin(dir, name)
		if err := writeFile(fs, file, raw); err != nil {
			return "", 0, fmt.Errorf("lazymem: segment: quarantine: %w", err)
		}
	}
	if inTail {
		if err := l.Delete(ctx, []uint64{ce.Segment}); err != nil {
			return file, 0, err
		}
		return file, 1, nil
	}
	n, err = l.Repair(ctx, ce)
	return file, n, err
}

// rawValue returns a copy of the stored value of key, if Pebble can read it.
func (l *Log) rawValue(key []byte) ([]byte, bool) {
	db, err := l.rdb()
	if err != nil {
		return nil, false
	}
	defer l.dbMu.RUnlock()
	v, closer, err := db.Get(key)
	if err != nil {
		return nil, false
	}
	defer closer.Close()
	return append([]byte(nil), v...), true
}

func writeFile(fs vfs.FS, name string, data []byte) error {
	f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
