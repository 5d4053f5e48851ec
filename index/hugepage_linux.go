//go:build linux

package index

import (
	"bytes"
	"os"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page with 4 KiB base pages
// (amd64, arm64).
const hugePage = 2 << 20

// adviseHuge asks the kernel to back the whole 2 MiB pages inside s's
// capacity with transparent huge pages when they are first touched
// (madvise MADV_HUGEPAGE: a hint, its error ignored; a no-op unless the
// host's mode is madvise or always). Memory already touched keeps its 4
// KiB pages. T holds no pointers (the memory is only advised, never
// reinterpreted).
func adviseHuge[T any](s []T) {
	var zero T
	n := uintptr(cap(s)) * unsafe.Sizeof(zero)
	if n < 2*hugePage {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), n)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	beg := (p + hugePage - 1) &^ (hugePage - 1)
	end := (p + n) &^ (hugePage - 1)
	if beg < end {
		_ = unix.Madvise(b[beg-p:end-p], unix.MADV_HUGEPAGE)
	}
}

// thpMode is the bracketed word of the host's transparent huge page
// mode ("always", "madvise", "never"), or "" when unknown.
var thpMode = sync.OnceValue(func() string {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return ""
	}
	return parseTHPMode(b)
})

// parseTHPMode returns the bracketed word of a transparent_hugepage
// "enabled" file ("always [madvise] never" -> "madvise").
func parseTHPMode(b []byte) string {
	_, rest, ok := bytes.Cut(b, []byte("["))
	if !ok {
		return ""
	}
	w, _, ok := bytes.Cut(rest, []byte("]"))
	if !ok {
		return ""
	}
	return string(w)
}

// reserveHeap readies the Go heap for n bytes of loading on huge pages:
// it allocates n plus up to 256 MiB more (fresh memory, never touched),
// advises it to huge pages and collects it, so that the loading and the
// allocations after it reuse that memory, each 2 MiB a single page
// fault. Only where the host's mode is madvise (with always the kernel
// does it anyway).
//
// Profile lesson (1M Zipf store, 108 MB of index segments, a new
// process's Open and first recall, 20 processes a variant, two rounds):
// on a virtual machine whose page fault costs ~10 µs, Open faulted
// ~23,000 fresh 4 KiB pages besides its ~27,000 of segment files (perf
// -e page-faults: the time index's growth 41% of them, the log's names,
// maps and bitmaps, new spans); with the host's mode switched to always,
// Open took ~150 ms instead of ~770 and the first recall ~4 ms instead
// of ~5.5.
func reserveHeap(n int64) {
	if thpMode() != "madvise" {
		return
	}
	b := make([]byte, n+min(n, 256<<20))
	adviseHuge(b)
	runtime.KeepAlive(b)
	runtime.GC()
}
