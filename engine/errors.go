package engine

import (
	"errors"
	"strings"
)

// Sentinel errors. Validation failures are *FieldError values that wrap
// ErrInvalid and one of the reason sentinels below, so a caller can test
// errors.Is(err, ErrInvalid) (bad input, nothing was written) or the precise
// reason, and still print a message that names the field:
//
//	lazymem: records[3].agent: missing
var (
	// ErrInvalid is wrapped by every validation error.
	ErrInvalid = errors.New("lazymem: invalid input")

	// ErrMissing: a required field is empty.
	ErrMissing = errors.New("lazymem: missing")
	// ErrTooLong: a string is over its byte limit.
	ErrTooLong = errors.New("lazymem: too long")
	// ErrTooMany: a list or map has more entries than allowed.
	ErrTooMany = errors.New("lazymem: too many")
	// ErrEmpty: a metadata key or value, or a list element, is empty.
	ErrEmpty = errors.New("lazymem: empty")
	// ErrUTF8: a string is not valid UTF-8.
	ErrUTF8 = errors.New("lazymem: invalid UTF-8")
	// ErrRange: a number or a time range is out of range (since > until, K < 1).
	ErrRange = errors.New("lazymem: out of range")
	// ErrReserved: a metadata key starts with the NUL byte the index
	// reserves for its own fields (index.ReservedKeyPrefix).
	ErrReserved = errors.New("lazymem: reserved")
	// ErrScope: a scoped handle (AgentDB) was asked about another agent.
	ErrScope = errors.New("lazymem: outside the handle's agent")
	// ErrExists: a path that must be new (a backup directory) is not.
	ErrExists = errors.New("lazymem: already exists")
	// ErrUnknown: an enumerated value (Mode, Fusion) is not one of the known ones.
	ErrUnknown = errors.New("lazymem: unknown value")

	// ErrOptions is wrapped by Options.Validate errors.
	ErrOptions = errors.New("lazymem: engine: invalid options")
	// ErrClosed is returned by every method called after Close.
	ErrClosed = errors.New("lazymem: engine: closed")
	// ErrNotFound is returned by Get for an id that was never assigned and
	// for a forgotten record: the two are indistinguishable.
	ErrNotFound = errors.New("lazymem: engine: record not found")
	// ErrDeleted is no longer returned: Get answers ErrNotFound for a
	// forgotten record, so that no caller can tell it from an id never
	// assigned. Kept so that code testing for it still compiles.
	ErrDeleted = errors.New("lazymem: engine: record deleted")
	// ErrNoEmbedder is returned by a lazy or dense Recall on a DB opened
	// without an embedder.
	ErrNoEmbedder = errors.New("lazymem: engine: no embedder configured")
	// ErrEmbed wraps a failure of the embedder or a vector of the wrong
	// length.
	ErrEmbed = errors.New("lazymem: engine: embedding failed")
	// ErrCorrupt wraps a stored record that does not decode.
	ErrCorrupt = errors.New("lazymem: engine: corrupt record")
	// ErrFormat is returned by Open for a store whose FORMAT marker is
	// damaged or names a format this engine does not read.
	ErrFormat = errors.New("lazymem: engine: unsupported store format")
)

// FieldError is a validation error: which field (a path such as
// "record.meta[\"tags\"][2]" or "query.k") and why (one of the reason
// sentinels).
type FieldError struct {
	Field  string
	Reason error  // ErrMissing, ErrTooLong, ...
	Detail string // optional: limits, offending value
}

// Error reads "lazymem: record.agent: missing" or, with a detail,
// "lazymem: record.text: too long (70000 bytes, limit 65536)".
func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString("lazymem: ")
	b.WriteString(e.Field)
	b.WriteString(": ")
	b.WriteString(strings.TrimPrefix(e.Reason.Error(), "lazymem: "))
	if e.Detail != "" {
		b.WriteString(" (")
		b.WriteString(e.Detail)
		b.WriteString(")")
	}
	return b.String()
}

// Unwrap returns ErrInvalid and the reason.
func (e *FieldError) Unwrap() []error { return []error{ErrInvalid, e.Reason} }

func fieldErr(field string, reason error, detail string) error {
	return &FieldError{Field: field, Reason: reason, Detail: detail}
}

// ErrBudget is returned by a recall that would do more work than a limit of
// the query allows (Query.MaxDenseScan); the message names the limit.
var ErrBudget = errors.New("lazymem: engine: over budget")

// ErrQuota is returned by an AgentDB append that would pass the agent's
// Quota; the message names the agent, the usage and the limit. Nothing of
// the batch is written.
var ErrQuota = errors.New("lazymem: engine: quota exceeded")

// ErrPurge is returned by Compact when a forgotten record's bytes could not
// be proved gone from a file of the store.
var ErrPurge = errors.New("lazymem: engine: purge incomplete")

// ErrLocked is wrapped by the *LockedError Open returns for a store that
// another DB (another process, or this one) has open.
var ErrLocked = errors.New("lazymem: engine: store is locked")

// ErrNoStore is returned by Open with Options.MustExist for a directory
// that holds no store.
var ErrNoStore = errors.New("lazymem: engine: not a lazymem store (no FORMAT marker, no log)")
