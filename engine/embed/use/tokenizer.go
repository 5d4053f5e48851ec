package use

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Tokenizer constants of the TF.js reference (@tensorflow-models/
// universal-sentence-encoder, tokenizer/index.ts). Never change: they are
// part of what makes the ids equal to the reference's.
const (
	// spaceSymbol replaces every U+0020 and starts every non-empty text.
	spaceSymbol = '\u2581'
	// reservedPieces are the first vocabulary entries (unk, <s>, </s> and
	// three extra ids) that are never matched against text.
	reservedPieces = 6
	// unkID is the id of an unknown symbol; runs of them are merged.
	unkID = 0
	// maxVocab bounds the vocabulary a file may declare.
	maxVocab = 1 << 20
)

// Tokenizer is the SentencePiece unigram tokenizer of USE-lite as the TF.js
// reference implements it: NFKC, U+2581 for spaces and at the start, a
// Viterbi pass over a trie of pieces, unknown symbols as id 0 with score 0,
// consecutive unknowns merged. It reproduces the reference's quirks (ties
// go to the later candidate, an end position whose best score is exactly 0
// takes any candidate, the backward pass steps by the piece's UTF-16
// length) because the ids must equal the reference's. Safe for concurrent
// use: it is read-only after construction.
type Tokenizer struct {
	pieces []string
	scores []float64
	step   []int32 // UTF-16 length of each piece: the backward step
	// edges is the trie: key node<<21 | rune, value child node. Node 0 is
	// the root.
	edges map[uint64]int32
	// term[node] is the piece id ending at node, or -1.
	term []int32
	// prefixSafe: the vocabulary lets AppendIDsMax tokenize a prefix.
	prefixSafe bool
}

// tokScratch holds the per-call buffers of Encode.
type tokScratch struct {
	syms  []rune
	best  []float64
	words []int32
	// Lattice edges bucketed by end position (counting sort, stable in the
	// start position, as the reference's iteration order requires).
	es, ee, eid []int32
	count       []int32
	order       []int32
	out         []int32
	it          norm.Iter
	norm        []byte
}

// ParseVocab reads vocab.json: a JSON array of [piece, score] pairs, the id
// of a piece being its index.
func ParseVocab(data []byte) (*Tokenizer, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%w: vocab.json: %v", ErrCorrupt, err)
	}
	if len(raw) <= reservedPieces || len(raw) > maxVocab {
		return nil, fmt.Errorf("%w: vocab.json: %d entries, want %d..%d", ErrCorrupt, len(raw), reservedPieces+1, maxVocab)
	}
	pieces := make([]string, len(raw))
	scores := make([]float64, len(raw))
	for i, r := range raw {
		var pair []json.RawMessage
		if err := json.Unmarshal(r, &pair); err != nil || len(pair) != 2 {
			return nil, fmt.Errorf("%w: vocab.json: entry %d: want [piece, score], got %.40s", ErrCorrupt, i, r)
		}
		if err := json.Unmarshal(pair[0], &pieces[i]); err != nil {
			return nil, fmt.Errorf("%w: vocab.json: entry %d: piece: %v", ErrCorrupt, i, err)
		}
		if err := json.Unmarshal(pair[1], &scores[i]); err != nil || math.IsNaN(scores[i]) {
			return nil, fmt.Errorf("%w: vocab.json: entry %d: score %.40s", ErrCorrupt, i, pair[1])
		}
	}
	return NewTokenizer(pieces, scores)
}

