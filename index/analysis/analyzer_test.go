package analysis

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"golang.org/x/text/unicode/norm"
)

func mustNew(t testing.TB, o Options) *Analyzer {
	t.Helper()
	a, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// render writes tokens as "pos:term" separated by spaces.
func render(toks []Token) string {
	var b strings.Builder
	for i, tk := range toks {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d:%s", tk.Pos, tk.Term)
	}
	return b.String()
}

func TestAnalyze(t *testing.T) {
	// The rules without CJK unigrams (TestCJKUnigrams adds them), so that
	// the bigram layout is checked against the reference analysis.
	o := DefaultOptions()
	o.CJKUnigrams = false
	a := mustNew(t, o)
	tests := []struct {
		name, in, want string
	}{
		// English: lowercasing, stopwords keep their position, Porter2.
		{"en", "The quick brown foxes were running", "1:quick 2:brown 3:fox 5:run"},
		{"en/stem", "connections connected connecting", "0:connect 1:connect 2:connect"},
		{"en/possessive", "Caroline's decision", "0:carolin 1:decis"},
		{"en/apostrophe-curly", "don’t DON'T", "0:don't 1:don't"},
		{"en/punct", "Hello, world! (really?)", "0:hello 1:world 2:realli"},
		{"en/hyphen", "long-term memory", "0:long-term 0:long 1:term 2:memori"},
		{"en/hyphen-stop", "state-of-the-art", "0:state-of-the-art 0:state 3:art"},
		{"en/dash", "pool - size", "0:pool 1:size"},
		{"en/sentence-dot", "we use pebble. it works.", "1:use 2:pebbl 4:work"},
		{"empty", "", ""},
		{"spaces", " \t\n ", ""},
		{"only-stopwords", "the of and", ""},
		// Chinese: overlapping bigrams, lone char unigram.
		{"zh/budget", "预算", "0:预算"},
		{"zh/pool", "数据库连接池", "0:数据 1:据库 2:库连 3:连接 4:接池"},
		{"zh/lone", "池", "0:池"},
		{"zh/punct", "预算，够吗？", "0:预算 1:够吗"},
		{"zh/digits", "2024年的预算", "0:2024 1:年的 2:的预 3:预算"},
		// Japanese: Kanji + Kana in one run; halfwidth katakana normalized.
		{"ja", "東京に行きました", "0:東京 1:京に 2:に行 3:行き 4:きま 5:まし 6:した"},
		{"ja/katakana-long", "データベース", "0:デー 1:ータ 2:タベ 3:ベー 4:ース"},
		{"ja/halfwidth", "ﾃﾞｰﾀ", "0:デー 1:ータ"},
		{"ja/middot", "ミドル・ウェア", "0:ミド 1:ドル 2:ウェ 3:ェア"},
		// Korean: bigrams inside each space-separated word.
		{"ko", "데이터베이스 연결 풀", "0:데이 1:이터 2:터베 3:베이 4:이스 5:연결 6:풀"},
		// Mixed scripts.
		{"mixed/zh-en", "用HikariCP连接池", "0:用 1:hikaricp 1:hikari 2:cp 3:连接 4:接池"},
		{"mixed/en-zh", "the 预算 for Q3 is 50k", "1:预算 3:q3 5:50k"},
		{"mixed/greek", "ΣΊΣΥΦΟΣ σίσυφος", "0:σίσυφοσ 1:σίσυφοσ"},
		{"mixed/german", "Straße STRASSE", "0:strass 1:strass"},
		{"mixed/accents", "café CAFÉ cafe\u0301", "0:café 1:café 2:café"},
		{"mixed/cyrillic", "Привет Мир", "0:привет 1:мир"},
		{"mixed/arabic", "مرحبا بالعالم", "0:مرحبا 1:بالعالم"},
		{"mixed/fullwidth", "ＡＢＣ１２３", "0:abc123"},
		{"mixed/ligature", "ﬁle", "0:file"},
		// Code identifiers and numbers.
		{"id/session", "sess_abc123", "0:sess_abc123 0:sess 1:abc123"},
		{"id/version", "v2.1", "0:v2.1 0:v2 1:1"},
		{"id/ip", "192.168.0.1", "0:192.168.0.1 0:192 1:168 2:0 3:1"},
		{"id/email", "user@example.com", "0:user@example.com 0:user 1:exampl 2:com"},
		{"id/snake", "snake_case", "0:snake_case 0:snake 1:case"},
		{"id/camel", "camelCase", "0:camelcas 0:camel 1:case"},
		{"id/hikari", "HikariCP", "0:hikaricp 0:hikari 1:cp"},
		{"id/acronym", "HTTPServer", "0:httpserver 0:http 1:server"},
		{"id/digit-upper", "OAuth2Client", "0:oauth2client 0:o 1:auth2 2:client"},
		{"id/oneil", "O'Neil", "0:o'neil"},
		{"id/plural-acronym", "IDs PDFs URLsafe", "0:id 1:pdfs 2:urlsaf 2:ur 3:lsafe"},
		{"id/number", "42 3.14 1,000", "0:42 1:3.14 1:3 2:14 3:1 4:000"},
		{"id/time", "12:30", "0:12:30 0:12 1:30"},
		{"id/double-underscore", "__init__", "0:init"},
		{"id/unicode-connector", "q\u203fb x\ufe4dY", "0:q‿b 0:q 1:b 2:x_y 2:x 3:y"},
		{"id/scope", "std::vector", "0:std 1:vector"},
		{"id/path", "/usr/local/bin", "0:usr/local/bin 0:usr 1:local 2:bin"},
		{"id/dotted-trailing", "v2.1.", "0:v2.1 0:v2 1:1"},
		{"id/hex", "0xDEADbeef", "0:0xdeadbeef 0:0x 1:dea 2:dbeef"},
		// Emoji are dropped and separate words.
		{"emoji", "🚀 launch 🎉", "0:launch"},
		{"emoji/inside", "db🔥pool", "0:db 1:pool"},
		{"emoji/zwj-skin", "👨‍👩‍👧 👍🏽 ok", "0:ok"},
		{"emoji/only", "😀😀😀", ""},
		// URLs: scheme, then the host/path identifier and its parts.
		{"url", "https://github.com/lazymem/lazymem?x=1", "0:https 1:github.com/lazymem/lazymem 1:github 2:com 3:lazymem 4:lazymem 5:x 6:1"},
		{"url/www", "see www.example.org/docs.", "0:see 1:www.example.org/docs 1:www 2:exampl 3:org 4:doc"},
		// Invalid UTF-8 separates words.
		{"invalid-utf8", "ab\xffcd", "0:ab 1:cd"},
	}
	ref := mustNew(t, Options{Stem: true, Stopwords: true, CacheSize: -1})
	ref.reference = true
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := render(a.AppendTokens(nil, tt.in))
			if got != tt.want {
				t.Errorf("AppendTokens(%q)\n got: %s\nwant: %s", tt.in, got, tt.want)
			}
			if slow := render(ref.AppendTokens(nil, tt.in)); slow != got {
				t.Errorf("reference analysis of %q differs:\n fast: %s\n slow: %s", tt.in, got, slow)
			}
		})
	}
}

