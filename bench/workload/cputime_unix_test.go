//go:build unix

package workload

import "syscall"

// cpuNanos is the process's user+system CPU time. On a shared machine it is
// steadier than wall time, because waiting for a core is not counted (GC
// work on other threads is, as it is part of the cost).
func cpuNanos() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
