package analysis

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

var fuzzSeeds = []string{
	"", "The quick brown foxes were running", "数据库连接池", "東京に行きました", "데이터베이스 연결 풀",
	"用HikariCP连接池", "sess_abc123 v2.1 192.168.0.1 user@example.com snake_case camelCase HTTPServer",
	"🚀 launch 🎉 db🔥pool 👨‍👩‍👧", "https://github.com/lazymem/lazymem?x=1", "ＡＢＣ１２３ ﬁle Straße ΣΊΣΥΦΟΣ",
	"O'Neil don’t rock'n'roll", "a\u0301\u0302b", "ab\xffcd\xc3", "İstanbul ǅ ŉ ΐ", "x.y.z.", "-_-", "ﾃﾞｰﾀ", "q\u203fb x\ufe4dY",
}

func FuzzAnalyze(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	cached := mustNew(f, Options{Stem: true, Stopwords: true, MaxTokenLen: 16, CacheSize: 64})
	plain := mustNew(f, Options{Stem: true, Stopwords: true, MaxTokenLen: 16, CacheSize: -1})
	uni := mustNew(f, Options{Stem: true, Stopwords: true, CJKUnigrams: true, MaxTokenLen: 16})
	plain.reference = true // no fast paths either
	f.Fuzz(func(t *testing.T, text string) {
		toks := cached.AppendTokens(nil, text)
		again := cached.AppendTokens(nil, text)
		ref := plain.AppendTokens(nil, text)
		if render(toks) != render(again) {
			t.Fatalf("not deterministic:\n%s\n%s", render(toks), render(again))
		}
		if render(toks) != render(ref) {
			t.Fatalf("fast (cached) and reference (uncached) analysis differ:\n%s\n%s", render(toks), render(ref))
		}
		terms := cached.AppendTerms([]string{"keep"}, text)
		if len(terms) != len(toks)+1 || terms[0] != "keep" {
			t.Fatalf("AppendTerms returned %d terms for %d tokens", len(terms)-1, len(toks))
		}
		// Unigrams only add terms, and positions stay ordered.
		withUni := uni.AppendTokens(nil, text)
		if len(withUni) < len(toks) {
			t.Fatalf("CJKUnigrams lost terms: %d < %d", len(withUni), len(toks))
		}
		for i := 1; i < len(withUni); i++ {
			if withUni[i].Pos < withUni[i-1].Pos {
				t.Fatalf("CJKUnigrams: position %d after %d", withUni[i].Pos, withUni[i-1].Pos)
			}
		}
		last := int32(0)
		for i, tk := range toks {
			if terms[i+1] != tk.Term {
				t.Fatalf("AppendTerms[%d] = %q, token %q", i, terms[i+1], tk.Term)
			}
			if tk.Term == "" || len(tk.Term) > 16 {
				t.Fatalf("token %d: bad length %q", i, tk.Term)
			}
			if !utf8.ValidString(tk.Term) {
				t.Fatalf("token %d: invalid UTF-8 %q", i, tk.Term)
			}
			if tk.Pos < last {
				t.Fatalf("token %d: position %d after %d", i, tk.Pos, last)
			}
			last = tk.Pos
			if strings.ContainsAny(tk.Term, " \t\n\"ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
				t.Fatalf("token %d: %q has space, quote or ASCII capital", i, tk.Term)
			}
		}
		if int(last) > len(text) {
			t.Fatalf("last position %d beyond text length %d", last, len(text))
		}
	})
}

func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{
		"", "connection pool", `"connection pool" size -chitchat`, `tag:db -tag:chitchat agent:a1 session:s2`,
		`tag:"long term"`, "Note: http://x std::vector 12:30 :) a - b --flag", `say "a \"q\" \\ w"`,
		`"unclosed`, `:db`, `tag:""`, `""`, "\xff", "数据库 tag:预算", `x:"/abs" y:":c" path:C:\tmp`,
	} {
		f.Add(s)
	}
	a := mustNew(f, DefaultOptions())
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseQuery(s)
		if err != nil {
			var qe *QueryError
			if !errors.As(err, &qe) {
				t.Fatalf("error %v is not a *QueryError", err)
			}
			if qe.Pos < 0 || qe.Pos > len(s) || qe.Err == nil || !strings.HasPrefix(err.Error(), "lazymem: query: ") {
				t.Fatalf("bad error %#v for %q", qe, s)
			}
			return
		}
		last := -1
		for _, c := range q.Clauses {
			if c.Pos <= last || c.Pos >= len(s) {
				t.Fatalf("clause position %d after %d (len %d)", c.Pos, last, len(s))
			}
			last = c.Pos
			if c.Text == "" || (c.Kind == KindFilter && !validKey(c.Key)) {
				t.Fatalf("bad clause %+v", c)
			}
		}
		out := q.String()
		q2, err := ParseQuery(out)
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", out, s, err)
		}
		if !sameClauses(q, q2) {
			t.Fatalf("round trip %q -> %q:\n%s\n%s", s, out, renderQuery(q), renderQuery(q2))
		}
		a.AppendTokens(nil, q.Text()) // the scored text always analyzes
	})
}

// FuzzNormalize checks the hand-made NFKC fast path against x/text.
func FuzzNormalize(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Add("预算，够吗？ＡＢＣ\u3000x")
	f.Add("Ａ\u0301 가\u11a8 か\u3099")
	f.Fuzz(func(t *testing.T, text string) {
		st := &scratch{}
		got := st.normalize(text)
		// Invalid bytes become spaces, then NFKC.
		want := norm.NFKC.String(spaceInvalid(text))
		if got != want {
			t.Fatalf("normalize(%+q) = %+q, want %+q", text, got, want)
		}
	})
}

// spaceInvalid replaces each invalid UTF-8 byte of s by a space.
func spaceInvalid(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteByte(' ')
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
