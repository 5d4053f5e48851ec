//go:build !race

package segment

// raceEnabled: the tests run under the race detector. The fault sweeps
// (TestFaultInjectionFlushes, TestDiskFullModel) try every 3rd of the
// operations the plain pass tries there: a race build is 5-10x slower,
// each faulted run is a child process or a fresh store, and the plain pass
// (make test runs both) covers every point of the sweep.
const raceEnabled = false
