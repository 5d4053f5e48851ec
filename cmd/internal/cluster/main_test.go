package cluster

import (
	"testing"

	"github.com/lazymem/lazymem/internal/testwatch"
	"go.uber.org/goleak"
)

// TestMain checks that no goroutine (a partition's apply loop, the lease
// loop, NATS's) outlives the tests.
func TestMain(m *testing.M) {
	testwatch.Start()
	goleak.VerifyTestMain(m)
}
