package embed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func newHash(t testing.TB, o HashOptions) *Hash {
	t.Helper()
	h, err := NewHash(o)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func cos(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return d / math.Sqrt(na*nb)
}

func norm2(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func embedOne(t testing.TB, e Embedder, text string) []float32 {
	t.Helper()
	v, err := e.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return v[0]
}

func TestHashOptions(t *testing.T) {
	h := newHash(t, HashOptions{})
	if h.Dim() != 384 || h.Name() != "hash-v3-d384" {
		t.Fatalf("defaults: dim %d name %q", h.Dim(), h.Name())
	}
	if n := newHash(t, HashOptions{Dim: 256, CharGram: 4}).Name(); n != "hash-v3-d256-c4" {
		t.Fatalf("name %q", n)
	}
	if n := newHash(t, HashOptions{Dim: 64, CharGram: -1}).Name(); n != "hash-v3-d64-c0" {
		t.Fatalf("name %q", n)
	}
	for _, o := range []HashOptions{{Dim: 4}, {Dim: 1 << 17}, {Dim: -1}, {CharGram: 9}, {CharGram: 1}} {
		if _, err := NewHash(o); !errors.Is(err, ErrOptions) {
			t.Errorf("%+v: err %v, want ErrOptions", o, err)
		}
	}
}

func TestHashDeterministicAndUnit(t *testing.T) {
	texts := []string{
		"I went to the LGBTQ support group yesterday and it was so powerful.",
		"Caroline: what did we decide about the connection pool?",
		"昨天我们讨论了连接池的大小",
		"今日は東京で会議がありました",
		"Ünïcödé ﬁne Straße ＡＢＣ full-width",
		"a",
		"x y z 1 2 3",
	}
	a := newHash(t, HashOptions{})
	b := newHash(t, HashOptions{}) // a second instance: no hidden state
	va, err := a.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(va) != len(texts) {
		t.Fatalf("got %d vectors for %d texts", len(va), len(texts))
	}
	for i, text := range texts {
		vb := embedOne(t, b, text)
		if len(va[i]) != 384 || cap(va[i]) != 384 {
			t.Fatalf("%q: len %d cap %d", text, len(va[i]), cap(va[i]))
		}
		for j := range vb {
			if va[i][j] != vb[j] {
				t.Fatalf("%q: batched and single differ at %d: %v vs %v", text, j, va[i][j], vb[j])
			}
		}
		if n := norm2(vb); math.Abs(n-1) > 1e-5 {
			t.Errorf("%q: norm %v", text, n)
		}
		if got := a.AppendVector([]float32{7}, text); got[0] != 7 || len(got) != 385 || cos(got[1:], vb) < 0.999999 {
			t.Errorf("%q: AppendVector differs from Embed", text)
		}
	}
}

func TestHashEmptyIsZero(t *testing.T) {
	h := newHash(t, HashOptions{})
	vs, err := h.Embed(context.Background(), []string{"", "   ", "?!.,;", "hello"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		for _, x := range vs[i] {
			if x != 0 || math.IsNaN(float64(x)) {
				t.Fatalf("text %d: want zero vector, got %v", i, x)
			}
		}
		if c := cos(vs[i], vs[3]); c != 0 || math.IsNaN(c) {
			t.Fatalf("cos with zero vector = %v", c)
		}
	}
	if vs, err := h.Embed(context.Background(), nil); err != nil || len(vs) != 0 {
		t.Fatalf("nil input: %v %v", vs, err)
	}
}

func TestHashNormalization(t *testing.T) {
	h := newHash(t, HashOptions{})
	// Case and NFKC compatibility forms map to the same features.
	pairs := [][2]string{
		{"Hello World", "hello world"},
		{"ＨＥＬＬＯ　ｗｏｒｌｄ", "hello world"},
		{"ﬁle", "file"},
		{"ＣＡＦＥ", "cafe"},
	}
	for _, p := range pairs {
		if c := cos(embedOne(t, h, p[0]), embedOne(t, h, p[1])); c < 0.999999 {
			t.Errorf("%q vs %q: cos %v, want 1", p[0], p[1], c)
		}
	}
}

func TestHashSimilarity(t *testing.T) {
	h := newHash(t, HashOptions{})
	cases := []struct{ q, near, far string }{
		{"what did we decide about the connection pool size",
			"we decided the connection pool size should be 32",
			"my daughter loves painting sunsets at the beach"},
		{"Caroline went to the LGBTQ support group",
			"I went to a LGBTQ support group yesterday",
			"Melanie ran a charity race for mental health"},
		// Character n-grams make inflections related.
		{"painting", "paintings painted", "swimming"},
		// CJK: shared characters and bigrams.
		{"昨天我们讨论了连接池的大小", "连接池的大小应该是三十二", "我女儿喜欢在海边画日落"},
		{"東京で会議がありました", "明日も東京で会議です", "猫が好きです"},
		{"我喜欢吃北京烤鸭", "北京烤鸭很好吃", "今天下雨了"},
	}
	for _, c := range cases {
		q := embedOne(t, h, c.q)
		near, far := cos(q, embedOne(t, h, c.near)), cos(q, embedOne(t, h, c.far))
		if near <= far {
			t.Errorf("%q: near %q cos %.3f <= far %q cos %.3f", c.q, c.near, near, c.far, far)
		}
		if near < 0.1 {
			t.Errorf("%q vs %q: cos %.3f, want a clear signal", c.q, c.near, near)
		}
	}
}

// Unrelated random texts must be nearly orthogonal: the signed hashing keeps
// the expected cosine of disjoint feature sets at 0.
func TestHashUnrelatedNearZero(t *testing.T) {
	h := newHash(t, HashOptions{})
	rng := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		b := make([]byte, 4+rng.IntN(6))
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return string(b)
	}
	var sum float64
	const n = 200
	for i := 0; i < n; i++ {
		var a, b []string
		for j := 0; j < 20; j++ {
			a, b = append(a, word()), append(b, word())
		}
		sum += cos(embedOne(t, h, strings.Join(a, " ")), embedOne(t, h, strings.Join(b, " ")))
	}
	if mean := sum / n; math.Abs(mean) > 0.02 {
		t.Fatalf("mean cosine of unrelated texts %.4f, want about 0", mean)
	}
}

func TestHashContextCancel(t *testing.T) {
	h := newHash(t, HashOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	texts := make([]string, 100)
	for i := range texts {
		texts[i] = "text " + strconv.Itoa(i)
	}
	if _, err := h.Embed(ctx, texts); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

func FuzzHash(f *testing.F) {
	for _, s := range []string{"", "hello world", "昨天 上周", "\xff\xfe", "ﬁ ＡＢＣ", "a\u0301b"} {
		f.Add(s)
	}
	h, err := NewHash(HashOptions{Dim: 64})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := h.AppendVector(nil, s)
		if len(v) != 64 {
			t.Fatalf("len %d", len(v))
		}
		n := norm2(v)
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("non-finite %v", x)
			}
		}
		if n != 0 && math.Abs(n-1) > 1e-5 {
			t.Fatalf("norm %v", n)
		}
	})
}

