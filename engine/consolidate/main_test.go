package consolidate

import (
	"testing"

	"go.uber.org/goleak"
)

// The LLM consolidator's HTTP client keeps connections: none may outlive
// a test.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
