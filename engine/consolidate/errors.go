package consolidate

import "errors"

// Sentinel errors. Every error returned by this package wraps one of them, so
// callers test with errors.Is and read the detail (the field, the problem) in
// the message.
var (
	// ErrInvalidUnit reports a Unit that cannot be stored as given; the
	// message names the field and the problem.
	ErrInvalidUnit = errors.New("lazymem: consolidate: invalid unit")
	// ErrInvalidInput reports an Input a consolidator refuses (no records,
	// a record without id or text, a duplicate id); the message names it.
	ErrInvalidInput = errors.New("lazymem: consolidate: invalid input")
	// ErrOptions reports an invalid Options or LLMOptions field.
	ErrOptions = errors.New("lazymem: consolidate: invalid options")
	// ErrUnavailable reports an LLM endpoint that cannot be reached
	// (connection refused, timeout); the message names the URL.
	ErrUnavailable = errors.New("lazymem: consolidate: endpoint unavailable")
	// ErrHTTP reports an HTTP error status from the LLM endpoint, with the
	// server's own message.
	ErrHTTP = errors.New("lazymem: consolidate: http error")
	// ErrResponse reports an LLM response that is not valid JSON or does
	// not match the unit schema (unknown or missing field, wrong type,
	// a source id not in the input). The whole response is rejected.
	ErrResponse = errors.New("lazymem: consolidate: bad response")
)
