package locomo

import "errors"

var (
	// ErrFormat is wrapped by every error about a file that is not valid
	// LoCoMo JSON; the message names the field and the value at fault.
	ErrFormat = errors.New("lazymem: locomo: bad format")
	// ErrNoFiles is returned by Load for a directory without *.json files.
	ErrNoFiles = errors.New("lazymem: locomo: no .json files")
)
