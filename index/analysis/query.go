package analysis

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxQueryLen is the longest query string ParseQuery accepts, in bytes.
const MaxQueryLen = 16 << 10

// Kind is the kind of a query clause.
type Kind uint8

const (
	// KindTerm is a bare word, kept as typed (analysis happens later).
	KindTerm Kind = iota
	// KindPhrase is the text between double quotes, escapes resolved.
	KindPhrase
	// KindFilter is key:value or key:"quoted value".
	KindFilter
)

func (k Kind) String() string {
	switch k {
	case KindTerm:
		return "term"
	case KindPhrase:
		return "phrase"
	case KindFilter:
		return "filter"
	}
	return "kind(?)"
}

// Clause is one element of a query, in input order.
type Clause struct {
	Kind Kind
	// Not is set by a leading '-': exclude records that match the clause.
	Not bool
	// Key is the metadata key of a KindFilter, as typed.
	Key string
	// Text is the word (KindTerm), the phrase (KindPhrase) or the value
	// (KindFilter), as typed: not case-folded, not analyzed.
	Text string
	// Pos is the byte offset of the clause (its '-' if any) in the query.
	Pos int
}

// Query is a parsed query string. See the package documentation for the
// grammar and the intended semantics.
type Query struct {
	Clauses []Clause
}

// IsEmpty reports a query with no clause.
func (q Query) IsEmpty() bool { return len(q.Clauses) == 0 }

// Text returns the words and phrases to score (those without '-'),
// separated by single spaces: the text to hand to Analyzer for BM25.
func (q Query) Text() string {
	var b strings.Builder
	for _, c := range q.Clauses {
		if c.Not || c.Kind == KindFilter {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.Text)
	}
	return b.String()
}

// Excluded returns the texts of the excluded words and phrases.
func (q Query) Excluded() []string {
	var out []string
	for _, c := range q.Clauses {
		if c.Not && c.Kind != KindFilter {
			out = append(out, c.Text)
		}
	}
	return out
}

// Where returns the included filters grouped by key (OR within a key, AND
// across keys), or nil when there is none.
func (q Query) Where() map[string][]string { return q.filters(false) }

// Not returns the excluded filters grouped by key (a record matching any of
// them is excluded), or nil when there is none.
func (q Query) Not() map[string][]string { return q.filters(true) }

func (q Query) filters(not bool) map[string][]string {
	var m map[string][]string
	for _, c := range q.Clauses {
		if c.Kind != KindFilter || c.Not != not {
			continue
		}
		if m == nil {
			m = make(map[string][]string)
		}
		m[c.Key] = append(m[c.Key], c.Text)
	}
	return m
}

// String renders q canonically: ParseQuery(q.String()) returns the same
// clauses (positions aside) for any q that ParseQuery produced.
func (q Query) String() string {
	var b strings.Builder
	for i, c := range q.Clauses {
		if i > 0 {
			b.WriteByte(' ')
		}
		if c.Not {
			b.WriteByte('-')
		}
		switch c.Kind {
		case KindTerm:
			b.WriteString(c.Text)
		case KindPhrase:
			writeQuoted(&b, c.Text)
		case KindFilter:
			b.WriteString(c.Key)
			b.WriteByte(':')
			if bareValue(c.Text) {
				b.WriteString(c.Text)
			} else {
				writeQuoted(&b, c.Text)
			}
		}
	}
	return b.String()
}

