package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/lazymem/lazymem/engine"
)

// Record is the JSON form of an engine.Record on input. Meta values may be
// a string or an array of strings.
type Record struct {
	Time    *string                    `json:"time"`
	Agent   string                     `json:"agent"`
	Session string                     `json:"session"`
	Role    string                     `json:"role"`
	Text    *string                    `json:"text"`
	Meta    map[string]json.RawMessage `json:"meta"`
}

// ParseRecord decodes one JSON object into a record. A missing time is
// now; a missing text is an error (an empty one is the engine's to
// reject). Errors are *Error naming the field.
func ParseRecord(data []byte, now time.Time) (engine.Record, error) {
	return scanRecord(data, now)
}

// ParseRecords decodes a body holding either one record object or
// {"records": [record, ...]}. Errors name the record ("records[3].time").
// An empty list is an error: there is nothing to append.
func ParseRecords(data []byte, now time.Time) ([]engine.Record, error) {
	return scanRecords(data, now)
}

// DecodeStrict decodes exactly one JSON object of data into v as the
// package decodes its own bodies: unknown fields, wrong types, a second
// value and invalid UTF-8 are *Error naming the field ("ids", "since").
// what names v in messages ("a selector").
func DecodeStrict(data []byte, v any, what string) error { return decodeStrict(data, v, what) }

// decodeStrict decodes exactly one JSON value of data into v, rejecting
// invalid UTF-8, unknown fields and trailing values. what names v in
// messages ("a record").
func decodeStrict(data []byte, v any, what string) error {
	if !utf8.Valid(data) {
		return fieldErr("", "not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonErr(err, what)
	}
	for _, c := range data[dec.InputOffset():] {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return fieldErr("", "more than one JSON value")
		}
	}
	return nil
}

// jsonErr turns an encoding/json error into an *Error naming the field.
func jsonErr(err error, what string) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fieldErr(te.Field, fmt.Sprintf("want %s, got JSON %s", jsonType(te.Type.String()), te.Value))
	}
	if msg := err.Error(); len(msg) > 0 {
		const unknown = `json: unknown field "`
		if len(msg) > len(unknown) && msg[:len(unknown)] == unknown {
			name := msg[len(unknown) : len(msg)-1]
			return fieldErr(name, "unknown field")
		}
	}
	return fieldErr("", fmt.Sprintf("not a JSON object of %s: %v", what, err))
}

// jsonType names a Go type the way a JSON writer thinks of it.
func jsonType(goType string) string {
	switch goType {
	case "string", "*string":
		return "a string"
	case "int", "*int":
		return "an integer"
	case "float64", "*float64":
		return "a number"
	case "bool", "*bool":
		return "true or false"
	case "[]string":
		return "an array of strings"
	case "uint64":
		return "a non-negative integer"
	case "[]uint64":
		return "an array of record ids"
	}
	return goType
}

func parseTime(field, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fieldErr(field, fmt.Sprintf("%q is not an RFC 3339 time (like 2026-05-01T14:03:00Z)", Truncate(s, 60)))
	}
	// An explicit time must be one the log can store: the zero time would
	// read as "now" and a time past the int64-nanosecond range would be
	// rewritten. Only an absent time means now.
	if t.IsZero() || t.Before(engine.MinTime) || t.After(engine.MaxTime) {
		return time.Time{}, fieldErr(field, fmt.Sprintf("%s is outside the storable range %s .. %s",
			Truncate(s, 60), engine.MinTime.Format(time.RFC3339), engine.MaxTime.Format(time.RFC3339)))
	}
	return t, nil
}

// parseMeta reads an object of string to string or array of strings.
func parseMeta(field string, m map[string]json.RawMessage) (map[string][]string, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string][]string, len(m))
	// Keys in order, so that the error names the same one every time.
	for _, k := range slices.Sorted(maps.Keys(m)) {
		raw := m[k]
		var one string
		var many []string
		switch {
		case string(raw) == "null":
			// encoding/json would take null for "" without an error.
		case json.Unmarshal(raw, &one) == nil:
			out[k] = []string{one}
			continue
		case json.Unmarshal(raw, &many) == nil:
			out[k] = many
			continue
		}
		return nil, fieldErr(field+"."+k, "want a string or an array of strings, got "+Truncate(string(raw), 40))
	}
	return out, nil
}