// NewTokenizer builds a tokenizer from pieces and their scores (log
// probabilities), id = index. The first six pieces are reserved: never
// matched; piece 0 stands for unknown symbols.
func NewTokenizer(pieces []string, scores []float64) (*Tokenizer, error) {
	if len(pieces) != len(scores) {
		return nil, fmt.Errorf("%w: vocabulary: %d pieces, %d scores", ErrCorrupt, len(pieces), len(scores))
	}
	if len(pieces) <= reservedPieces || len(pieces) > maxVocab {
		return nil, fmt.Errorf("%w: vocabulary: %d pieces, want %d..%d", ErrCorrupt, len(pieces), reservedPieces+1, maxVocab)
	}
	t := &Tokenizer{
		pieces: pieces,
		scores: scores,
		step:   make([]int32, len(pieces)),
		edges:  make(map[uint64]int32, 4*len(pieces)),
		term:   []int32{-1},
	}
	for i, p := range pieces {
		if !utf8.ValidString(p) {
			return nil, fmt.Errorf("%w: vocabulary: piece %d is not valid UTF-8", ErrCorrupt, i)
		}
		// JavaScript's String.length: UTF-16 code units.
		n := 0
		for _, r := range p {
			n += utf16.RuneLen(r)
		}
		t.step[i] = int32(n)
		if i < reservedPieces {
			continue
		}
		node := int32(0)
		for _, r := range p {
			key := uint64(node)<<21 | uint64(r)
			child, ok := t.edges[key]
			if !ok {
				child = int32(len(t.term))
				t.term = append(t.term, -1)
				t.edges[key] = child
			}
			node = child
		}
		if node != 0 {
			// A piece given twice keeps the later id and score, as the
			// reference's trie insert does.
			t.term[node] = int32(i)
		}
	}
	// See AppendIDsMax. Piece 0 stands for one unknown code point and
	// must step back by one.
	t.prefixSafe = t.step[unkID] == 1
	hasSpace := false
	for i := reservedPieces; i < len(pieces); i++ {
		p := pieces[i]
		if p == string(spaceSymbol) {
			hasSpace = true
		}
		if int(t.step[i]) != utf8.RuneCountInString(p) || strings.ContainsRune(strings.TrimPrefix(p, string(spaceSymbol)), spaceSymbol) {
			t.prefixSafe = false
		}
	}
	t.prefixSafe = t.prefixSafe && hasSpace
	return t, nil
}

// VocabSize is the number of pieces; every id Encode returns is below it.
func (t *Tokenizer) VocabSize() int { return len(t.pieces) }

// Piece returns the text of piece id ("" when out of range).
func (t *Tokenizer) Piece(id int) string {
	if id < 0 || id >= len(t.pieces) {
		return ""
	}
	return t.pieces[id]
}

// Encode returns the ids of text.
func (t *Tokenizer) Encode(text string) []int32 {
	var s tokScratch
	return t.AppendIDs(nil, text, &s)
}

// normalize applies the reference's processInput: NFKC, every U+0020
// becomes U+2581, and a U+2581 goes first unless the text is empty.
func (s *tokScratch) normalize(text string) []rune {
	s.syms = s.syms[:0]
	b := s.norm[:0]
	if norm.NFKC.QuickSpanString(text) == len(text) {
		b = append(b, text...)
	} else {
		s.it.InitString(norm.NFKC, text)
		for !s.it.Done() {
			b = append(b, s.it.Next()...)
		}
	}
	s.norm = b
	if len(b) == 0 {
		return s.syms
	}
	s.syms = append(s.syms, spaceSymbol)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		b = b[n:]
		if r == ' ' {
			r = spaceSymbol
		}
		s.syms = append(s.syms, r)
	}
	return s.syms
}

// AppendIDs appends the ids of text to dst, using s for its buffers.
func (t *Tokenizer) AppendIDs(dst []int32, text string, s *tokScratch) []int32 {
	return t.encode(dst, s.normalize(text), s)
}

