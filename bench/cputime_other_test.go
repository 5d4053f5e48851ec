//go:build !unix

package bench

import "time"

// processCPU is not measured here: the benchmarks report 0.
func processCPU() time.Duration { return 0 }
