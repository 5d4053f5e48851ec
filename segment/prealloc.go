package segment

import "github.com/cockroachdb/pebble/v2/vfs"

// noPreallocFS hands Pebble files whose Preallocate does nothing. Pebble
// preallocates every new WAL file to 110% of MemTableSize (70 MiB at the
// default 64 MiB), whatever the size of the memtable it logs: memtables
// start at 256 KiB and double, so a fresh log of 60,000 records held six
// WAL files of 0.3-7 MB of data and 423 MB of allocated blocks. Without
// preallocation a WAL file's blocks are its bytes. Appends are synced per
// group either way (fdatasync); the extents preallocation would have saved
// are a metadata update on the first sync of each new block.
type noPreallocFS struct{ vfs.FS }

type noPreallocFile struct{ vfs.File }

func (noPreallocFile) Preallocate(offset, length int64) error { return nil }

func (fs noPreallocFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	if err != nil {
		return nil, err
	}
	return noPreallocFile{f}, nil
}

func (fs noPreallocFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	if err != nil {
		return nil, err
	}
	return noPreallocFile{f}, nil
}
