//go:build !race

package index

// raceEnabled: the tests run under the race detector. TestCrashConsistency
// then reopens the crash images of one seed, not three: a race build is
// 5-10x slower, and the plain pass (make test runs both) covers all three.
const raceEnabled = false
