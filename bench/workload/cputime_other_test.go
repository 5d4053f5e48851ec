//go:build !unix

package workload

func cpuNanos() int64 { return 0 }
