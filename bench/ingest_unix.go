//go:build unix

package bench

import (
	"io/fs"
	"syscall"
)

// allocatedBytes is the file's allocated blocks in bytes.
func allocatedBytes(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return fi.Size()
}
