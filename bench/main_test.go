package bench

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// Bleve starts a process-wide pool of analysis workers when its
		// package initialises (bleve.Config.SetAnalysisQueueSize); it is
		// never stopped by design and is not tied to any index we open.
		goleak.IgnoreTopFunction("github.com/blevesearch/bleve_index_api.AnalysisWorker"),
	)
}
