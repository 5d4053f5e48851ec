package main

import (
	"os"
	"testing"

	"github.com/lazymem/lazymem/internal/testwatch"
	"go.uber.org/goleak"
)

// TestMain runs main itself when the crash test starts this binary as the
// daemon; otherwise the tests, then checks that no goroutine (the
// server's, the store's) outlives them.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		main()
		return
	}
	testwatch.Start()
	code := m.Run()
	closeFuzzStore()
	closeFuzzHTTP()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}
