package wire

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/lazymem/lazymem/engine"
)

// The record decoder: one pass over the body, no reflection, strings taken
// without a copy when they hold no escape. It accepts exactly what the
// encoding/json decoding of Record (in reference_test.go) accepts and gives
// the same records: FuzzRecordsMatchReference checks it. That includes
// encoding/json's quirks: keys match case-insensitively, a repeated key's
// last value wins (a repeated "meta" object adds to the first), null leaves
// a string field as it was and unsets time, text and meta.
//
// Profile (BenchmarkParseRecords, 1000 workload records): encoding/json
// decoded the body four times (form probe, batch, each record, each meta
// value) at 72 allocations a record, 45k records/s.

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

type scanner struct {
	data []byte
	// text is data as one string: a string value without escapes is a
	// substring of it, not a copy of its own (profile: str's allocations
	// were a quarter of the bytes).
	text  string
	pos   int
	depth int
}

func newScanner(data []byte) *scanner { return &scanner{data: data, text: string(data)} }

// syntaxErr is a malformed body: the reference reports these as "not a
// JSON object of a record".
func (s *scanner) syntaxErr(what string) error {
	return fieldErr("", fmt.Sprintf("not a JSON object of a record: %s at byte %d", what, s.pos))
}

func (s *scanner) ws() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.pos >= len(s.data) {
		return 0
	}
	return s.data[s.pos]
}

func (s *scanner) expect(c byte) error {
	if s.peek() != c {
		return s.syntaxErr(fmt.Sprintf("want %q", c))
	}
	s.pos++
	return nil
}

// members reads the members of the object whose '{' is next: for each,
// the key, then value reads the value.
func (s *scanner) members(value func(key string) error) error {
	return s.seq('{', '}', func() error {
		if s.peek() != '"' {
			return s.syntaxErr("want a key")
		}
		key, err := s.str()
		if err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		return value(key)
	})
}

// elements reads the array whose '[' is next, calling value for each
// element.
func (s *scanner) elements(value func() error) error { return s.seq('[', ']', value) }

// seq reads open, then items separated by commas, then end.
func (s *scanner) seq(open, end byte, item func() error) error {
	if err := s.expect(open); err != nil {
		return err
	}
	if s.peek() == end {
		s.pos++
		return nil
	}
	for {
		if err := item(); err != nil {
			return err
		}
		switch s.peek() {
		case ',':
			s.pos++
		case end:
			s.pos++
			return nil
		default:
			return s.syntaxErr("want , or " + string(end))
		}
	}
}

// kind names the JSON value starting at c, for type errors.
func kind(c byte) string {
	switch c {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// str reads a string; the caller has seen '"'.
func (s *scanner) str() (string, error) {
	s.pos++ // opening quote
	start := s.pos
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			out := s.text[start:s.pos]
			s.pos++
			return out, nil
		case c == '\\':
			return s.strSlow(start)
		case c < 0x20:
			return "", s.syntaxErr("control character in string")
		}
		s.pos++
	}
	return "", s.syntaxErr("unterminated string")
}

// strSlow finishes a string holding escapes, decoding them as
// encoding/json does (a lone surrogate becomes U+FFFD).
func (s *scanner) strSlow(start int) (string, error) {
	var b strings.Builder
	b.Write(s.data[start:s.pos])
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			return b.String(), nil
		case c < 0x20:
			return "", s.syntaxErr("control character in string")
		case c != '\\':
			b.WriteByte(c)
			s.pos++
			continue
		}
		if s.pos+1 >= len(s.data) {
			break
		}
		e := s.data[s.pos+1]
		s.pos += 2
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := s.u4()
			if !ok {
				return "", s.syntaxErr(`bad \u escape`)
			}
			if utf16.IsSurrogate(r) {
				save := s.pos
				if s.pos+1 < len(s.data) && s.data[s.pos] == '\\' && s.data[s.pos+1] == 'u' {
					s.pos += 2
					if r1, ok := s.u4(); ok {
						if d := utf16.DecodeRune(r, r1); d != unicode.ReplacementChar {
							b.WriteRune(d)
							continue
						}
					}
				}
				s.pos = save
				r = unicode.ReplacementChar
			}
			b.WriteRune(r)
		default:
			return "", s.syntaxErr("bad escape")
		}
	}
	return "", s.syntaxErr("unterminated string")
}

