package engine

import (
	"fmt"

	"github.com/cockroachdb/errors/oserror"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Creating a store is not one atomic step: Pebble creates its MANIFEST,
// then a marker naming it, and a crash in between can leave the marker
// without the MANIFEST (their directory entries are not synced yet), a
// store that no longer opens. Open therefore writes dir/CREATING, durably,
// before it creates anything of a new store, and removes it once the
// whole store is open. A CREATING found by Open means a creation was
// interrupted: no Open had returned, so nothing was ever acknowledged,
// and the half-made store is removed and created again.
const creatingName = "CREATING"

// prepareDir creates dir if needed and takes the store lock. It reports
// whether the store is new (or its creation was interrupted and has been
// undone): the caller then removes CREATING with doneCreating once the
// store is open.
func prepareDir(fs vfs.FS, dir string) (lock interface{ Close() error }, fresh bool, err error) {
	if _, err := fs.Stat(dir); oserror.IsNotExist(err) {
		if err := fs.MkdirAll(dir, 0o755); err != nil {
			return nil, false, fmt.Errorf("lazymem: engine: create %s: %w", dir, err)
		}
		if err := syncDir(fs, fs.PathDir(dir)); err != nil {
			return nil, false, fmt.Errorf("lazymem: engine: create %s: %w", dir, err)
		}
	} else if err != nil {
		return nil, false, fmt.Errorf("lazymem: engine: %s: %w", dir, err)
	}
	l, err := lockStore(fs, dir, timeNow())
	if err != nil {
		return nil, false, err
	}
	exists := func(name string) bool {
		_, err := fs.Stat(fs.PathJoin(dir, name))
		return err == nil
	}
	switch {
	case exists(creatingName):
		for _, sub := range []string{"log", "index", "cache", "core", "index.old", "index.new", formatName} {
			if err := fs.RemoveAll(fs.PathJoin(dir, sub)); err != nil {
				_ = l.Close()
				return nil, false, fmt.Errorf("lazymem: engine: undo an interrupted creation: %w", err)
			}
		}
		return l, true, nil // CREATING stays until the store is open
	case exists(formatName) || exists("log"):
		return l, false, nil
	}
	if err := writeFileSync(fs, fs.PathJoin(dir, creatingName), nil); err != nil {
		_ = l.Close()
		return nil, false, fmt.Errorf("lazymem: engine: write %s: %w", creatingName, err)
	}
	if err := syncDir(fs, dir); err != nil {
		_ = l.Close()
		return nil, false, fmt.Errorf("lazymem: engine: write %s: %w", creatingName, err)
	}
	return l, true, nil
}

// doneCreating removes CREATING: the new store is complete.
func doneCreating(fs vfs.FS, dir string) error {
	if err := fs.Remove(fs.PathJoin(dir, creatingName)); err != nil && !oserror.IsNotExist(err) {
		return fmt.Errorf("lazymem: engine: remove %s: %w", creatingName, err)
	}
	return syncDir(fs, dir)
}
