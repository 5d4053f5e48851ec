package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/lazymem/lazymem/engine"
)

// jsonRecord is one line of an ingest file.
type jsonRecord struct {
	Time    *string                    `json:"time"`
	Agent   string                     `json:"agent"`
	Session string                     `json:"session"`
	Role    string                     `json:"role"`
	Text    *string                    `json:"text"`
	Meta    map[string]json.RawMessage `json:"meta"`
}

// parseLine decodes one JSONL line into a record. Fields: time (RFC 3339;
// absent: now), agent, session, role, text, meta (object of string to
// string or array of strings). Errors name the field. The engine checks
// the rest (required fields, sizes, UTF-8) when the record is appended.
func parseLine(line []byte, now time.Time) (engine.Record, error) {
	var r engine.Record
	line = bytes.TrimSpace(line)
	if !utf8.Valid(line) {
		return r, errors.New("line is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	var jr jsonRecord
	if err := dec.Decode(&jr); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return r, fmt.Errorf("field %q: want %s, got JSON %s", te.Field, te.Type, te.Value)
		}
		return r, fmt.Errorf("not a JSON object of a record: %v", err)
	}
	if dec.More() {
		return r, errors.New("more than one JSON value on the line")
	}
	r.Agent, r.Session, r.Role = jr.Agent, jr.Session, jr.Role
	if jr.Text == nil {
		return r, errors.New(`field "text": missing`)
	}
	r.Text = *jr.Text
	if jr.Time == nil {
		r.Time = now
	} else {
		t, err := time.Parse(time.RFC3339Nano, *jr.Time)
		if err != nil {
			return r, fmt.Errorf(`field "time": %q is not an RFC 3339 time (like 2026-05-01T14:03:00Z)`, *jr.Time)
		}
		r.Time = t
	}
	if len(jr.Meta) > 0 {
		r.Meta = make(map[string][]string, len(jr.Meta))
		for k, raw := range jr.Meta {
			var one string
			if err := json.Unmarshal(raw, &one); err == nil {
				r.Meta[k] = []string{one}
				continue
			}
			var many []string
			if err := json.Unmarshal(raw, &many); err != nil {
				return r, fmt.Errorf(`field "meta.%s": want a string or an array of strings, got %s`, k, truncate(string(raw), 40))
			}
			r.Meta[k] = many
		}
	}
	return r, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8Valid(s string) bool { return utf8.ValidString(s) }
