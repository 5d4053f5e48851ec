package analysis

import (
	"syscall"
	"time"
)

// processCPU returns the user+system CPU time of the process. Benchmarks
// report it beside wall time because the development machine is shared:
// wall time there measures the neighbours as much as the code.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
