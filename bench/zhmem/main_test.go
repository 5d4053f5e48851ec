package zhmem_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no goroutine of the stores Evaluate opens outlives
// it.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}
