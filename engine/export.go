package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/cockroachdb/errors/oserror"
	"github.com/cockroachdb/pebble/v2"
	"github.com/lazymem/lazymem/codec"
)

// exportLine is one line of an export: the ingest JSONL record (see the
// lazymem ingest command), so that an export ingests back as it was. Ids
// are not written: a store assigns its own.
type exportLine struct {
	Time    string              `json:"time"`
	Agent   string              `json:"agent"`
	Session string              `json:"session,omitempty"`
	Role    string              `json:"role,omitempty"`
	Text    string              `json:"text"`
	Meta    map[string][]string `json:"meta,omitempty"`
}

// Export writes the live records of agent ("" for every agent) to w as
// JSONL, one record per line in id order, in the format the ingest command
// reads. Forgotten and expired records are not written. Appends may
// continue: the records appended after Export started may or may not be
// in it. It returns how many records it wrote.
func (db *DB) Export(ctx context.Context, agent string, w io.Writer) (int, error) {
	return db.export(ctx, agent, "", w)
}

// export is Export; a non-empty omit is a metadata key left out.
func (db *DB) export(ctx context.Context, agent, omit string, w io.Writer) (int, error) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return 0, ErrClosed
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	var c codec.Record
	n := 0
	err := db.log.Scan(1, db.log.Next(), func(id uint64, payload []byte) error {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if _, err := codec.DecodeRecord(payload, &c); err != nil {
			return fmt.Errorf("%w: id %d: %w", ErrCorrupt, id, err)
		}
		if agent != "" && c.Agent != agent {
			return nil
		}
		r := fromCodec(id, &c)
		if omit != "" {
			delete(r.Meta, omit)
		}
		n++
		return enc.Encode(exportLine{Time: r.Time.Format(time.RFC3339Nano), Agent: r.Agent, Session: r.Session,
			Role: r.Role, Text: r.Text, Meta: r.Meta})
	})
	if err != nil {
		return n, fmt.Errorf("lazymem: engine: export: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return n, fmt.Errorf("lazymem: engine: export: %w", err)
	}
	return n, nil
}

// Export writes this agent's live records; see DB.Export.
func (a *AgentDB) Export(ctx context.Context, w io.Writer) (int, error) {
	if err := a.check(); err != nil {
		return 0, err
	}
	return a.db.Export(ctx, a.agent, w)
}

// Backup writes a consistent copy of the store to dir, on the DB's
// filesystem, while appends and recalls continue. dir must not exist, or
// be empty. The copy holds the log (a Pebble checkpoint: every record
// acknowledged before Backup was called; forgotten records stay
// forgotten), the embedding cache and the core store (checkpoints too), the pins and the
// FORMAT marker; the index is not copied: opening the copy rebuilds it
// from the log. Restoring is opening dir (or moving it into place).
// Forget, retention and Compact wait for a Backup in progress, so the copy
// never holds half a Forget.
func (db *DB) Backup(ctx context.Context, dir string) error { return db.backup(ctx, dir, false) }

// backup is Backup; withIndex also copies the index (BackupIndexed).
func (db *DB) backup(ctx context.Context, dir string, withIndex bool) error {
	db.maintMu.Lock()
	defer db.maintMu.Unlock()
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	fs := db.opts.FS
	switch names, err := fs.List(dir); {
	case err == nil && len(names) > 0:
		return fieldErr("backup.dir", ErrExists, dir+" is not empty")
	case err != nil && !oserror.IsNotExist(err):
		return fmt.Errorf("lazymem: engine: backup: %w", err)
	}
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("lazymem: engine: backup: %w", err)
	}
	if withIndex {
		// Before the log: every record the copy's index holds is in the
		// copy's log (appends go on meanwhile; Open re-indexes the tail).
		if err := db.idx.Flush(); err != nil {
			return fmt.Errorf("lazymem: engine: backup: flush index: %w", err)
		}
		if err := db.idx.Checkpoint(fs.PathJoin(dir, "index")); err != nil {
			return fmt.Errorf("lazymem: engine: backup: %w", err)
		}
	}
	if err := db.log.Checkpoint(fs.PathJoin(dir, "log")); err != nil {
		return fmt.Errorf("lazymem: engine: backup: %w", err)
	}
	if db.cache != nil {
		if err := db.cache.checkpoint(fs.PathJoin(dir, "cache")); err != nil {
			return fmt.Errorf("lazymem: engine: backup: cache: %w", err)
		}
	}
	if err := db.flushValues(); err != nil {
		return fmt.Errorf("lazymem: engine: backup: core store: %w", err)
	}
	// The value counts were just committed without a sync: the WAL is
	// flushed into the checkpoint, else the copy lacks them.
	if err := db.core.pdb.Checkpoint(fs.PathJoin(dir, "core"), pebble.WithFlushedWAL()); err != nil {
		return fmt.Errorf("lazymem: engine: backup: core store: %w", err)
	}
	for _, name := range []string{formatName, pinsFile} {
		b, err := readFile(fs, fs.PathJoin(db.dir, name))
		if oserror.IsNotExist(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("lazymem: engine: backup: %w", err)
		}
		if err := writeFileSync(fs, fs.PathJoin(dir, name), b); err != nil {
			return fmt.Errorf("lazymem: engine: backup: %w", err)
		}
	}
	return syncDir(fs, dir)
}
