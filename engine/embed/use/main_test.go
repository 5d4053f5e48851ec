package use

import (
	"testing"

	"go.uber.org/goleak"
)

// Embed starts worker goroutines per call: none may outlive it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