// AppendIDsMax appends the first max ids of text to dst: the same ids as
// AppendIDs truncated to max, but on a long text it tokenizes only a prefix
// long enough to hold them, so a megabyte of text costs what its first few
// hundred words do. That is exact when the vocabulary has "▁" as a piece,
// no piece with "▁" past its start, and no piece outside the BMP (true of
// USE-lite's): every "▁" then starts a token on every lattice path, so the
// encoding of the text up to any "▁" is a prefix of the whole encoding.
// Other vocabularies tokenize the whole text.
func (t *Tokenizer) AppendIDsMax(dst []int32, text string, max int, s *tokScratch) []int32 {
	if max <= 0 {
		return dst
	}
	syms := s.normalize(text)
	base := len(dst)
	if t.prefixSafe {
		// Try prefixes that end before a "▁", growing 4x while they
		// yield fewer than max ids (runs of unknown symbols collapse
		// into one id, so no symbol count is enough in advance).
		for limit := 4 * max; limit < len(syms); limit *= 4 {
			cut := limit
			for cut < len(syms) && syms[cut] != spaceSymbol {
				cut++
			}
			if cut == len(syms) {
				break
			}
			dst = t.encode(dst[:base], syms[:cut], s)
			if len(dst)-base >= max {
				return dst[:base+max]
			}
		}
	}
	dst = t.encode(dst[:base], syms, s)
	if len(dst)-base > max {
		dst = dst[:base+max]
	}
	return dst
}

// encode runs the lattice, the Viterbi pass and the backward pass over
// normalized symbols.
func (t *Tokenizer) encode(dst []int32, syms []rune, s *tokScratch) []int32 {
	n := len(syms)
	if n == 0 {
		return dst
	}
	// Lattice: every piece that starts at i, shortest first; an unknown
	// symbol (id 0, score 0) when none does.
	s.es, s.ee, s.eid = s.es[:0], s.ee[:0], s.eid[:0]
	for i := 0; i < n; i++ {
		found := false
		node := int32(0)
		for j := i; j < n; j++ {
			child, ok := t.edges[uint64(node)<<21|uint64(syms[j])]
			if !ok {
				break
			}
			node = child
			if id := t.term[node]; id >= 0 {
				s.es = append(s.es, int32(i))
				s.ee = append(s.ee, int32(j+1))
				s.eid = append(s.eid, id)
				found = true
			}
		}
		if !found {
			s.es = append(s.es, int32(i))
			s.ee = append(s.ee, int32(i+1))
			s.eid = append(s.eid, -1) // unknown: id 0, score 0, length 1
		}
	}
	// Visit the edges by end position, then start position (the
	// reference iterates nodes[end] as an object keyed by start).
	s.count = growInt32(s.count, n+2)
	clear(s.count)
	for _, e := range s.ee {
		s.count[e+1]++
	}
	for e := 1; e < len(s.count); e++ {
		s.count[e] += s.count[e-1]
	}
	s.order = growInt32(s.order, len(s.ee))
	for k, e := range s.ee {
		s.order[s.count[e]] = int32(k)
		s.count[e]++
	}
	s.best = growFloat64(s.best, n+1)
	clear(s.best)
	s.words = growInt32(s.words, n+1)
	clear(s.words)
	for _, k := range s.order {
		start, end, id := s.es[k], s.ee[k], s.eid[k]
		score := 0.0
		if id >= 0 {
			score = t.scores[id]
		} else {
			id = unkID
		}
		score += s.best[start]
		if s.best[end] == 0 || score >= s.best[end] {
			s.best[end] = score
			s.words[end] = id
		}
	}
	// Backward pass, stepping by the UTF-16 length of the chosen piece as
	// the reference does (a zero-length piece steps by one, where the
	// reference would loop forever).
	out := s.out[:0]
	for i := n; i > 0; {
		id := s.words[i]
		out = append(out, id)
		step := int(t.step[id])
		if step < 1 {
			step = 1
		}
		i -= step
	}
	s.out = out
	// Reverse, merging runs of unknowns.
	prevUnk := false
	for k := len(out) - 1; k >= 0; k-- {
		id := out[k]
		if !(prevUnk && id == unkID) {
			dst = append(dst, id)
		}
		prevUnk = id == unkID
	}
	return dst
}

// String renders ids as their pieces joined by spaces, for messages.
func (t *Tokenizer) String(ids []int32) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t.Piece(int(id)))
	}
	return b.String()
}

func growInt32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

func growFloat64(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}
