package cluster

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no goroutine (a partition's apply loop, the lease
// loop, NATS's) outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
