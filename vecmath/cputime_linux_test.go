//go:build linux

package vecmath

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU is the CPU time consumed by the calling OS thread. On the shared
// development machine wall time per op swings with other people's load
// (time slices, not the kernel, dominate it); thread CPU time excludes the
// time this thread was not running, so the benchmarks report it alongside
// ns/op as cpu-ns/op.
func threadCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
