package segment

import (
	"errors"
	"fmt"
)

var (
	// ErrNotFound is returned for an id that was never assigned.
	ErrNotFound = errors.New("lazymem: segment: record not found")
	// ErrDeleted is returned for an id whose record was deleted.
	ErrDeleted = errors.New("lazymem: segment: record deleted")
	// ErrClosed is returned by every method called after Close.
	ErrClosed = errors.New("lazymem: segment: log is closed")
	// ErrTooLarge is returned for a payload above Options.MaxRecordBytes.
	ErrTooLarge = errors.New("lazymem: segment: record too large")
	// ErrEmpty is returned for an append of zero records.
	ErrEmpty = errors.New("lazymem: segment: no records to append")
	// ErrChecksum is wrapped by a CorruptionError when a stored checksum does not match.
	ErrChecksum = errors.New("lazymem: segment: checksum mismatch")
	// ErrFormat is wrapped by a CorruptionError when stored bytes do not parse.
	ErrFormat = errors.New("lazymem: segment: malformed stored data")
	// ErrDiskFull is returned by writes that failed for want of disk space;
	// the error also wraps the system's (errors.Is(err, syscall.ENOSPC)).
	// Reads go on; the next write after space returns reopens Pebble and
	// works again.
	ErrDiskFull = errors.New("lazymem: segment: disk full")
	// ErrFailed is returned by writes after Pebble reported a failure it
	// cannot recover from in place (a WAL or MANIFEST write or sync that
	// failed for a reason other than space). Reads go on; writes need the
	// log closed and opened again.
	ErrFailed = errors.New("lazymem: segment: log failed; close and reopen it")
	// ErrStopped is wrapped, with ErrFailed, by a fatal report after which
	// Pebble's goroutine was parked (Parked): the store takes no more
	// writes and cannot be closed; only a restart of the process reopens
	// it (every acknowledged record is in the log). Reads go on.
	ErrStopped = errors.New("lazymem: segment: the storage engine stopped; restart the process")
)

// CorruptionError reports stored data that failed verification. Segment is
// the first record id of the damaged segment (or the tail record's id) and
// Offset the byte offset inside the stored value where the problem was found.
// Repair consumes it.
//
// Offset is -1 when Pebble found the damage (a block or WAL checksum) and
// the offset inside the value is unknown. A damage found by Open in
// Pebble's own files names no segment (Segment 0).
type CorruptionError struct {
	Segment uint64
	Offset  int64
	Err     error
}

func (e *CorruptionError) Error() string {
	if e.Offset < 0 {
		return fmt.Sprintf("lazymem: segment: corruption in segment %d (offset unknown): %v", e.Segment, e.Err)
	}
	return fmt.Sprintf("lazymem: segment: corruption in segment %d at offset %d: %v", e.Segment, e.Offset, e.Err)
}

func (e *CorruptionError) Unwrap() error { return e.Err }

// IsCorruption reports whether err is, or wraps, a *CorruptionError.
func IsCorruption(err error) bool {
	var ce *CorruptionError
	return errors.As(err, &ce)
}
