package eager

import "errors"

// Sentinel errors. Every error returned by this package wraps one of them.
var (
	// ErrOptions reports an invalid Options field; the message names it.
	ErrOptions = errors.New("lazymem: eager: invalid options")
	// ErrEmbed wraps a failure of the embedder, or vectors of the wrong
	// count or length.
	ErrEmbed = errors.New("lazymem: eager: embedding failed")
	// ErrBackend wraps an error (or a recovered panic) of the vector store
	// behind a baseline.
	ErrBackend = errors.New("lazymem: eager: backend failed")
	// ErrClosed is returned by a baseline used after Close.
	ErrClosed = errors.New("lazymem: eager: closed")
)
