package embed

import (
	"testing"

	"go.uber.org/goleak"
)

// The openai embedder starts goroutines per batch and the HTTP client keeps
// connections: none may outlive a test.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
