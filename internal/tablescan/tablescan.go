package tablescan

import (
	"context"

	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// Contents returns the keys and values of the sstable at p in fsys,
// concatenated, whatever compression Pebble chose for each block; nil
// when p is not an sstable Pebble can read.
func Contents(fsys vfs.FS, p string) []byte {
	f, err := fsys.Open(p)
	if err != nil {
		return nil
	}
	readable, err := sstable.NewSimpleReadable(f)
	if err != nil {
		f.Close()
		return nil
	}
	r, err := sstable.NewReader(context.Background(), readable, sstable.ReaderOptions{})
	if err != nil {
		readable.Close()
		return nil
	}
	defer r.Close()
	it, err := r.NewIter(sstable.NoTransforms, nil, nil, sstable.AssertNoBlobHandles)
	if err != nil {
		return nil
	}
	defer it.Close()
	var out []byte
	for kv := it.First(); kv != nil; kv = it.Next() {
		v, _, err := kv.Value(nil)
		if err != nil {
			break
		}
		out = append(out, kv.K.UserKey...)
		out = append(out, v...)
	}
	return out
}
