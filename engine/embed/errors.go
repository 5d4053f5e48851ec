package embed

import "errors"

// Sentinel errors. Every error returned by this package wraps one of them, so
// callers can test with errors.Is and still read the detail in the message.
var (
	// ErrOptions reports an invalid Options field; the message names it.
	ErrOptions = errors.New("lazymem: embed: invalid options")
	// ErrUnavailable reports an endpoint that cannot be reached (connection
	// refused, DNS failure, timeout); the message names the URL.
	ErrUnavailable = errors.New("lazymem: embed: endpoint unavailable")
	// ErrHTTP reports an HTTP error status from an embedding endpoint; the
	// message carries the status and the server's own error message.
	ErrHTTP = errors.New("lazymem: embed: http error")
	// ErrResponse reports a response that does not decode or does not match
	// the request (malformed JSON, wrong count, bad or duplicate index).
	ErrResponse = errors.New("lazymem: embed: bad response")
	// ErrDim reports a vector whose length differs from the expected
	// dimension; the message names expected and got.
	ErrDim = errors.New("lazymem: embed: wrong dimension")
)