// bareValue reports whether a filter value can be written without quotes
// and still parse back as the same filter value.
func bareValue(v string) bool {
	if v == "" || v[0] == '/' || v[0] == ':' {
		return false
	}
	for _, r := range v {
		if r == '"' || unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

func writeQuoted(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
}

// ParseQuery parses a user query string. Errors are *QueryError values that
// wrap one of the ErrXxx sentinels and give the byte position.
func ParseQuery(s string) (Query, error) {
	var q Query
	if len(s) > MaxQueryLen {
		return q, &QueryError{Pos: MaxQueryLen, Err: ErrQueryTooLong}
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			return Query{}, &QueryError{Pos: i, Err: ErrInvalidUTF8}
		}
		i += size
	}
	i := 0
	for {
		i = skipSpace(s, i)
		if i >= len(s) {
			break
		}
		start := i
		not := false
		if s[i] == '-' {
			if i+1 >= len(s) || isSpaceAt(s, i+1) {
				i++ // a lone '-' is punctuation ("a - b"), not an exclusion
				continue
			}
			not = true
			i++
		}
		if s[i] == '"' {
			text, end, err := parseQuoted(s, i)
			if err != nil {
				return Query{}, err
			}
			if strings.TrimSpace(text) == "" {
				return Query{}, &QueryError{Pos: i, Err: ErrEmptyPhrase}
			}
			q.Clauses = append(q.Clauses, Clause{Kind: KindPhrase, Not: not, Text: text, Pos: start})
			i = end
			continue
		}
		j := i
		for j < len(s) && s[j] != '"' && !isSpaceAt(s, j) {
			_, size := utf8.DecodeRuneInString(s[j:])
			j += size
		}
		word := s[i:j]
		k := strings.IndexByte(word, ':')
		switch {
		case k < 0:
			// plain word
		case k == 0:
			// ":db" and `:"x"` are filters without a key; ":)" or a lone
			// ":" are punctuation and stay plain words.
			if (len(word) > 1 && startsValue(word[1:])) || (len(word) == 1 && j < len(s) && s[j] == '"') {
				return Query{}, &QueryError{Pos: i, Err: ErrEmptyKey, Detail: "write key:value"}
			}
		case validKey(word[:k]):
			key, rest := word[:k], word[k+1:]
			if rest == "" && j < len(s) && s[j] == '"' {
				text, end, err := parseQuoted(s, j)
				if err != nil {
					return Query{}, err
				}
				if text == "" {
					return Query{}, &QueryError{Pos: j, Err: ErrEmptyValue, Detail: "key " + key}
				}
				q.Clauses = append(q.Clauses, Clause{Kind: KindFilter, Not: not, Key: key, Text: text, Pos: start})
				i = end
				continue
			}
			// "Note:" (a trailing colon), URLs (http://...) and scopes
			// (std::vector) are words, not filters.
			if rest != "" && rest[0] != '/' && rest[0] != ':' {
				q.Clauses = append(q.Clauses, Clause{Kind: KindFilter, Not: not, Key: key, Text: rest, Pos: start})
				i = j
				continue
			}
		}
		q.Clauses = append(q.Clauses, Clause{Kind: KindTerm, Not: not, Text: word, Pos: start})
		i = j
	}
	return q, nil
}

// parseQuoted reads a quoted string starting at s[i] == '"'. Inside, \" is a
// quote and \\ a backslash; any other backslash is literal.
func parseQuoted(s string, i int) (text string, end int, err error) {
	var b []byte
	plain := true // no escape seen: text is a substring of s
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '"':
			if plain {
				return s[i+1 : j], j + 1, nil
			}
			return string(b), j + 1, nil
		case '\\':
			if j+1 < len(s) && (s[j+1] == '"' || s[j+1] == '\\') {
				if plain {
					b = append(b, s[i+1:j]...)
					plain = false
				}
				j++
				b = append(b, s[j])
				continue
			}
		}
		if !plain {
			b = append(b, s[j])
		}
	}
	return "", 0, &QueryError{Pos: i, Err: ErrUnclosedQuote}
}

// validKey: an ASCII letter, then ASCII letters, digits, '_', '.', '-'.
func validKey(k string) bool {
	if k == "" || !isASCIILetter(k[0]) {
		return false
	}
	for i := 1; i < len(k); i++ {
		c := k[i]
		if !isASCIILetter(c) && !(c >= '0' && c <= '9') && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

func isASCIILetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

// startsValue reports whether s starts like a filter value (letter, digit
// or quote), as opposed to punctuation such as ":)".
func startsValue(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return r == '"' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

func skipSpace(s string, i int) int {
	for i < len(s) && isSpaceAt(s, i) {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

func isSpaceAt(s string, i int) bool {
	if c := s[i]; c < utf8.RuneSelf {
		return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsSpace(r)
}
