package zhmem

import "errors"

var (
	// ErrFormat is wrapped by every error about a data file that does not
	// parse or breaks a rule of the format; the message names the file, the
	// line and the field.
	ErrFormat = errors.New("lazymem: zhmem: bad format")
	// ErrConfig is wrapped by every error about an Evaluate Config.
	ErrConfig = errors.New("lazymem: zhmem: bad config")
)
