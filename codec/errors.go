package codec

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every decoding failure wraps one of them, usually inside a
// *DecodeError that says which field failed and at which byte offset, so
// callers test with errors.Is and report with the error's message.
var (
	// ErrTruncated means the input ended before the value it announces.
	ErrTruncated = errors.New("lazymem: codec: truncated input")
	// ErrCorrupt means the input is malformed: an impossible length or count,
	// a malformed or non-minimal varint, unsorted metadata keys, trailing
	// bytes inside a record body.
	ErrCorrupt = errors.New("lazymem: codec: corrupt input")
	// ErrVersion means a record carries a format version this build does not
	// know. It is not corruption: a newer writer may have produced it.
	ErrVersion = errors.New("lazymem: codec: unknown format version")
	// ErrChecksum means a CRC32-C check failed. It wraps ErrCorrupt.
	ErrChecksum = fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	// ErrDimension means a vector file holds a negative, zero or too large
	// dimension, or a dimension other than the one the caller fixed.
	// It wraps ErrCorrupt.
	ErrDimension = fmt.Errorf("%w: bad vector dimension", ErrCorrupt)
	// ErrInvalidRecord means a Record cannot be encoded as given (see
	// Record.Validate).
	ErrInvalidRecord = errors.New("lazymem: codec: invalid record")
	// ErrInvalidVector means a vector cannot be written: empty, larger than
	// VecOptions.MaxDim, or not of the dimension the writer was fixed to.
	ErrInvalidVector = errors.New("lazymem: codec: invalid vector")
	// ErrInvalidOptions means a VecOptions field is out of range.
	ErrInvalidOptions = errors.New("lazymem: codec: invalid options")
)

// DecodeError is the typed error of every Decoder in this package: What names
// the field or structure being read and Offset is the byte offset, relative to
// the start of the input handed to the Decoder (the record's first byte for
// DecodeRecord, the stream's first byte for the vector readers), at which that
// field starts. Err is one of the sentinels above; errors.Is sees through.
//
// A caller that stores encoded values inside a larger file (a segment, an
// index block) adds its own base offset when it reports corruption.
type DecodeError struct {
	What   string
	Offset int
	Err    error
}

// Error reads like "lazymem: codec: truncated input: record text at byte 42".
func (e *DecodeError) Error() string {
	return fmt.Sprintf("%v: %s at byte %d", e.Err, e.What, e.Offset)
}

// Unwrap returns the sentinel.
func (e *DecodeError) Unwrap() error { return e.Err }

func decodeErr(what string, off int, err error) error {
	return &DecodeError{What: what, Offset: off, Err: err}
}
