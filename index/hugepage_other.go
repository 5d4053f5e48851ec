//go:build !linux

package index

// adviseHuge is a no-op: huge pages are asked for by madvise on Linux
// only.
func adviseHuge[T any]([]T) {}

// reserveHeap is a no-op off Linux.
func reserveHeap(int64) {}
