package segment

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/lazymem/lazymem/bench/zipf"
)

// encodeWordsRef is encodeWordsMiss one token at a time, without the
// scan ahead: the reference its output must equal byte for byte (the
// stored text frames do not change).
func encodeWordsRef(dst []byte, ids *wordIDs, text []byte, misses *[][]byte) []byte {
	prevWord := false
	for s := text; len(s) > 0; {
		tok, w := wordToken(s)
		s = s[len(tok):]
		if !w {
			if len(tok) == 1 && tok[0] == ' ' && prevWord && len(s) > 0 {
				prevWord = false
				continue
			}
			dst = binary.AppendUvarint(dst, tokSep)
			dst = binary.AppendUvarint(dst, uint64(len(tok)))
			dst = append(dst, tok...)
			prevWord = false
			continue
		}
		if id, ok := ids.get(tok); ok {
			dst = binary.AppendUvarint(dst, uint64(id)+tokWord)
		} else {
			dst = binary.AppendUvarint(dst, tokLiteral)
			dst = binary.AppendUvarint(dst, uint64(len(tok)))
			dst = append(dst, tok...)
			if misses != nil {
				*misses = append(*misses, tok)
			}
		}
		prevWord = true
	}
	return dst
}

// TestEncodeWordsBatched checks that the scan ahead codes every text as
// the token-at-a-time reference does, with the same misses, across batch
// boundaries (texts of many more tokens than wordBatch, a space last in a
// batch, long words).
func TestEncodeWordsBatched(t *testing.T) {
	recs, err := zipf.Generate(zipf.Config{Seed: 3, Records: 3000})
	if err != nil {
		t.Fatal(err)
	}
	ids := newWordIDs()
	var texts [][]byte
	for i, r := range recs {
		texts = append(texts, []byte(r.Text))
		if i%2 == 0 { // half the corpus's words in the vocabulary
			for s := []byte(r.Text); len(s) > 0; {
				tok, w := wordToken(s)
				s = s[len(tok):]
				if w && !ids.has(tok) {
					ids.set(tok, uint32(i))
				}
			}
		}
	}
	var all []byte
	for _, s := range texts {
		all = append(all, s...)
		all = append(all, ' ')
	}
	texts = append(texts, all, []byte(" "), []byte("a"), []byte("a b"), []byte("a  b "),
		bytes.Repeat([]byte("ab "), wordBatch), bytes.Repeat([]byte("ab "), wordBatch/2),
		bytes.Repeat([]byte("averyveryverylongword, "), 3*wordBatch))
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab .,\xc3\xa9\xe4\xb8\xad1")
	for range 2000 {
		b := make([]byte, rng.IntN(400))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		texts = append(texts, b)
	}
	for i, s := range texts {
		var m1, m2 [][]byte
		got := encodeWordsMiss(nil, ids, s, &m1)
		want := encodeWordsRef(nil, ids, s, &m2)
		if !bytes.Equal(got, want) {
			t.Fatalf("text %d (%q): coded %x, want %x", i, s, got, want)
		}
		if len(m1) != len(m2) {
			t.Fatalf("text %d: %d misses, want %d", i, len(m1), len(m2))
		}
		for j := range m1 {
			if !bytes.Equal(m1[j], m2[j]) {
				t.Fatalf("text %d: miss %d %q, want %q", i, j, m1[j], m2[j])
			}
		}
	}
}
