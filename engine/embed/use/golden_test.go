package use

import (
	"bufio"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/lazymem/lazymem/internal/testenv"
)

// goldenPath is the reference file of 66 texts with the TF.js ids and
// embeddings, outside the repository.
const goldenPath = "../../../../shared/data/use-lite/golden.jsonl"

type goldenCase struct {
	Text      string    `json:"text"`
	IDs       []int32   `json:"ids"`
	Embedding []float32 `json:"embedding"`
}

func loadGolden(t testing.TB) []goldenCase {
	t.Helper()
	f, err := os.Open(goldenPath)
	if err != nil {
		testenv.Missing(t, "golden file absent (%v): skipping the reference comparison", err)
	}
	defer f.Close()
	var out []goldenCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var c goldenCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", goldenPath, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", goldenPath, err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no cases", goldenPath)
	}
	return out
}

// modelDir is where the tests look for the unpacked npm package:
// $LAZYMEM_USE_DIR, else <repo>/.cache/use-lite.
func modelDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("LAZYMEM_USE_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", ".cache", "use-lite")
	}
	if _, err := os.Stat(filepath.Join(dir, "model.json")); err != nil {
		testenv.Missing(t, "USE-lite model absent in %s (set LAZYMEM_USE_DIR or run engine/embed/use/fetch.sh): %v", dir, err)
	}
	return dir
}

// loadVocab parses the model's vocab.json (skipping without the model).
func loadVocab(t *testing.T) *Tokenizer {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(modelDir(t), "vocab.json"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := ParseVocab(data)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestGoldenTokenIDs(t *testing.T) {
	cases := loadGolden(t)
	tok := loadVocab(t)
	match := 0
	for _, c := range cases {
		got := tok.Encode(c.Text)
		if !equalIDs(got, c.IDs) {
			t.Errorf("%q:\n got  %v\n      %s\n want %v\n      %s", c.Text, got, tok.String(got), c.IDs, tok.String(c.IDs))
			continue
		}
		match++
	}
	t.Logf("token ids equal to the reference for %d/%d texts", match, len(cases))
}

func equalIDs(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestGoldenEmbeddings(t *testing.T) {
	dir := modelDir(t)
	cases := loadGolden(t)
	u, err := New(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("model digest %s, name %s", u.Digest(), u.Name())
	texts := make([]string, len(cases))
	for i, c := range cases {
		texts[i] = c.Text
	}
	got, err := u.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	minCos, sumCos, maxAbs := 2.0, 0.0, 0.0
	for i, c := range cases {
		if len(c.Embedding) != Dim || len(got[i]) != Dim {
			t.Fatalf("%q: got %d floats, golden %d", c.Text, len(got[i]), len(c.Embedding))
		}
		var dot, na, nb float64
		for k := range got[i] {
			a, b := float64(got[i][k]), float64(c.Embedding[k])
			dot += a * b
			na += a * a
			nb += b * b
			maxAbs = max(maxAbs, math.Abs(a-b))
		}
		cos := dot / math.Sqrt(na*nb)
		if cos < 0.9999 {
			t.Errorf("%q: cosine %.6f with the reference, want >= 0.9999", c.Text, cos)
		}
		minCos = min(minCos, cos)
		sumCos += cos
	}
	t.Logf("%d texts: cosine min %.7f mean %.7f, max abs diff %.3g", len(cases), minCos, sumCos/float64(len(cases)), maxAbs)
}
