package segment

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// diskModel is a disk of a given capacity over an in-memory filesystem:
// every write beyond the free space fails with ENOSPC after writing what
// fits (as a real write does), a preallocation beyond it fails whole, and
// removing a file gives its bytes back. Creating a file, syncing and
// renaming take no space. GetDiskUsage reports the model's figures, so the
// log's own checks of free space see what its writes will see.
//
// At the full-th space-taking operation (full >= 0) the disk fills: the
// capacity drops to what is used then plus slack, as when another process
// takes the rest of the disk. grow gives space back.
type diskModel struct {
	vfs.FS // a *vfs.MemFS (crashable)

	mu       sync.Mutex
	capacity int64
	alloc    map[string]int64 // preallocated bytes, by path
	full     int64            // operation at which the disk fills; < 0: never
	slack    int64
	ops      atomic.Int64 // space-taking operations so far
	refused  atomic.Int64 // writes and preallocations that failed for want of space
	trace    []string     // what took or freed space once the disk filled (noteLocked)
}

// noteLocked records an event once the disk has filled (or from the
// start on a disk of small capacity), so that a failed run can say who
// spent the space (the last events are printed). d.mu is held.
func (d *diskModel) noteLocked(format string, args ...any) {
	if (d.full < 0 || d.ops.Load() <= d.full) && d.capacity >= 1<<40 {
		return
	}
	if len(d.trace) >= 400 {
		d.trace = append(d.trace[:0], d.trace[200:]...)
	}
	d.trace = append(d.trace, fmt.Sprintf("op %d: ", d.ops.Load())+fmt.Sprintf(format, args...))
}

// lastEvents returns the last n events of the trace.
func (d *diskModel) lastEvents(n int) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return strings.Join(d.trace[max(len(d.trace)-n, 0):], "\n")
}

func newDiskModel(fs vfs.FS, capacity, full, slack int64) *diskModel {
	return &diskModel{FS: fs, capacity: capacity, alloc: map[string]int64{}, full: full, slack: slack}
}

// usedLocked sums the sizes of every file and the preallocated extents.
func (d *diskModel) usedLocked() int64 {
	var used int64
	var walk func(dir string)
	walk = func(dir string) {
		names, err := d.FS.List(dir)
		if err != nil {
			return
		}
		for _, n := range names {
			p := d.FS.PathJoin(dir, n)
			fi, err := d.FS.Stat(p)
			if err != nil {
				continue
			}
			if fi.IsDir() {
				walk(p)
				continue
			}
			used += fi.Size() + d.alloc[p]
		}
	}
	walk("")
	return used
}

// room returns the free bytes, counting one more space-taking operation
// (and filling the disk if it is the chosen one). d.mu is held.
func (d *diskModel) roomLocked() int64 {
	used := d.usedLocked()
	if d.ops.Add(1)-1 == d.full {
		d.capacity = used + d.slack
	}
	return d.capacity - used
}

// grow adds n bytes of capacity (space returns).
func (d *diskModel) grow(n int64) {
	d.mu.Lock()
	d.capacity += n
	// A fill not reached yet never comes: the run's workload counts its
	// operations differently from run to run (background flushes and
	// compactions), and a fill at an operation after the space returned
	// took it back for good, so appends never resumed (one race-pass run
	// of TestDiskFullModel sat 8 minutes in its recovery loop).
	d.full = -1
	d.mu.Unlock()
}

func enospc(op, path string) error { return &os.PathError{Op: op, Path: path, Err: syscall.ENOSPC} }

func (d *diskModel) GetDiskUsage(string) (vfs.DiskUsage, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	used := d.usedLocked()
	avail := uint64(max(d.capacity-used, 0))
	return vfs.DiskUsage{AvailBytes: avail, TotalBytes: uint64(d.capacity), UsedBytes: uint64(used)}, nil
}

func (d *diskModel) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.roomLocked() // counts; an empty file takes no space
	delete(d.alloc, name)
	f, err := d.FS.Create(name, category)
	if err != nil {
		return nil, err
	}
	return &modelFile{File: f, d: d, path: name}, nil
}

func (d *diskModel) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := d.FS.OpenReadWrite(name, category, opts...)
	if err != nil {
		return nil, err
	}
	return &modelFile{File: f, d: d, path: name}, nil
}

func (d *diskModel) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f, err := d.FS.ReuseForWrite(oldname, newname, category)
	if err != nil {
		return nil, err
	}
	d.alloc[newname] = d.alloc[oldname]
	delete(d.alloc, oldname)
	return &modelFile{File: f, d: d, path: newname}, nil
}

func (d *diskModel) Remove(name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.FS.Remove(name); err != nil {
		return err
	}
	d.noteLocked("remove %s", name)
	delete(d.alloc, name)
	return nil
}

func (d *diskModel) RemoveAll(name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.FS.RemoveAll(name); err != nil {
		return err
	}
	for p := range d.alloc {
		if p == name || strings.HasPrefix(p, name+"/") {
			delete(d.alloc, p)
		}
	}
	return nil
}

func (d *diskModel) Rename(oldname, newname string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.FS.Rename(oldname, newname); err != nil {
		return err
	}
	d.alloc[newname] = d.alloc[oldname]
	delete(d.alloc, oldname)
	return nil
}

func (d *diskModel) Unwrap() vfs.FS { return d.FS }

// modelFile is a file of the model: its writes take space.
type modelFile struct {
	vfs.File
	d    *diskModel
	path string
}

func (f *modelFile) write(p []byte, do func([]byte) (int, error)) (int, error) {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	room := f.d.roomLocked()
	if f.d.refused.Load() > 0 && os.Getenv("LAZYMEM_MODEL_DEBUG") == "2" {
		fmt.Fprintf(os.Stderr, "model: write %s of %d, room %d\n", f.path, len(p), room)
	}
	if int64(len(p)) <= room {
		f.d.noteLocked("write %s %d of %d free", f.path, len(p), room)
		return do(p)
	}
	f.d.noteLocked("write %s %d of %d free: refused", f.path, len(p), room)
	f.d.refused.Add(1)
	if os.Getenv("LAZYMEM_MODEL_DEBUG") != "" {
		fmt.Fprintf(os.Stderr, "model: write %s of %d refused, room %d\n", f.path, len(p), room)
	}
	n := 0
	if room > 0 {
		var err error
		if n, err = do(p[:room]); err != nil {
			return n, err
		}
	}
	return n, enospc("write", f.path)
}

func (f *modelFile) Write(p []byte) (int, error) { return f.write(p, f.File.Write) }

func (f *modelFile) WriteAt(p []byte, off int64) (int, error) {
	// Pebble writes at the end of its files: count every byte as new.
	return f.write(p, func(q []byte) (int, error) { return f.File.WriteAt(q, off) })
}

func (f *modelFile) Preallocate(off, n int64) error {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	grow := off + n - f.d.alloc[f.path]
	if grow <= 0 {
		return nil
	}
	room := f.d.roomLocked()
	f.d.noteLocked("preallocate %s %d of %d free", f.path, grow, room)
	if grow > room {
		f.d.refused.Add(1)
		return enospc("fallocate", f.path)
	}
	f.d.alloc[f.path] += grow
	return f.File.Preallocate(off, n)
}
