package eval

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// realData is the shared LoCoMo directory, relative to this package.
const realData = "../../../shared/data/locomo"

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// dataDir returns the shared LoCoMo directory or skips the test.
func dataDir(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat(realData); err != nil {
		t.Skipf("LoCoMo data not found at %s (%v): skipping the real-data test", realData, err)
	}
	return realData
}
