package engine

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// The store lock. Open takes an exclusive lock on dir/LOCK (vfs.FS.Lock:
// fcntl on the OS, which also refuses a second lock from the same process)
// before it opens anything else, and writes who holds it to dir/OWNER. A
// second Open of the same store, from another process or this one, is
// refused with ErrLocked naming the holder; it never touches the log, the
// index or the cache. The lock file itself is left empty: the OS truncates
// it when the refused opener creates it.
const (
	lockName  = "LOCK"
	ownerName = "OWNER"
)

// Holder identifies the process holding a store's lock.
type Holder struct {
	PID   int       `json:"pid"`
	Host  string    `json:"host"`
	Since time.Time `json:"since"`
}

// LockedError is returned by Open for a store another DB holds. It wraps
// ErrLocked.
type LockedError struct {
	Dir    string
	Holder Holder // zero when the holder did not say (OWNER unreadable)
	Err    error  // the lock's own error
}

func (e *LockedError) Error() string {
	h := e.Holder
	if h.PID == 0 {
		return fmt.Sprintf("%v: %s (holder unknown: %v)", ErrLocked, e.Dir, e.Err)
	}
	return fmt.Sprintf("%v: %s is held by pid %d on %s since %s", ErrLocked, e.Dir, h.PID, h.Host, h.Since.Format(time.RFC3339))
}

// Unwrap returns ErrLocked.
func (e *LockedError) Unwrap() error { return ErrLocked }

// lockStore takes the store lock of dir and records this process as its
// holder.
// timeNow is the holder's "since": wall time, not Options.Clock (a test
// clock would misdate the holder).
var timeNow = time.Now

func lockStore(fs vfs.FS, dir string, now time.Time) (io.Closer, error) {
	name := fs.PathJoin(dir, lockName)
	if fs == vfs.Default {
		// The OS filesystem keeps a per-process table of locks by name:
		// one spelling per file, so that a second Open in this process is
		// refused too.
		if abs, err := filepath.Abs(name); err == nil {
			name = abs
		}
	}
	l, err := fs.Lock(name)
	if err != nil {
		le := &LockedError{Dir: dir, Err: err}
		if b, rerr := readFile(fs, fs.PathJoin(dir, ownerName)); rerr == nil {
			_ = json.Unmarshal(b, &le.Holder)
		}
		return nil, le
	}
	host, _ := os.Hostname()
	b, err := json.Marshal(Holder{PID: os.Getpid(), Host: host, Since: now.UTC().Truncate(time.Second)})
	if err == nil {
		// Temp file and rename: a refused opener never reads a torn OWNER.
		owner := fs.PathJoin(dir, ownerName)
		if err = writeFileSync(fs, owner+".tmp", b); err == nil {
			err = fs.Rename(owner+".tmp", owner)
		}
	}
	if err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("lazymem: engine: write %s: %w", ownerName, err)
	}
	return l, nil
}

// storeExists returns ErrNoStore unless dir holds a FORMAT marker or a log
// (a store written before the marker existed).
func storeExists(fs vfs.FS, dir string) error {
	for _, name := range []string{formatName, "log"} {
		if _, err := fs.Stat(fs.PathJoin(dir, name)); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%w: %s", ErrNoStore, dir)
}
