package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lazymem/lazymem/index"
)

// Compact purges forgotten and expired records physically: after it
// returns no byte of them remains in any file of the store.
//
//   - The log rewrites every segment that holds deleted records without
//     their bytes; Pebble flushes (a new WAL), compacts its whole keyspace
//     and deletes the obsolete WAL files and sstables (recycling of WAL
//     files is off, the archive is emptied).
//   - The index rewrites every segment file that holds deleted documents
//     or the postings a successor had before Forget or retention indexed
//     it again (index.Purge): their postings and terms, and the words the
//     successors inherited through session context, leave the segment
//     files; any corrupt index set aside by Open (index.corrupt-*) is
//     removed.
//   - The embedding cache's Pebble deletes every unnamespaced (v1) entry,
//     flushes, compacts and deletes its obsolete files (entries of
//     forgotten texts were deleted by Forget already), then is reopened:
//     the new MANIFEST no longer names the removed files' boundary keys.
//
// Appends and recalls proceed during the log's, the index's and the
// cache's work; the cache's reopen holds the store exclusively (appends
// wait).
func (db *DB) Compact(ctx context.Context) error {
	db.maintMu.Lock()
	defer db.maintMu.Unlock()
	db.mu.RLock()
	if db.closed {
		db.mu.RUnlock()
		return ErrClosed
	}
	err := db.log.Compact(ctx)
	if err == nil {
		err = db.log.WaitPurged(ctx, purgeTimeout)
	}
	if err == nil && db.cache != nil {
		if perr := db.cache.purge(ctx); perr != nil {
			err = fmt.Errorf("lazymem: engine: compact cache: %w", perr)
		}
	}
	if err == nil {
		if perr := db.core.purge(ctx); perr != nil {
			err = fmt.Errorf("lazymem: engine: compact core store: %w", perr)
		}
	}
	sc := db.opts.Index.SessionContext
	db.mu.RUnlock()
	if err != nil {
		return fmt.Errorf("lazymem: engine: compact: %w", err)
	}
	if sc {
		// Records that inherited a deleted record's words and were not
		// indexed again (a retention pass over Forget's bound, a Forget
		// that crashed before it re-indexed) are now, or the whole index
		// is rebuilt when they are too many.
		if _, err := db.reindexAfter(func() ([]uint64, error) { return db.idx.StaleSuccessors(), nil }, true); err != nil {
			return err
		}
	}
	// Only Forget, retention and Compact replace or delete from the index,
	// and they hold maintMu; Close may close it meanwhile.
	db.mu.RLock()
	idx := db.idx
	db.mu.RUnlock()
	if _, err := idx.Purge(); err != nil {
		if errors.Is(err, index.ErrClosed) {
			return ErrClosed
		}
		return fmt.Errorf("lazymem: engine: compact index: %w", err)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return ErrClosed
	}
	if db.cache != nil {
		if err := db.cache.reopen(ctx); err != nil {
			return fmt.Errorf("lazymem: engine: compact cache: %w", err)
		}
	}
	if err := db.removeCorruptIndexes(); err != nil {
		return err
	}
	db.compactions.Add(1)
	return nil
}

// purgeTimeout bounds the wait for Pebble to delete the files a
// compaction made obsolete (it does so in the background, in
// milliseconds).
const purgeTimeout = 30 * time.Second

// removeCorruptIndexes removes the damaged indexes Open set aside: they may
// hold forgotten words.
func (db *DB) removeCorruptIndexes() error {
	fs := db.opts.FS
	names, err := fs.List(db.dir)
	if err != nil {
		return fmt.Errorf("lazymem: engine: compact: list %s: %w", db.dir, err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "index.corrupt-") {
			if err := fs.RemoveAll(fs.PathJoin(db.dir, n)); err != nil {
				return fmt.Errorf("lazymem: engine: compact: remove %s: %w", n, err)
			}
		}
	}
	return nil
}

// Settle flushes the index's newest records into a segment and merges the
// newest segments into one, as the index does by itself once the store
// has been left alone for Options.Index.SettleAfter: a store a bulk load
// leaves is then searched as one segment instead of the several the
// load's tiered merges leave (lazymem ingest calls it after a load). A
// million records take about two seconds of CPU.
func (db *DB) Settle() error {
	db.mu.RLock()
	defer db.mu.RUnlock()
	if db.closed {
		return ErrClosed
	}
	if err := db.idx.Flush(); err != nil {
		return fmt.Errorf("lazymem: engine: settle: %w", err)
	}
	if err := db.idx.Settle(); err != nil {
		return fmt.Errorf("lazymem: engine: settle: %w", err)
	}
	return nil
}
