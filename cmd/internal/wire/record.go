package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
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
	var jr Record
	if err := decodeStrict(data, &jr, "a record"); err != nil {
		return engine.Record{}, err
	}
	return jr.toEngine(now)
}

func (jr *Record) toEngine(now time.Time) (engine.Record, error) {
	r := engine.Record{Agent: jr.Agent, Session: jr.Session, Role: jr.Role}
	if jr.Text == nil {
		return r, fieldErr("text", "missing")
	}
	r.Text = *jr.Text
	r.Time = now
	if jr.Time != nil {
		t, err := parseTime("time", *jr.Time)
		if err != nil {
			return r, err
		}
		r.Time = t
	}
	meta, err := parseMeta("meta", jr.Meta)
	if err != nil {
		return r, err
	}
	r.Meta = meta
	return r, nil
}

// ParseRecords decodes a body holding either one record object or
// {"records": [record, ...]}. Errors name the record ("records[3].time").
// An empty list is an error: there is nothing to append.
func ParseRecords(data []byte, now time.Time) ([]engine.Record, error) {
	var probe struct {
		Records json.RawMessage `json:"records"`
	}
	// A record never has a "records" field (strict decoding rejects it),
	// so its presence tells the two forms apart.
	if err := json.Unmarshal(bytes.TrimSpace(data), &probe); err != nil || probe.Records == nil {
		r, err := ParseRecord(data, now)
		if err != nil {
			return nil, err
		}
		return []engine.Record{r}, nil
	}
	var batch struct {
		Records []json.RawMessage `json:"records"`
	}
	if err := decodeStrict(data, &batch, `{"records": [...]}`); err != nil {
		return nil, err
	}
	if len(batch.Records) == 0 {
		return nil, fieldErr("records", "empty: want at least one record")
	}
	out := make([]engine.Record, len(batch.Records))
	for i, raw := range batch.Records {
		r, err := ParseRecord(raw, now)
		if err != nil {
			return nil, prefixed(err, "records["+strconv.Itoa(i)+"]")
		}
		out[i] = r
	}
	return out, nil
}

// decodeStrict decodes exactly one JSON value of data into v, rejecting
// invalid UTF-8, unknown fields and trailing values. what names v in
// messages ("a record").
func decodeStrict(data []byte, v any, what string) error {
	data = bytes.TrimSpace(data)
	if !utf8.Valid(data) {
		return fieldErr("", "not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonErr(err, what)
	}
	if dec.More() {
		return fieldErr("", "more than one JSON value")
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
	}
	return goType
}

func parseTime(field, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fieldErr(field, fmt.Sprintf("%q is not an RFC 3339 time (like 2026-05-01T14:03:00Z)", truncate(s, 60)))
	}
	return t, nil
}

// parseMeta reads an object of string to string or array of strings.
func parseMeta(field string, m map[string]json.RawMessage) (map[string][]string, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string][]string, len(m))
	for k, raw := range m {
		var one string
		if err := json.Unmarshal(raw, &one); err == nil {
			out[k] = []string{one}
			continue
		}
		var many []string
		if err := json.Unmarshal(raw, &many); err != nil {
			return nil, fieldErr(field+"."+k, "want a string or an array of strings, got "+truncate(string(raw), 40))
		}
		out[k] = many
	}
	return out, nil
}
