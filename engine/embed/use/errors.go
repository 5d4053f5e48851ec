package use

import "errors"

// Sentinel errors. Every error returned by this package wraps one of them
// (some wrap an io/fs error too), so callers can test with errors.Is and
// still read the detail, which always names the file at fault.
var (
	// ErrOptions reports an invalid Options field; the message names it.
	ErrOptions = errors.New("lazymem: use: invalid options")
	// ErrMissing reports a model file that cannot be read (absent
	// directory, missing shard, permission); the message names the file
	// and says how to fetch the model.
	ErrMissing = errors.New("lazymem: use: model file missing")
	// ErrCorrupt reports a model file that does not parse or does not
	// match the model this package runs: malformed JSON, a weight of the
	// wrong shape, shards shorter or longer than the manifest says.
	ErrCorrupt = errors.New("lazymem: use: model file corrupt")
	// ErrUnsupported reports a well-formed model this package cannot run:
	// quantized weights, an unknown dtype, a graph without the expected
	// weights.
	ErrUnsupported = errors.New("lazymem: use: unsupported model")
)