func benchText(rng *rand.Rand, n int) string {
	words := strings.Fields("the a we decided connection pool size should be thirty two because latency " +
		"went up yesterday after deploy Caroline Melanie painting support group charity race beach sunset " +
		"memory agent recall session meeting notes database index query")
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[rng.IntN(len(words))])
	}
	return b.String()[:n]
}

func BenchmarkHash(b *testing.B) {
	for _, dim := range []int{384, 1024} {
		for _, size := range []int{50, 200, 1000} {
			b.Run("dim="+strconv.Itoa(dim)+"/bytes="+strconv.Itoa(size), func(b *testing.B) {
				h := newHash(b, HashOptions{Dim: dim})
				rng := rand.New(rand.NewPCG(42, uint64(size)))
				texts := make([]string, 256)
				for i := range texts {
					texts[i] = benchText(rng, size)
				}
				dst := make([]float32, 0, dim)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					dst = h.AppendVector(dst[:0], texts[i&255])
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "texts/s")
			})
		}
	}
	// batch=50 is a cold recall's batch under an agent filter (50
	// candidates and the query), batch=23 under a session filter;
	// memo=cold embeds each batch with a new embedder, whose stem memos
	// are empty as in a new process.
	for _, bc := range []struct {
		batch, workers int
		cold           bool
	}{{50, 1, false}, {50, 2, false}, {50, 1, true}, {50, 2, true}, {23, 1, true}, {23, 2, true}, {64, 1, false}, {1024, 1, false}, {1024, 2, false}} {
		memo := "warm"
		if bc.cold {
			memo = "cold"
		}
		b.Run(fmt.Sprintf("dim=384/bytes=200/batch=%d/workers=%d/memo=%s", bc.batch, bc.workers, memo), func(b *testing.B) {
			h := newHash(b, HashOptions{Workers: bc.workers})
			rng := rand.New(rand.NewPCG(42, 200))
			texts := make([]string, bc.batch)
			for i := range texts {
				texts[i] = benchText(rng, 200)
			}
			b.SetBytes(int64(bc.batch) * 200)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if bc.cold {
					h = newHash(b, HashOptions{Workers: bc.workers})
				}
				if _, err := h.Embed(context.Background(), texts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*float64(bc.batch)/b.Elapsed().Seconds(), "texts/s")
		})
	}
	b.Run("dim=384/bytes=200/lang=zh", func(b *testing.B) {
		h := newHash(b, HashOptions{})
		text := strings.Repeat("昨天我们讨论了连接池的大小，", 5)[:198]
		dst := make([]float32, 0, 384)
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			dst = h.AppendVector(dst[:0], text)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "texts/s")
	})
}