func (s *scanner) u4() (rune, bool) {
	if s.pos+4 > len(s.data) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(s.data[s.pos:s.pos+4]), 16, 32)
	if err != nil || s.data[s.pos] == '+' || s.data[s.pos] == '-' {
		return 0, false
	}
	s.pos += 4
	return rune(v), true
}

// skip reads and discards one value of any kind, checking its syntax.
func (s *scanner) skip() error {
	switch c := s.peek(); c {
	case '"':
		_, err := s.str()
		return err
	case '{', '[':
		s.depth++
		if s.depth > maxDepth {
			return s.syntaxErr("nested too deep")
		}
		var err error
		if c == '{' {
			err = s.members(func(string) error { return s.skip() })
		} else {
			err = s.elements(s.skip)
		}
		s.depth--
		return err
	case 't':
		return s.lit("true")
	case 'f':
		return s.lit("false")
	case 'n':
		return s.lit("null")
	case 0:
		return s.syntaxErr("unexpected end")
	default:
		return s.number()
	}
}

func (s *scanner) lit(w string) error {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(w)) {
		return s.syntaxErr("bad literal")
	}
	s.pos += len(w)
	return nil
}

// number checks JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() error {
	d := s.data
	p := s.pos
	digits := func() int {
		n := 0
		for p < len(d) && d[p] >= '0' && d[p] <= '9' {
			p++
			n++
		}
		return n
	}
	if p < len(d) && d[p] == '-' {
		p++
	}
	switch {
	case p < len(d) && d[p] == '0':
		p++
	case digits() == 0:
		return s.syntaxErr("bad value")
	}
	if p < len(d) && d[p] == '.' {
		p++
		if digits() == 0 {
			return s.syntaxErr("bad number")
		}
	}
	if p < len(d) && (d[p] == 'e' || d[p] == 'E') {
		p++
		if p < len(d) && (d[p] == '+' || d[p] == '-') {
			p++
		}
		if digits() == 0 {
			return s.syntaxErr("bad number")
		}
	}
	s.pos = p
	return nil
}

// field names a record key: its index in recordFields, or -1.
var recordFields = [...]string{"time", "agent", "session", "role", "text", "meta"}

func lookup(names []string, key string) int {
	for i, n := range names {
		if n == key {
			return i
		}
	}
	for i, n := range names {
		if strings.EqualFold(n, key) {
			return i
		}
	}
	return -1
}

// scanned is a record being decoded: the fields as encoding/json would
// leave them in Record.
type scanned struct {
	time, text           *string
	agent, session, role string
	meta                 map[string][]string
	metaBad              map[string]string // meta keys whose last value is not a string or array of strings: the raw value
	typeErr              error             // first type error (the reference reports it after checking the syntax)
}

func (s *scanner) typeErr(r *scanned, field, want string, c byte) {
	if r.typeErr == nil {
		r.typeErr = fieldErr(field, fmt.Sprintf("want %s, got JSON %s", want, kind(c)))
	}
}

// stringField reads a value for a string field: a string sets it, null
// leaves it, anything else is a type error.
func (s *scanner) stringField(r *scanned, field string, dst *string) error {
	switch c := s.peek(); c {
	case '"':
		v, err := s.str()
		*dst = v
		return err
	case 'n':
		return s.lit("null")
	default:
		s.typeErr(r, field, "a string", c)
		return s.skip()
	}
}

