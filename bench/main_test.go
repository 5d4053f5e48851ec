package bench

import (
	"fmt"
	"os"
	"testing"

	"github.com/lazymem/lazymem/internal/testwatch"
	"go.uber.org/goleak"
)

// cleanups run after every test and benchmark of the process: the indexes
// shared across sub-benchmarks are closed and their scratch directory
// removed here, before the leak check.
var cleanups []func()

func TestMain(m *testing.M) {
	testwatch.Start()
	code := m.Run()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	if code == 0 {
		if err := goleak.Find(
			// Bleve starts a process-wide pool of analysis workers when its
			// package initialises (bleve.Config.SetAnalysisQueueSize); it is
			// never stopped by design and is not tied to any index we open.
			goleak.IgnoreTopFunction("github.com/blevesearch/bleve_index_api.AnalysisWorker"),
		); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