func TestHashStopwords(t *testing.T) {
	h := newHash(t, HashOptions{})
	// A text of stopwords only is still a unit vector, not zero.
	if n := norm2(embedOne(t, h, "what did you do")); math.Abs(n-1) > 1e-5 {
		t.Fatalf("stopword-only text: norm %v", n)
	}
	// Shared stopwords barely count; a shared content word does.
	q := embedOne(t, h, "what did you think about the concert")
	stop := cos(q, embedOne(t, h, "what did you say to them about it"))
	content := cos(q, embedOne(t, h, "concert tickets sold out"))
	if content <= stop {
		t.Fatalf("content-word overlap cos %.3f <= stopword overlap cos %.3f", content, stop)
	}
	// The same for Chinese function characters (hash-v3): sharing "我",
	// "的", "了", "什么" counts less than sharing "过敏".
	q = embedOne(t, h, "我对什么过敏？")
	stop = cos(q, embedOne(t, h, "我的什么都好了吗"))
	content = cos(q, embedOne(t, h, "虾过敏"))
	if content <= stop {
		t.Fatalf("zh content overlap cos %.3f <= function-character overlap cos %.3f", content, stop)
	}
	if want := 127 + utf8.RuneCountInString(hashStopCJK); len(hashStopSet) != want {
		t.Fatalf("%d stopwords, want %d", len(hashStopSet), want)
	}
}

func TestHashParallelEqualsSequential(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	in := make([]string, 1000)
	for i := range in {
		in[i] = benchText(rng, 20+rng.IntN(300))
	}
	in[500] = "昨天我们讨论了连接池的大小，"
	seq, err := newHash(t, HashOptions{Workers: 1}).Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	// 1000 texts on 4 goroutines, a cold recall's 50 on 2 and 3, and the
	// smallest batch that is split.
	for _, c := range []struct{ n, workers int }{{1000, 4}, {50, 2}, {50, 3}, {2 * hashParallelMin, 2}} {
		par, err := newHash(t, HashOptions{Workers: c.workers}).Embed(context.Background(), in[:c.n])
		if err != nil {
			t.Fatal(err)
		}
		if len(par) != c.n {
			t.Fatalf("%d texts, workers %d: %d vectors", c.n, c.workers, len(par))
		}
		for i := range par {
			for j := range par[i] {
				if seq[i][j] != par[i][j] {
					t.Fatalf("%d texts, workers %d: text %d component %d: sequential %v parallel %v", c.n, c.workers, i, j, seq[i][j], par[i][j])
				}
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := newHash(t, HashOptions{Workers: 4}).Embed(ctx, in); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if _, err := NewHash(HashOptions{Workers: -1}); !errors.Is(err, ErrOptions) {
		t.Fatalf("Workers -1: %v", err)
	}
}

// TestHashStems: an English word's feature is its Porter2 stem, so
// inflections share it; identifiers, short words and non-ASCII words hash
// as they are.
func TestHashStems(t *testing.T) {
	var s hashScratch
	h := func(w string) uint64 { return s.stemHash([]rune(w), wordHash([]rune(w))) }
	for _, c := range []struct{ a, b string }{{"painting", "paint"}, {"painted", "paints"}, {"connections", "connect"}} {
		if h(c.a) != h(c.b) {
			t.Errorf("%q and %q do not share a stem feature", c.a, c.b)
		}
	}
	for _, w := range []string{"db2", "été", "as", "k8s", "Paint"} {
		if h(w) != wordHash([]rune(w)) {
			t.Errorf("%q was stemmed", w)
		}
	}
	// The memo gives the same answers.
	if h("painting") != wordHash([]rune("paint")) || len(s.stems) == 0 {
		t.Fatal("memo")
	}
	// Through Embed: the word features of inflected texts coincide, so
	// with character n-grams off, "painted walls" and "paints wall" are
	// the same vector.
	e := newHash(t, HashOptions{CharGram: -1})
	if c := cos(embedOne(t, e, "painted walls"), embedOne(t, e, "paints wall")); c < 0.999999 {
		t.Errorf("inflected texts without n-grams: cosine %.6f, want 1", c)
	}
}