func TestOptions(t *testing.T) {
	var zero Options
	zero.EnsureDefaults()
	if zero != DefaultOptions() {
		t.Fatalf("zero options became %+v, want DefaultOptions %+v", zero, DefaultOptions())
	}
	o := Options{MaxTokenLen: 8}
	o.EnsureDefaults()
	if o.Stem || o.Stopwords || o.CacheSize != DefaultCacheSize {
		t.Fatalf("EnsureDefaults changed explicit options: %+v", o)
	}
	for _, bad := range []Options{{MaxTokenLen: -1}, {MaxTokenLen: maxMaxTokenLen + 1}, {Stem: true, CacheSize: maxCacheSize + 1}} {
		if _, err := New(bad); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("New(%+v) = %v, want ErrInvalidOptions", bad, err)
		}
	}
	a := mustNew(t, Options{})
	if a.Options() != DefaultOptions() {
		t.Fatalf("New(Options{}) uses %+v", a.Options())
	}
	if !strings.Contains(a.Signature(), "stem=true") || !strings.Contains(a.Signature(), fmt.Sprintf("v%d", Version)) {
		t.Fatalf("signature %q", a.Signature())
	}
	b := mustNew(t, Options{Stem: false, Stopwords: true})
	if a.Signature() == b.Signature() {
		t.Fatal("different options, same signature")
	}
}

func TestStopWordsAreSnowballs(t *testing.T) {
	got := StopWords()
	if len(got) != 127 {
		t.Fatalf("%d stopwords, want 127", len(got))
	}
	for _, w := range got {
		if !english.IsStopWord(w) {
			t.Errorf("%q is not a snowball stopword", w)
		}
	}
}

