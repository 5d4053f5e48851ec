package use

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/lazymem/lazymem/bench/locomo"
	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/internal/testenv"
)

// locomoDir holds the LoCoMo conversations and their USE-lite vectors,
// computed by the reference implementation, outside the repository.
const locomoDir = "../../../../shared/data/locomo"

func loadLoCoMo(t *testing.T) []*locomo.Conversation {
	t.Helper()
	if _, err := os.Stat(locomoDir); err != nil {
		testenv.Missing(t, "LoCoMo data absent (%v)", err)
	}
	convs, err := locomo.Load(locomoDir)
	if err != nil {
		t.Fatal(err)
	}
	return convs
}

// TestLoCoMoTokenizerMatchesPort runs the tokenizer and the naive port of
// the reference on LoCoMo turns and questions with the real vocabulary:
// the first 300 by default, all of them (4592, about 25 s) with
// LAZYMEM_USE_FULL=1.
func TestLoCoMoTokenizerMatchesPort(t *testing.T) {
	convs := loadLoCoMo(t)
	tok := loadVocab(t)
	full := os.Getenv("LAZYMEM_USE_FULL") == "1"
	n := 0
	check := func(s string) {
		n++
		if got, want := tok.Encode(s), refEncode(tok.pieces, tok.scores, s); !equalIDs(got, want) {
			t.Errorf("%q: got %v, the reference port %v", s, got, want)
		}
	}
	for _, c := range convs {
		for _, turn := range c.Turns() {
			if n == 300 && !full {
				break
			}
			check(turn.Text)
		}
		for _, q := range c.QA {
			if n == 300 && !full {
				break
			}
			check(q.Question)
		}
	}
	t.Logf("%d texts", n)
}

// TestLoCoMoVectors compares Embed with the reference's vectors of the
// LoCoMo texts (N.turns.fvecs, N.speaker_turns.fvecs, N.questions.fvecs).
// By default the first 64 turns of the first conversation;
// LAZYMEM_USE_FULL=1 runs every turn, speaker-prefixed turn and question of
// every conversation (7.5k texts, about a minute).
func TestLoCoMoVectors(t *testing.T) {
	dir := modelDir(t)
	convs := loadLoCoMo(t)
	u, err := New(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	full := os.Getenv("LAZYMEM_USE_FULL") == "1"
	if !full {
		convs = convs[:1]
	}
	minCos, sumCos, maxAbs, count := 2.0, 0.0, 0.0, 0
	for _, c := range convs {
		var texts, speakerTexts []string
		for _, turn := range c.Turns() {
			texts = append(texts, turn.Text)
			speakerTexts = append(speakerTexts, turn.Speaker+": "+turn.Text)
		}
		var qs []string
		for _, q := range c.QA {
			qs = append(qs, q.Question)
		}
		for _, set := range []struct {
			file  string
			texts []string
		}{{"turns", texts}, {"speaker_turns", speakerTexts}, {"questions", qs}} {
			ref, err := codec.ReadAllFvecs(filepath.Join(locomoDir, c.ID+"."+set.file+".fvecs"))
			if err != nil {
				t.Fatal(err)
			}
			if len(ref) != len(set.texts) {
				t.Fatalf("%s.%s: %d vectors for %d texts", c.ID, set.file, len(ref), len(set.texts))
			}
			in := set.texts
			if !full {
				if set.file != "turns" {
					continue
				}
				in = in[:64]
			}
			got, err := u.Embed(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				var dot, na, nb float64
				for k := range got[i] {
					a, b := float64(got[i][k]), float64(ref[i][k])
					dot += a * b
					na += a * a
					nb += b * b
					maxAbs = max(maxAbs, math.Abs(a-b))
				}
				cos := dot / math.Sqrt(na*nb)
				if cos < 0.9999 {
					t.Errorf("%s.%s[%d] %q: cosine %.6f with the reference", c.ID, set.file, i, in[i], cos)
				}
				minCos = min(minCos, cos)
				sumCos += cos
				count++
			}
		}
	}
	t.Logf("%d texts: cosine min %.7f mean %.7f, max abs diff %.3g", count, minCos, sumCos/float64(count), maxAbs)
}
