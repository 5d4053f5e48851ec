package wire

import (
	"errors"
	"strings"
)

// ErrInvalid is wrapped by every decoding error.
var ErrInvalid = errors.New("lazymem: invalid JSON input")

// Error is a decoding error: the field (a path such as "records[2].time" or
// "meta.tags"; "" for the value as a whole) and what is wrong with it.
type Error struct {
	Field string
	Msg   string
}

// Error reads `field "records[2].time": "yesterday" is not an RFC 3339
// time`, or the message alone when no field is at fault.
func (e *Error) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return `field "` + e.Field + `": ` + e.Msg
}

// Unwrap returns ErrInvalid.
func (e *Error) Unwrap() error { return ErrInvalid }

func fieldErr(field, msg string) *Error { return &Error{Field: field, Msg: msg} }

// prefixed returns err with its field under prefix ("records[2]" + "time").
func prefixed(err error, prefix string) error {
	var e *Error
	if prefix == "" || !errors.As(err, &e) {
		return err
	}
	f := prefix
	if e.Field != "" {
		f += "." + e.Field
	}
	return &Error{Field: f, Msg: e.Msg}
}

// Truncate cuts s to at most n bytes on a rune boundary, marking the cut:
// error messages quote what they were given without echoing a megabyte.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
