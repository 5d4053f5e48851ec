package index

import (
	"errors"
	"fmt"
)

// Sentinel errors. Callers test them with errors.Is; the index wraps them with
// context using %w.
var (
	// ErrClosed is returned by every method called after Close.
	ErrClosed = errors.New("lazymem: index closed")
	// ErrIDRange is returned when a document id does not fit the 32-bit id
	// space of the index (ids must be < 1<<32 - 1: the documented 4G-record limit).
	ErrIDRange = errors.New("lazymem: index: document id out of range")
	// ErrIDOrder is returned when Add receives an id that is not strictly
	// greater than every id already indexed.
	ErrIDOrder = errors.New("lazymem: index: document ids must be strictly increasing")
	// ErrNilDoc is returned when Add receives a nil document.
	ErrNilDoc = errors.New("lazymem: index: nil document")
	// ErrOptions is returned by Options.Validate.
	ErrOptions = errors.New("lazymem: index: invalid options")
	// ErrAnalyzerChanged is returned by Open when the persisted segments were
	// built with other analysis rules and there is no Source to rebuild from.
	ErrAnalyzerChanged = errors.New("lazymem: index: analyzer changed")
	// ErrReservedKey is returned when a metadata key starts with
	// ReservedKeyPrefix.
	ErrReservedKey = errors.New("lazymem: index: metadata key starts with the reserved NUL byte")
	// ErrEmptyKey is returned when a metadata key is empty.
	ErrEmptyKey = errors.New("lazymem: index: empty metadata key")
	// ErrBackground wraps the errors of background flushes and merges
	// handed to Options.OnBackgroundError.
	ErrBackground = errors.New("lazymem: index: background work failed")
	// ErrCorrupt is the sentinel inside every CorruptionError.
	ErrCorrupt = errors.New("lazymem: index: corrupt file")
)

// CorruptionError reports a damaged index file: which file, at which byte
// offset, and why. It wraps ErrCorrupt. Index files are derived data: the
// repair for a corrupt segment is to drop it and rebuild its id range from
// the log, which Open does when Options.RepairCorrupt is set.
type CorruptionError struct {
	File   string
	Offset int64
	Err    error
}

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("lazymem: index: corrupt file %s at offset %d: %v", e.File, e.Offset, e.Err)
}

// Unwrap returns both ErrCorrupt and the underlying cause.
func (e *CorruptionError) Unwrap() []error { return []error{ErrCorrupt, e.Err} }
