//go:build !unix

package bench

import "io/fs"

// allocatedBytes is the file's length: the platform reports no blocks.
func allocatedBytes(fi fs.FileInfo) int64 { return fi.Size() }
