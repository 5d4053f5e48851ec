package bench

import "errors"

// Sentinel errors of the bench package. Callers match them with errors.Is;
// functions wrap them with %w and the context (engine, query ordinal, path).
var (
	// ErrNoQueries is returned when a measurement is asked to run over an
	// empty query set: a latency percentile of nothing is meaningless.
	ErrNoQueries = errors.New("lazymem: bench: no queries")

	// ErrBadK is returned when a top-k size is not positive.
	ErrBadK = errors.New("lazymem: bench: k must be positive")

	// ErrBadID is returned when an engine reports a document id that does
	// not parse back into a record id.
	ErrBadID = errors.New("lazymem: bench: bad document id")

	// ErrNotSteady is returned when Bleve's background persister and merger
	// did not settle within BleveOptions.SettleTimeout.
	ErrNotSteady = errors.New("lazymem: bench: bleve did not reach a steady state")

	// ErrOptions is returned by Validate for an unusable configuration.
	ErrOptions = errors.New("lazymem: bench: invalid options")

	// ErrClosed is returned by an engine used after Close.
	ErrClosed = errors.New("lazymem: bench: engine closed")
)
