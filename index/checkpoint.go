package index

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Checkpoint writes a copy of the persisted index to dir, on the index's
// filesystem: a hard link (or a copy) of each sealed segment file and a
// manifest naming them with the tombstones, taken under the index's lock
// so that the manifest matches the files. The mutable segment is not
// copied (Flush first to include it): an Open of the copy with a Source
// re-indexes what it lacks, and drops segments beyond the Source's last
// id, as after a crash. dir is created; it must not hold another index.
func (x *Index) Checkpoint(dir string) error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return ErrClosed
	}
	if x.dir == "" {
		return fmt.Errorf("lazymem: index: checkpoint: the index is in memory")
	}
	if err := x.fs.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("lazymem: index: checkpoint: %w", err)
	}
	m := &manifest{nextNum: x.nextNum, tomb: x.tomb, amended: x.amended, sig: x.signature()}
	for _, s := range x.segs {
		if s.mut != nil {
			break // being flushed: not persisted yet
		}
		name := segName(s.num)
		if err := vfs.LinkOrCopy(x.fs, x.fs.PathJoin(x.dir, name), x.fs.PathJoin(dir, name)); err != nil {
			return fmt.Errorf("lazymem: index: checkpoint: %w", err)
		}
		m.segs = append(m.segs, manifestSeg{num: s.num, lo: s.lo, hi: s.hi})
	}
	if err := writeManifest(x.fs, dir, m); err != nil {
		return fmt.Errorf("lazymem: index: checkpoint: %w", err)
	}
	return nil
}
