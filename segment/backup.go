package segment

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// Checkpoint writes a consistent copy of the log to dir (which must not
// exist) while appends continue: Pebble's checkpoint (hard links where the
// filesystem allows, the WAL flushed first). Opening dir with Open restores
// the log as of the checkpoint: every record acknowledged before
// Checkpoint was called is in it, and deleted records stay deleted.
func (l *Log) Checkpoint(dir string) error {
	if err := l.park.Call(func() error { return l.db.Checkpoint(dir, pebble.WithFlushedWAL()) }); err != nil {
		return fmt.Errorf("lazymem: segment: checkpoint %s: %w", dir, err)
	}
	return nil
}
