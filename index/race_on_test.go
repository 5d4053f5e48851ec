//go:build race

package index

// raceEnabled: the tests run under the race detector (see race_off_test.go).
const raceEnabled = true
