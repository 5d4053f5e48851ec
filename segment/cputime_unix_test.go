//go:build unix

package segment

import (
	"syscall"
	"time"
)

// processCPU is the process's CPU time so far (user + system, all threads).
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
