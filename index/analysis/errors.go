package analysis

import (
	"errors"
	"fmt"
)

// Sentinel errors. Test for them with errors.Is; the concrete error returned
// by ParseQuery is a *QueryError that names the byte position.
var (
	// ErrInvalidOptions reports an Options value that Validate rejects.
	ErrInvalidOptions = errors.New("lazymem: invalid analysis options")

	// ErrUnclosedQuote reports a '"' without its closing '"'.
	ErrUnclosedQuote = errors.New("lazymem: query: unclosed quote")
	// ErrEmptyPhrase reports `""`: a phrase with nothing inside.
	ErrEmptyPhrase = errors.New("lazymem: query: empty phrase")
	// ErrEmptyKey reports a filter with nothing before the ':' (":db").
	ErrEmptyKey = errors.New("lazymem: query: empty filter key")
	// ErrEmptyValue reports a filter whose quoted value is empty (`tag:""`).
	ErrEmptyValue = errors.New("lazymem: query: empty filter value")
	// ErrInvalidUTF8 reports a query string that is not valid UTF-8.
	ErrInvalidUTF8 = errors.New("lazymem: query: invalid UTF-8")
	// ErrQueryTooLong reports a query longer than MaxQueryLen bytes.
	ErrQueryTooLong = errors.New("lazymem: query: too long")
)

// QueryError is the error ParseQuery returns. Pos is the byte offset in the
// query string where the problem starts; Err is one of the sentinels above.
type QueryError struct {
	Pos int
	Err error
	// Detail is an optional human hint (for instance the offending key).
	Detail string
}

func (e *QueryError) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("%v at byte %d: %s", e.Err, e.Pos, e.Detail)
	}
	return fmt.Sprintf("%v at byte %d", e.Err, e.Pos)
}

func (e *QueryError) Unwrap() error { return e.Err }
