package engine

import (
	"os"
	"testing"

	"github.com/lazymem/lazymem/internal/testwatch"
	"go.uber.org/goleak"
)

// TestMain closes the stores the benchmarks share, then checks that no
// goroutine (Pebble's, ristretto's, the index's) outlives its DB.
func TestMain(m *testing.M) {
	testwatch.Start()
	code := m.Run()
	closeBenchStores()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}
