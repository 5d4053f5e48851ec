package eval

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lazymem/lazymem/bench/eager"
	"github.com/lazymem/lazymem/bench/locomo"
	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/engine/embed"
)

// locomoDir is the shared LoCoMo directory; the test skips without it.
func locomoDir(t testing.TB) string { return dataDir(t) }

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

func TestReplayPairs(t *testing.T) {
	texts := []string{"alpha", "beta", "alpha"}
	vecs := [][]float32{{1, 0, 0}, {0, 1, 0}, {1, 0, 0.00001}}
	r, err := NewReplay(texts, vecs, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Dim() != 3 || r.Len() != 2 || !strings.HasPrefix(r.Name(), "replay-pairs-") || !strings.HasSuffix(r.Name(), "-d3") {
		t.Fatalf("dim %d len %d name %q", r.Dim(), r.Len(), r.Name())
	}
	vs, err := r.Embed(context.Background(), []string{"beta", "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	if vs[0][1] != 1 || vs[1][0] != 1 {
		t.Fatalf("vectors %v", vs)
	}
	vs[0][1] = 42 // a copy: the store is untouched
	if v, _ := r.Lookup("beta"); v[1] != 1 {
		t.Fatal("Embed returned the stored slice")
	}
	// Other vectors, other name.
	r2, err := NewReplay([]string{"alpha", "beta"}, [][]float32{{1, 0, 0}, {0, 0, 1}}, ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r2.Name() == r.Name() {
		t.Fatal("different vectors, same name")
	}

	_, err = r.Embed(context.Background(), []string{"beta", "gamma " + strings.Repeat("long ", 40), "delta"})
	if !errors.Is(err, ErrUnknownText) || !strings.Contains(err.Error(), `"gamma long long`) ||
		!strings.Contains(err.Error(), "...") || !strings.Contains(err.Error(), "2 of 3") {
		t.Fatalf("err %v", err)
	}

	for name, c := range map[string]struct {
		texts []string
		vecs  [][]float32
	}{
		"count":     {[]string{"a", "b"}, [][]float32{{1}}},
		"dim":       {[]string{"a", "b"}, [][]float32{{1, 2}, {1}}},
		"empty":     {[]string{"a"}, [][]float32{{}}},
		"conflict":  {[]string{"a", "a"}, [][]float32{{1, 0}, {0, 1}}},
		"no vector": {nil, nil},
	} {
		if _, err := NewReplay(c.texts, c.vecs, ReplayOptions{}); !errors.Is(err, ErrSource) {
			t.Errorf("%s: err %v, want ErrSource", name, err)
		}
	}
}

func TestReplayFallback(t *testing.T) {
	h, err := embed.NewHash(embed.HashOptions{Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	fb := eager.NewMeter(h, 0)
	known := []float32{1, 0, 0, 0, 0, 0, 0, 0}
	r, err := NewReplay([]string{"known"}, [][]float32{known}, ReplayOptions{Fallback: fb})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(r.Name(), "+hash-v3-d8") {
		t.Fatalf("name %q", r.Name())
	}
	vs, err := r.Embed(context.Background(), []string{"x", "known", "y"})
	if err != nil {
		t.Fatal(err)
	}
	x, err := h.Embed(context.Background(), []string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	if u := fb.Usage(); vs[1][0] != 1 || cos(vs[0], x[0]) < 0.999999 || u.Calls != 1 || u.Texts != 2 {
		t.Fatalf("fallback: calls %d texts %d", u.Calls, u.Texts)
	}
	if _, err := NewReplay([]string{"k"}, [][]float32{{1, 2}}, ReplayOptions{Fallback: fb}); !errors.Is(err, ErrConfig) {
		t.Fatalf("dim mismatch: err %v", err)
	}
}

func TestReplayLoCoMo(t *testing.T) {
	dir := locomoDir(t)
	r, err := LoadLoCoMoReplay(dir, LoCoMoReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Dim() != 512 {
		t.Fatalf("dim %d, want 512", r.Dim())
	}
	if !strings.HasPrefix(r.Name(), "replay-locomo-") || !strings.HasSuffix(r.Name(), "-d512") {
		t.Fatalf("name %q", r.Name())
	}
	convs, err := locomo.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(convs) < 1 {
		t.Fatal("no conversations")
	}
	ctx := context.Background()
	for _, c := range convs {
		turns := c.Turns()
		// Read the files independently of the loader and compare.
		for _, set := range []string{"turns", "speaker_turns", "questions"} {
			want, err := codec.ReadAllFvecs(filepath.Join(dir, c.ID+"."+set+".fvecs"))
			if err != nil {
				t.Fatal(err)
			}
			var in []string
			switch set {
			case "turns":
				for _, tu := range turns {
					in = append(in, tu.Text)
				}
			case "speaker_turns":
				for _, tu := range turns {
					in = append(in, SpeakerTurnText(tu.Speaker, tu.Text))
				}
			case "questions":
				for _, q := range c.QA {
					in = append(in, q.Question)
				}
			}
			if len(in) != len(want) {
				t.Fatalf("%s.%s: %d texts, %d vectors", c.ID, set, len(in), len(want))
			}
			got, err := r.Embed(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if len(got[i]) != 512 || len(want[i]) != 512 {
					t.Fatalf("%s.%s[%d]: dims %d %d", c.ID, set, i, len(got[i]), len(want[i]))
				}
				for j := range want[i] {
					if d := got[i][j] - want[i][j]; d > 1e-4 || d < -1e-4 {
						t.Fatalf("%s.%s[%d] (%q): component %d is %v, file has %v", c.ID, set, i, in[i], j, got[i][j], want[i][j])
					}
				}
			}
		}
	}
	// The digest follows the files: a subset of them gets another name,
	// the same files the same name.
	again, err := LoadLoCoMoReplay(dir, LoCoMoReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := LoadLoCoMoReplay(dir, LoCoMoReplayOptions{IDs: []string{convs[0].ID}, Sets: []string{"turns"}})
	if err != nil {
		t.Fatal(err)
	}
	if again.Name() != r.Name() || sub.Name() == r.Name() {
		t.Fatalf("names %q %q %q", r.Name(), again.Name(), sub.Name())
	}
	if sub.Len() >= r.Len() {
		t.Fatalf("subset has %d texts, all %d", sub.Len(), r.Len())
	}
	// A speaker turn is unknown to the turns-only subset.
	tu := convs[0].Turns()[0]
	if _, err := sub.Embed(ctx, []string{SpeakerTurnText(tu.Speaker, tu.Text)}); !errors.Is(err, ErrUnknownText) {
		t.Fatalf("err %v", err)
	}
}

func TestReplayLoCoMoErrors(t *testing.T) {
	dir := locomoDir(t)
	if _, err := LoadLoCoMoReplay(dir, LoCoMoReplayOptions{Sets: []string{"answers"}}); !errors.Is(err, ErrConfig) {
		t.Fatalf("bad set: %v", err)
	}
	if _, err := LoadLoCoMoReplay(dir, LoCoMoReplayOptions{IDs: []string{"nope"}}); !errors.Is(err, ErrSource) {
		t.Fatalf("missing id: %v", err)
	}
	// A conversation whose vector file holds one vector too few.
	tmp := t.TempDir()
	data, err := os.ReadFile(filepath.Join(dir, "26.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "26.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	vecs, err := codec.ReadAllFvecs(filepath.Join(dir, "26.turns.fvecs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := codec.WriteAllFvecs(filepath.Join(tmp, "26.turns.fvecs"), vecs[:len(vecs)-1]); err != nil {
		t.Fatal(err)
	}
	_, err = LoadLoCoMoReplay(tmp, LoCoMoReplayOptions{Sets: []string{"turns"}})
	if !errors.Is(err, ErrSource) || !strings.Contains(err.Error(), "26.turns.fvecs") {
		t.Fatalf("short file: %v", err)
	}
	// A missing vector file is named.
	_, err = LoadLoCoMoReplay(tmp, LoCoMoReplayOptions{Sets: []string{"questions"}})
	if !errors.Is(err, ErrSource) || !strings.Contains(err.Error(), "26.questions.fvecs") {
		t.Fatalf("missing file: %v", err)
	}
}

func BenchmarkReplay(b *testing.B) {
	dir := locomoDir(b)
	r, err := LoadLoCoMoReplay(dir, LoCoMoReplayOptions{IDs: []string{"26"}})
	if err != nil {
		b.Fatal(err)
	}
	convs, err := locomo.LoadFile(filepath.Join(dir, "26.json"))
	if err != nil {
		b.Fatal(err)
	}
	var in []string
	for _, tu := range convs[0].Turns()[:64] {
		in = append(in, tu.Text)
	}
	b.Run("dim=512/batch=64", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := r.Embed(context.Background(), in); err != nil {
				b.Fatal(err)
			}
		}
	})
}
