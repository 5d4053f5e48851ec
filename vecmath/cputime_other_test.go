//go:build !linux

package vecmath

import "time"

func threadCPU() (time.Duration, bool) { return 0, false }
