//go:build !unix

package segment

import "time"

// processCPU is not measured here: cpu-us/record reads 0.
func processCPU() time.Duration { return 0 }