func TestOptionsEffect(t *testing.T) {
	in := "The connections of HikariCP"
	tests := []struct {
		o    Options
		want string
	}{
		{DefaultOptions(), "1:connect 3:hikaricp 3:hikari 4:cp"},
		{Options{Stopwords: true, MaxTokenLen: 64}, "1:connections 3:hikaricp 3:hikari 4:cp"},
		{Options{Stem: true, MaxTokenLen: 64}, "0:the 1:connect 2:of 3:hikaricp 3:hikari 4:cp"},
		{Options{Stem: true, Stopwords: true, MaxTokenLen: 6}, "3:hikari 4:cp"},
		{Options{Stem: true, Stopwords: true, CacheSize: -1}, "1:connect 3:hikaricp 3:hikari 4:cp"},
	}
	for _, tt := range tests {
		a := mustNew(t, tt.o)
		if got := render(a.AppendTokens(nil, in)); got != tt.want {
			t.Errorf("%+v:\n got: %s\nwant: %s", tt.o, got, tt.want)
		}
	}
}

func TestCJKUnigrams(t *testing.T) {
	a := mustNew(t, Options{Stem: true, Stopwords: true, CJKUnigrams: true})
	tests := []struct{ in, want string }{
		{"我的猫很可爱", "0:我 0:我的 1:的 1:的猫 2:猫 2:猫很 3:很 3:很可 4:可 4:可爱 5:爱"},
		{"猫", "0:猫"},
		{"猫 dog 预算", "0:猫 1:dog 2:预 2:预算 3:算"},
	}
	for _, tt := range tests {
		if got := render(a.AppendTokens(nil, tt.in)); got != tt.want {
			t.Errorf("AppendTokens(%q)\n got: %s\nwant: %s", tt.in, got, tt.want)
		}
	}
	// The point: a one-character query finds a longer run.
	doc := map[string]bool{}
	for _, term := range a.Terms("我的猫很可爱") {
		doc[term] = true
	}
	if q := a.Terms("猫"); len(q) != 1 || !doc[q[0]] {
		t.Errorf("query 猫 -> %q not in document terms", q)
	}
	if !DefaultOptions().CJKUnigrams {
		t.Error("CJKUnigrams off by default")
	}
}

func TestMaxTokenLen(t *testing.T) {
	a := mustNew(t, DefaultOptions())
	long := strings.Repeat("x", DefaultMaxTokenLen+1)
	if got := render(a.AppendTokens(nil, "a1 "+long+" b2")); got != "0:a1 2:b2" {
		t.Fatalf("long word: %s", got)
	}
	// A long identifier keeps its parts, not the whole.
	id := strings.Repeat("ab", 20) + "." + strings.Repeat("cd", 20)
	want := "0:" + strings.Repeat("ab", 20) + " 1:" + strings.Repeat("cd", 20)
	if got := render(a.AppendTokens(nil, id)); got != want {
		t.Fatalf("long identifier:\n got: %s\nwant: %s", got, want)
	}
}

func TestTerms(t *testing.T) {
	a := mustNew(t, DefaultOptions())
	got := strings.Join(a.Terms("Pool sizes for HikariCP"), ",")
	if want := "pool,size,hikaricp,hikari,cp"; got != want {
		t.Fatalf("Terms = %s, want %s", got, want)
	}
}

// TestSameAnalysisForQueries checks the property the index relies on: a
// document's phrase, analyzed alone as a query, yields a contiguous run of
// the document's terms.
func TestQueryMatchesDocument(t *testing.T) {
	a := mustNew(t, DefaultOptions())
	doc := "Yesterday we decided: HikariCP 连接池 maximumPoolSize=20 for sess_abc123 (see https://wiki.example.com/db-pool)."
	docTerms := map[string]bool{}
	for _, tk := range a.AppendTokens(nil, doc) {
		docTerms[tk.Term] = true
	}
	for _, q := range []string{"decided", "hikari", "hikaricp", "连接池", "maximum pool size", "sess_abc123", "abc123", "db pool", "https://wiki.example.com/db-pool", "20"} {
		for _, term := range a.Terms(q) {
			if !docTerms[term] {
				t.Errorf("query %q: term %q not in document terms", q, term)
			}
		}
	}
}

// TestCacheAgrees checks cached and uncached analysis agree, including after
// the cache wraps (a tiny cache is cleared many times).
func TestCacheAgrees(t *testing.T) {
	cached := mustNew(t, Options{Stem: true, Stopwords: true, CacheSize: 16})
	plain := mustNew(t, Options{Stem: true, Stopwords: true, CacheSize: -1})
	text := corpus(7, 2000)
	for i := 0; i < 3; i++ {
		if g, w := render(cached.AppendTokens(nil, text)), render(plain.AppendTokens(nil, text)); g != w {
			t.Fatalf("round %d: cached and uncached analysis differ", i)
		}
	}
}