func (s *scanner) ptrField(r *scanned, field string, dst **string) error {
	switch c := s.peek(); c {
	case '"':
		v, err := s.str()
		*dst = &v
		return err
	case 'n':
		*dst = nil
		return s.lit("null")
	default:
		s.typeErr(r, field, "a string", c)
		return s.skip()
	}
}

// record reads one record object (or null, which leaves every field as
// it was).
func (s *scanner) record(r *scanned) error {
	switch c := s.peek(); c {
	case 'n':
		return s.lit("null")
	case '{':
	default:
		if r.typeErr == nil {
			r.typeErr = fieldErr("", "not a JSON object of a record: got JSON "+kind(c))
		}
		return s.skip()
	}
	return s.members(func(key string) error {
		switch lookup(recordFields[:], key) {
		case 0:
			return s.ptrField(r, "time", &r.time)
		case 1:
			return s.stringField(r, "agent", &r.agent)
		case 2:
			return s.stringField(r, "session", &r.session)
		case 3:
			return s.stringField(r, "role", &r.role)
		case 4:
			return s.ptrField(r, "text", &r.text)
		case 5:
			return s.metaField(r)
		}
		if r.typeErr == nil {
			r.typeErr = fieldErr(key, "unknown field")
		}
		return s.skip()
	})
}

// metaField reads the meta object: null unsets it, an object adds to it.
func (s *scanner) metaField(r *scanned) error {
	switch c := s.peek(); c {
	case 'n':
		r.meta, r.metaBad = nil, nil
		return s.lit("null")
	case '{':
	default:
		s.typeErr(r, "meta", "an object", c)
		return s.skip()
	}
	if r.meta == nil {
		r.meta = map[string][]string{}
	}
	return s.members(func(key string) error {
		s.ws()
		start := s.pos
		vals, ok, err := s.metaValue()
		if err != nil {
			return err
		}
		// The last value of a repeated key wins, good or bad.
		if ok {
			r.meta[key] = vals
			delete(r.metaBad, key)
			return nil
		}
		delete(r.meta, key)
		if r.metaBad == nil {
			r.metaBad = map[string]string{}
		}
		r.metaBad[key] = s.text[start:s.pos]
		return nil
	})
}

// metaValue reads a string (one value) or an array of strings (null
// elements are "", as encoding/json leaves them); ok is false for any
// other value, which is skipped.
func (s *scanner) metaValue() (vals []string, ok bool, err error) {
	switch s.peek() {
	case '"':
		v, err := s.str()
		return []string{v}, true, err
	case '[':
	default:
		return nil, false, s.skip()
	}
	start := s.pos
	vals = []string{}
	errNotString := fieldErr("", "")
	err = s.elements(func() error {
		switch s.peek() {
		case '"':
			v, err := s.str()
			vals = append(vals, v)
			return err
		case 'n':
			vals = append(vals, "")
			return s.lit("null")
		}
		return errNotString
	})
	if err == errNotString {
		// Not all strings: skip the whole array.
		s.pos = start
		return nil, false, s.skip()
	}
	return vals, err == nil, err
}

// finish turns a decoded record into an engine.Record, checking what the
// reference checks after decoding, in its order.
func (r *scanned) finish(now time.Time) (engine.Record, error) {
	if r.typeErr != nil {
		return engine.Record{}, r.typeErr
	}
	out := engine.Record{Agent: r.agent, Session: r.session, Role: r.role}
	if r.text == nil {
		return out, fieldErr("text", "missing")
	}
	out.Text = *r.text
	out.Time = now
	if r.time != nil {
		t, err := parseTime("time", *r.time)
		if err != nil {
			return out, err
		}
		out.Time = t
	}
	if len(r.metaBad) > 0 {
		k := slices.Min(slices.Collect(maps.Keys(r.metaBad)))
		return out, fieldErr("meta."+k, "want a string or an array of strings, got "+Truncate(r.metaBad[k], 40))
	}
	if len(r.meta) > 0 {
		out.Meta = r.meta
	}
	return out, nil
}

