//go:build diag

package cluster

import (
	"testing"
	"time"
)

// TestForgetBytesRaft waits for the streams' Raft groups to snapshot
// and compact their logs (every 2 to 3 minutes, or sooner past 65536
// entries or 8 MB: nats-server's stream monitor) and checks that then
// no file of any NATS server holds the forgotten text. About four
// minutes: go test -tags diag -run TestForgetBytesRaft -v
// ./cmd/internal/cluster/
func TestForgetBytesRaft(t *testing.T) { forgetScan(t, 5*time.Minute) }
