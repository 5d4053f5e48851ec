package segment

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// ErrPurge is returned by WaitPurged when Pebble has not deleted the
// obsolete files in time. (Declared here rather than in errors.go, which
// another change is editing at the same time; move it there later.)
var ErrPurge = errors.New("lazymem: segment: obsolete files not purged")

// WaitPurged waits until the obsolete files of the Pebble store db in dir
// (sstables a compaction replaced, WAL files a flush retired) are gone from
// dir, then empties dir/archive. Pebble deletes obsolete files in the
// background, after Compact and Flush return: a privacy delete is only
// complete once they are gone. It gives up with ErrPurge after timeout.
func WaitPurged(ctx context.Context, db *pebble.DB, fs vfs.FS, dir string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		done, why, err := purged(db, fs, dir)
		if err != nil {
			return err
		}
		if done {
			return purgeArchive(fs, dir)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: %s: %s after %v", ErrPurge, dir, why, timeout)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// purged reports whether dir holds no sstable Pebble no longer uses and no
// more WAL files than Pebble has live; why says what is left.
func purged(db *pebble.DB, fs vfs.FS, dir string) (bool, string, error) {
	tabs, err := db.SSTables()
	if err != nil {
		return false, "", err
	}
	live := map[string]bool{}
	for _, level := range tabs {
		for _, t := range level {
			live[t.FileNum.String()+".sst"] = true
		}
	}
	names, err := fs.List(dir)
	if err != nil {
		return false, "", err
	}
	logs, manifests := 0, 0
	for _, n := range names {
		if strings.HasPrefix(n, "MANIFEST-") {
			manifests++
		}
		if strings.HasSuffix(n, ".sst") && !live[n] {
			return false, "obsolete sstable " + n, nil
		}
		if strings.HasSuffix(n, ".log") {
			logs++
		}
	}
	if manifests > 2 { // the current one and Pebble's one previous
		return false, fmt.Sprintf("%d MANIFEST files", manifests), nil
	}
	if walLive := db.Metrics().WAL.Files; int64(logs) > walLive {
		return false, fmt.Sprintf("%d WAL files, %d live", logs, walLive), nil
	}
	return true, "", nil
}

// WaitPurged waits until the log's Pebble has deleted the files a Compact
// made obsolete and empties its archive; see the function WaitPurged.
func (l *Log) WaitPurged(ctx context.Context, timeout time.Duration) error {
	// Pebble's SSTables takes the mutex a parked goroutine holds (park.go).
	return l.park.Call(func() error { return WaitPurged(ctx, l.db, l.opts.FS, l.dir, timeout) })
}