// end checks that only white space follows the value.
func (s *scanner) end() error {
	if s.ws(); s.pos < len(s.data) { // not peek: a NUL byte is not the end
		return fieldErr("", "more than one JSON value")
	}
	return nil
}

// scanRecords decodes a body of one record or {"records": [...]}.
func scanRecords(data []byte, now time.Time) ([]engine.Record, error) {
	if !utf8.Valid(data) {
		return nil, fieldErr("", "not valid UTF-8")
	}
	s := newScanner(data)
	if s.peek() == '[' {
		// A bare array is the common first guess for several records.
		return nil, fieldErr("", `not a JSON object of a record: got JSON array (several records go in {"records": [...]})`)
	}
	if s.peek() != '{' || !s.hasTopKey("records") {
		rec, err := s.one(now)
		if err != nil {
			return nil, err
		}
		return []engine.Record{rec}, nil
	}
	return s.batch(now)
}

// IsBatch reports whether data is the {"records": [...]} form of an append
// body (as ParseRecords decides it), without decoding it.
func IsBatch(data []byte) bool {
	s := newScanner(data)
	return s.peek() == '{' && s.hasTopKey("records")
}

// scanRecord decodes a body of exactly one record.
func scanRecord(data []byte, now time.Time) (engine.Record, error) {
	if !utf8.Valid(data) {
		return engine.Record{}, fieldErr("", "not valid UTF-8")
	}
	return newScanner(data).one(now)
}

func (s *scanner) one(now time.Time) (engine.Record, error) {
	var r scanned
	if err := s.record(&r); err != nil {
		return engine.Record{}, err
	}
	if err := s.end(); err != nil {
		return engine.Record{}, err
	}
	return r.finish(now)
}

// hasTopKey reports whether the object at s.pos has key (folded) at its
// top level, without moving s.pos. A syntax error answers false: the
// single-record path then reports it.
func (s *scanner) hasTopKey(key string) bool {
	t := &scanner{data: s.data, text: s.text, pos: s.pos + 1}
	if t.peek() == '}' {
		return false
	}
	for {
		if t.peek() != '"' {
			return false
		}
		k, err := t.str()
		if err != nil || t.expect(':') != nil {
			return false
		}
		if strings.EqualFold(k, key) {
			return true
		}
		if t.skip() != nil {
			return false
		}
		if t.peek() != ',' {
			return false
		}
		t.pos++
	}
}

// batch reads {"records": [...]}: the only key, the last of its repeats.
func (s *scanner) batch(now time.Time) ([]engine.Record, error) {
	var recs []scanned
	var typeErr error
	err := s.members(func(key string) error {
		if !strings.EqualFold(key, "records") {
			if typeErr == nil {
				typeErr = fieldErr(key, "unknown field")
			}
			return s.skip()
		}
		var err error
		recs, err = s.recordList(&typeErr)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := s.end(); err != nil {
		return nil, err
	}
	if typeErr != nil {
		return nil, typeErr
	}
	if len(recs) == 0 {
		return nil, fieldErr("records", "empty: want at least one record")
	}
	out := make([]engine.Record, len(recs))
	for i := range recs {
		r, err := recs[i].finish(now)
		if err != nil {
			return nil, prefixed(err, "records["+strconv.Itoa(i)+"]")
		}
		out[i] = r
	}
	return out, nil
}

// recordList reads the value of "records": an array of records, or null
// (no records). Anything else is a type error.
func (s *scanner) recordList(typeErr *error) ([]scanned, error) {
	switch c := s.peek(); c {
	case 'n':
		return nil, s.lit("null")
	case '[':
	default:
		if *typeErr == nil {
			*typeErr = fieldErr("records", "want an array of records, got JSON "+kind(c))
		}
		return nil, s.skip()
	}
	recs := make([]scanned, 0, 64)
	err := s.elements(func() error {
		recs = append(recs, scanned{})
		return s.record(&recs[len(recs)-1])
	})
	return recs, err
}