func TestConcurrent(t *testing.T) {
	a := mustNew(t, Options{Stem: true, Stopwords: true, CacheSize: 64})
	texts := []string{corpus(1, 300), corpus(2, 300), "数据库连接池 HikariCP Straße", corpus(3, 300)}
	want := make([]string, len(texts))
	ref := mustNew(t, Options{Stem: true, Stopwords: true, CacheSize: -1})
	for i, s := range texts {
		want[i] = render(ref.AppendTokens(nil, s))
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for n := 0; n < 20; n++ {
				i := (g + n) % len(texts)
				if got := render(a.AppendTokens(nil, texts[i])); got != want[i] {
					errs <- fmt.Sprintf("goroutine %d text %d differs", g, i)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestNoAllocSteadyState(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("coverage and the race detector change allocation counts")
	}
	a := mustNew(t, DefaultOptions())
	for _, tt := range []struct {
		text   string
		allocs float64
	}{
		{"We decided to raise the HikariCP maximumPoolSize to 20 for sess_abc123 yesterday.", 0},
		{"数据库连接池的预算 Straße café don’t 🚀", 0},
		// Text that NFKC changes costs one allocation: x/text's reorder
		// buffer escapes in norm.Form.AppendString.
		{"ＡＢＣ１２３ ﬁle ΣΊΣΥΦΟΣ", 1},
	} {
		dst := a.AppendTokens(nil, tt.text) // warm the cache and size dst
		allocs := testing.AllocsPerRun(100, func() {
			dst = a.AppendTokens(dst[:0], tt.text)
		})
		if allocs > tt.allocs {
			t.Errorf("AppendTokens(%q): %v allocations per call in steady state, want <= %v", tt.text, allocs, tt.allocs)
		}
		terms := a.AppendTerms(nil, tt.text)
		allocs = testing.AllocsPerRun(100, func() {
			terms = a.AppendTerms(terms[:0], tt.text)
		})
		if allocs > tt.allocs {
			t.Errorf("AppendTerms(%q): %v allocations per call in steady state, want <= %v", tt.text, allocs, tt.allocs)
		}
	}
}

func TestNormalize(t *testing.T) {
	tests := []string{
		"", "ascii only", "预算，够吗？", "ＡＢＣ１２３\u3000ｘ", "Ａ\u0301", "cafe\u0301", "가\u11a8", "か\u3099",
		"ﬁle", "①②", "x²", "🚀👍🏽", "데이터베이스", "ﾃﾞｰﾀ", "\U00020000\U0002F800",
	}
	for _, s := range tests {
		st := &scratch{}
		if got, want := st.normalize(s), norm.NFKC.String(s); got != want {
			t.Errorf("normalize(%+q) = %+q, want %+q", s, got, want)
		}
	}
	// Every BMP rune alone, and followed by a combining acute and a
	// trailing jamo, against x/text.
	st := &scratch{}
	for r := rune(0x80); r < 0x10000; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		for _, s := range []string{string(r), string(r) + "\u0301", string(r) + "\u11a8", "a" + string(r)} {
			if got, want := st.normalize(s), norm.NFKC.String(s); got != want {
				t.Fatalf("normalize(%+q) = %+q, want %+q", s, got, want)
			}
		}
	}
}

// TestHugeInputs checks that pathological inputs stay linear and correct,
// and that the pooled buffers they grow are dropped.
func TestHugeInputs(t *testing.T) {
	a := mustNew(t, DefaultOptions())
	dotted := strings.Repeat("ab.", 100_000) + "ab"
	toks := a.AppendTokens(nil, dotted)
	if len(toks) != 100_001 || toks[0].Term != "ab" || toks[len(toks)-1].Pos != 100_000 {
		t.Fatalf("dotted: %d tokens, first %+v, last %+v", len(toks), toks[0], toks[len(toks)-1])
	}
	han := strings.Repeat("数据", 50_000)
	if toks := a.AppendTokens(nil, han); len(toks) != 99_999+100_000 { // bigrams + unigrams
		t.Fatalf("han run: %d tokens", len(toks))
	}
	if toks := a.AppendTokens(nil, strings.Repeat("x", 1<<20)); len(toks) != 0 {
		t.Fatalf("1 MiB word: %d tokens", len(toks))
	}
	st := &scratch{low: make([]byte, 0, 1<<20), parts: make([]span, 0, 1<<16), norm: make([]byte, 0, 2<<20)}
	st.trim()
	if st.low != nil || st.parts != nil || st.norm != nil {
		t.Fatal("trim kept huge buffers")
	}
}
