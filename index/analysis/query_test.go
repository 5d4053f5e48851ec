package analysis

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// renderQuery writes clauses compactly: term, "phrase", key=value, with a
// leading ! for excluded clauses.
func renderQuery(q Query) string {
	var parts []string
	for _, c := range q.Clauses {
		p := ""
		if c.Not {
			p = "!"
		}
		switch c.Kind {
		case KindTerm:
			p += c.Text
		case KindPhrase:
			p += fmt.Sprintf("%q", c.Text)
		case KindFilter:
			p += c.Key + "=" + c.Text
		}
		parts = append(parts, fmt.Sprintf("%s@%d", p, c.Pos))
	}
	return strings.Join(parts, " ")
}

func TestParseQuery(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"   \t ", ""},
		{"connection pool", "connection@0 pool@11"},
		{`"connection pool" size`, `"connection pool"@0 size@18`},
		{`-chitchat pool`, "!chitchat@0 pool@10"},
		{`-"small talk"`, `!"small talk"@0`},
		{"tag:db -tag:chitchat agent:a1 session:s2", "tag=db@0 !tag=chitchat@7 agent=a1@21 session=s2@30"},
		{`tag:"long term" pool`, "tag=long term@0 pool@16"},
		{`topic:db.pool-size role:user`, "topic=db.pool-size@0 role=user@19"},
		{`time:12:30`, "time=12:30@0"},
		{"Note: meeting tomorrow", "Note:@0 meeting@6 tomorrow@14"},
		{"see http://example.com/x", "see@0 http://example.com/x@4"},
		{"std::vector", "std::vector@0"},
		{"12:30 lunch", "12:30@0 lunch@6"},
		{"nice :) ok", "nice@0 :)@5 ok@8"},
		{"a - b", "a@0 b@4"},
		{"--flag", "!-flag@0"},
		{`say "a \"quoted\" word"`, `say@0 "a \"quoted\" word"@4`},
		{`path:"C:\\tmp"`, `path=C:\tmp@0`},
		{`back\slash`, `back\slash@0`},
		{`foo"bar baz"`, `foo@0 "bar baz"@3`},
		{"数据库 tag:预算", "数据库@0 tag=预算@10"},
		{"pool\u3000size", "pool@0 size@7"}, // ideographic space separates
		{"é:x", "é:x@0"},                    // non-ASCII key: a word
	}
	for _, tt := range tests {
		q, err := ParseQuery(tt.in)
		if err != nil {
			t.Errorf("ParseQuery(%q): %v", tt.in, err)
			continue
		}
		if got := renderQuery(q); got != tt.want {
			t.Errorf("ParseQuery(%q)\n got: %s\nwant: %s", tt.in, got, tt.want)
		}
	}
}

func TestParseQueryErrors(t *testing.T) {
	tests := []struct {
		in  string
		err error
		pos int
	}{
		{`"unclosed`, ErrUnclosedQuote, 0},
		{`pool "size`, ErrUnclosedQuote, 5},
		{`tag:"db`, ErrUnclosedQuote, 4},
		{`-"x`, ErrUnclosedQuote, 1},
		{`a "x\"`, ErrUnclosedQuote, 2},
		{`""`, ErrEmptyPhrase, 0},
		{`pool "  "`, ErrEmptyPhrase, 5},
		{`:db`, ErrEmptyKey, 0},
		{`pool -:db`, ErrEmptyKey, 6},
		{`:"x"`, ErrEmptyKey, 0},
		{`tag:""`, ErrEmptyValue, 4},
		{"ok \xff", ErrInvalidUTF8, 3},
		{strings.Repeat("a", MaxQueryLen+1), ErrQueryTooLong, MaxQueryLen},
	}
	for _, tt := range tests {
		_, err := ParseQuery(tt.in)
		var qe *QueryError
		if !errors.As(err, &qe) || !errors.Is(err, tt.err) || qe.Pos != tt.pos {
			t.Errorf("ParseQuery(%.20q) = %v, want %v at byte %d", tt.in, err, tt.err, tt.pos)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "lazymem: query: ") || !strings.Contains(msg, fmt.Sprintf("at byte %d", tt.pos)) {
			t.Errorf("error message %q lacks prefix or position", msg)
		}
	}
}

func TestQueryAccessors(t *testing.T) {
	q, err := ParseQuery(`pool "max size" -chitchat -"small talk" tag:db tag:infra -tag:noise agent:a1`)
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Text(); got != "pool max size" {
		t.Errorf("Text = %q", got)
	}
	if got := q.Excluded(); !reflect.DeepEqual(got, []string{"chitchat", "small talk"}) {
		t.Errorf("Excluded = %q", got)
	}
	if got := q.Where(); !reflect.DeepEqual(got, map[string][]string{"tag": {"db", "infra"}, "agent": {"a1"}}) {
		t.Errorf("Where = %v", got)
	}
	if got := q.Not(); !reflect.DeepEqual(got, map[string][]string{"tag": {"noise"}}) {
		t.Errorf("Not = %v", got)
	}
	if q.IsEmpty() {
		t.Error("IsEmpty on a full query")
	}
	empty, _ := ParseQuery("  ")
	if !empty.IsEmpty() || empty.Where() != nil || empty.Text() != "" {
		t.Error("empty query accessors")
	}
}

func TestQueryStringRoundTrip(t *testing.T) {
	for _, in := range []string{
		`pool "max size" -chitchat -"small \"talk\"" tag:db -tag:"long term" x:"/abs" y:":c"`,
		`Note: http://x std::vector --flag :) path:C:\tmp`,
	} {
		q, err := ParseQuery(in)
		if err != nil {
			t.Fatal(err)
		}
		q2, err := ParseQuery(q.String())
		if err != nil {
			t.Fatalf("reparse %q: %v", q.String(), err)
		}
		if !sameClauses(q, q2) {
			t.Errorf("round trip of %q via %q:\n got: %s\nwant: %s", in, q.String(), renderQuery(q2), renderQuery(q))
		}
	}
}

func sameClauses(a, b Query) bool {
	if len(a.Clauses) != len(b.Clauses) {
		return false
	}
	for i := range a.Clauses {
		x, y := a.Clauses[i], b.Clauses[i]
		x.Pos, y.Pos = 0, 0
		if x != y {
			return false
		}
	}
	return true
}
