package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/lazymem/lazymem/cmd/internal/wire"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/segment"
)

// TestClassify: every error the engine returns maps to its documented
// status; the client's mistakes are 4xx, a full disk 507, however deeply
// it is wrapped.
func TestClassify(t *testing.T) {
	// How the log reports a failed write: an *fs.PathError inside the
	// engine's and the segment's wrapping.
	enospc := fmt.Errorf("lazymem: engine: append: %w", fmt.Errorf("lazymem: segment: write: %w",
		&fs.PathError{Op: "write", Path: "/store/log/000001.log", Err: syscall.ENOSPC}))
	for _, c := range []struct {
		name    string
		err     error
		expired bool
		status  int
		code    string
		field   string
	}{
		{"disk full", enospc, false, http.StatusInsufficientStorage, "disk_full", ""},
		{"storage engine stopped by a full disk", fmt.Errorf("lazymem: engine: append: %w", fmt.Errorf("%w: %w: %w", segment.ErrFailed, segment.ErrStopped, syscall.ENOSPC)), false, http.StatusServiceUnavailable, "stopped", ""},
		{"disk full, bare", syscall.ENOSPC, false, http.StatusInsufficientStorage, "disk_full", ""},
		{"disk full inside an embed error", fmt.Errorf("%w: cache: %w", engine.ErrEmbed, enospc), false, http.StatusInsufficientStorage, "disk_full", ""},
		{"quota", &os.SyscallError{Syscall: "fsync", Err: syscall.EDQUOT}, false, http.StatusInsufficientStorage, "disk_full", ""},
		{"wire field", &wire.Error{Field: "k", Msg: "want an integer"}, false, 400, "invalid", "query.k"},
		{"engine field", &engine.FieldError{Field: "record.agent", Reason: engine.ErrMissing}, false, 400, "invalid", "record.agent"},
		{"invalid", fmt.Errorf("%w: bad", engine.ErrInvalid), false, 400, "invalid", ""},
		{"no embedder", engine.ErrNoEmbedder, false, 400, "invalid", "query.mode"},
		{"not found", engine.ErrNotFound, false, 404, "not_found", ""},
		{"deleted answers as never assigned", engine.ErrDeleted, false, 404, "not_found", ""},
		{"dense scan over the budget", fmt.Errorf("%w: 20000 records pass the filters, max_dense_scan 10000", engine.ErrBudget), false, 413, "too_large", "query.mode"},
		{"scoped handle", &engine.FieldError{Field: "query.agent", Reason: engine.ErrScope}, false, 403, "forbidden", ""},
		{"agent quota", fmt.Errorf("%w: agent a1", engine.ErrQuota), false, 403, "quota", ""},
		{"embedder down", fmt.Errorf("%w: connection refused", engine.ErrEmbed), false, 502, "embedder", ""},
		{"closed", engine.ErrClosed, false, 503, "closed", ""},
		{"request timeout", fmt.Errorf("recall: %w", context.DeadlineExceeded), true, 503, "timeout", ""},
		{"client gone", context.Canceled, true, 503, "canceled", ""},
		{"corrupt", fmt.Errorf("%w: id 3", engine.ErrCorrupt), false, 500, "corrupt", ""},
		{"other", errors.New("boom"), false, 500, "internal", ""},
		{"read-only file system is not a full disk", &fs.PathError{Op: "open", Path: "x", Err: syscall.EROFS}, false, 500, "internal", ""},
	} {
		st, e := classify(c.err, "query", c.expired, time.Second)
		if st != c.status || e.Code != c.code || e.Field != c.field || e.Message == "" {
			t.Errorf("%s: %d %+v, want %d %q field %q", c.name, st, e, c.status, c.code, c.field)
		}
	}
}
