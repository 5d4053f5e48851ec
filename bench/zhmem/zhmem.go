package zhmem

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// KeyField is the metadata key naming a record for grading.
const KeyField = "key"

// Record is one chat turn as stored in chats.jsonl.
type Record struct {
	Agent   string              `json:"agent"`
	Session string              `json:"session"`
	Role    string              `json:"role"`
	Time    time.Time           `json:"time"`
	Text    string              `json:"text"`
	Meta    map[string][]string `json:"meta"`
}

// Key is the record's grading key, meta.key.
func (r *Record) Key() string { return r.Meta[KeyField][0] }

// Question is one probing question of questions.jsonl.
type Question struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	// Kind: "lexical", "paraphrase", "update" or "multi" (README.md);
	// "current", "earlier" or "control" in newer-zh and newer-en.
	Kind     string   `json:"kind"`
	Evidence []string `json:"evidence"`
	Note     string   `json:"note,omitempty"`
}

// Set is a loaded, checked data set.
type Set struct {
	Records   []Record
	Questions []Question
	// Agent is the one agent every record belongs to.
	Agent string
	// Last is the time of the latest record.
	Last time.Time
}

// Load reads chats.jsonl and questions.jsonl from dir and checks them.
func Load(dir string) (*Set, error) {
	s := &Set{}
	cp, qp := filepath.Join(dir, "chats.jsonl"), filepath.Join(dir, "questions.jsonl")
	if err := readJSONL(cp, &s.Records); err != nil {
		return nil, err
	}
	if err := readJSONL(qp, &s.Questions); err != nil {
		return nil, err
	}
	if len(s.Records) == 0 {
		return nil, fmt.Errorf("%w: %s: no records", ErrFormat, cp)
	}
	if len(s.Questions) == 0 {
		return nil, fmt.Errorf("%w: %s: no questions", ErrFormat, qp)
	}
	keys := make(map[string]bool, len(s.Records))
	for i := range s.Records {
		r := &s.Records[i]
		at := fmt.Sprintf("%s: records[%d]", cp, i)
		switch {
		case r.Agent == "":
			return nil, fmt.Errorf("%w: %s.agent: missing", ErrFormat, at)
		case s.Agent != "" && r.Agent != s.Agent:
			return nil, fmt.Errorf("%w: %s.agent: %q, the set's agent is %q", ErrFormat, at, r.Agent, s.Agent)
		case strings.TrimSpace(r.Text) == "":
			return nil, fmt.Errorf("%w: %s.text: empty", ErrFormat, at)
		case r.Time.IsZero():
			return nil, fmt.Errorf("%w: %s.time: missing", ErrFormat, at)
		case len(r.Meta[KeyField]) != 1 || r.Meta[KeyField][0] == "":
			return nil, fmt.Errorf("%w: %s.meta.key: want one non-empty value, got %q", ErrFormat, at, r.Meta[KeyField])
		case keys[r.Key()]:
			return nil, fmt.Errorf("%w: %s.meta.key: %q used twice", ErrFormat, at, r.Key())
		}
		s.Agent = r.Agent
		keys[r.Key()] = true
		if r.Time.After(s.Last) {
			s.Last = r.Time
		}
	}
	ids := make(map[string]bool, len(s.Questions))
	for i, q := range s.Questions {
		at := fmt.Sprintf("%s: questions[%d]", qp, i)
		switch {
		case q.ID == "":
			return nil, fmt.Errorf("%w: %s.id: missing", ErrFormat, at)
		case ids[q.ID]:
			return nil, fmt.Errorf("%w: %s.id: %q used twice", ErrFormat, at, q.ID)
		case strings.TrimSpace(q.Text) == "":
			return nil, fmt.Errorf("%w: %s (%s).text: empty", ErrFormat, at, q.ID)
		case q.Kind == "":
			return nil, fmt.Errorf("%w: %s (%s).kind: missing", ErrFormat, at, q.ID)
		case len(q.Evidence) == 0:
			return nil, fmt.Errorf("%w: %s (%s).evidence: empty", ErrFormat, at, q.ID)
		}
		ids[q.ID] = true
		seen := map[string]bool{}
		for j, k := range q.Evidence {
			if !keys[k] {
				return nil, fmt.Errorf("%w: %s (%s).evidence[%d]: %q names no record", ErrFormat, at, q.ID, j, k)
			}
			if seen[k] {
				return nil, fmt.Errorf("%w: %s (%s).evidence[%d]: %q listed twice", ErrFormat, at, q.ID, j, k)
			}
			seen[k] = true
		}
	}
	return s, nil
}

// readJSONL decodes one value per non-blank line of path into *dst,
// rejecting unknown fields so a misspelt field is an error, not a silent
// zero.
func readJSONL[T any](path string, dst *[]T) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrFormat, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		var v T
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("%w: %s:%d: %w", ErrFormat, path, n, err)
		}
		if dec.More() {
			return fmt.Errorf("%w: %s:%d: more than one value on the line", ErrFormat, path, n)
		}
		*dst = append(*dst, v)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrFormat, path, err)
	}
	return nil
}
