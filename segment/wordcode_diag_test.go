//go:build diag

// A word-level text coder, prototyped and measured against the log's text
// frames (log-size.md section 7):
//
//	LAZYMEM_LOG_DIR=/path/to/store/log go test -tags diag ./segment -run 'TestWordCode' -v
//
// Not used by the log: a measurement.

package segment

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// wordVocab is a log-wide vocabulary: words by falling frequency, so that
// the most frequent take one-byte ids.
type wordVocab struct {
	ids   map[string]uint32
	words [][]byte
	// flat holds the words one after the other, ends[i] the end of word i
	// in it: what the decoder reads (one allocation, no slice headers).
	flat []byte
	ends []uint32
}

// add appends w to the vocabulary.
func (v *wordVocab) add(w []byte) {
	v.ids[string(w)] = uint32(len(v.words))
	v.words = append(v.words, slices.Clone(w))
	v.flat = append(v.flat, w...)
	v.ends = append(v.ends, uint32(len(v.flat)))
}

// isWordByte: letters, digits and every byte of a multi-byte UTF-8
// character; everything else separates words.
func isWordByte(c byte) bool {
	return c >= 0x80 || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// nextToken returns the token at the start of s (a maximal run of word
// bytes, or of other bytes) and whether it is a word.
func nextToken(s []byte) (tok []byte, word bool) {
	w := isWordByte(s[0])
	i := 1
	for i < len(s) && isWordByte(s[i]) == w {
		i++
	}
	return s[:i], w
}

// buildVocab keeps the words of texts seen at least minCount times, at
// most max of them, the most frequent first.
func buildVocab(texts [][]byte, max, minCount int) *wordVocab {
	counts := map[string]int{}
	for _, s := range texts {
		for len(s) > 0 {
			tok, w := nextToken(s)
			s = s[len(tok):]
			if w {
				counts[string(tok)]++
			}
		}
	}
	type wc struct {
		w string
		c int
	}
	var all []wc
	for w, c := range counts {
		if c >= minCount {
			all = append(all, wc{w, c})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].c != all[j].c {
			return all[i].c > all[j].c
		}
		return all[i].w < all[j].w
	})
	if len(all) > max {
		all = all[:max]
	}
	v := &wordVocab{ids: make(map[string]uint32, len(all))}
	for _, x := range all {
		v.add([]byte(x.w))
	}
	return v
}

// bytes is the vocabulary as stored: each word and a length byte.
func (v *wordVocab) bytes() []byte {
	var b []byte
	for _, w := range v.words {
		b = binary.AppendUvarint(b, uint64(len(w)))
		b = append(b, w...)
	}
	return b
}

// Token codes: a vocabulary word is its id + wcWord; a single space
// between two words is implied.
const (
	wcLiteral = 0 // a word not in the vocabulary: length, bytes
	wcSep     = 1 // a separator other than the implied space: length, bytes
	wcWord    = 2
)

// wordEncode appends text's tokens to dst.
func wordEncode(dst []byte, v *wordVocab, text []byte) []byte {
	prevWord := false
	for s := text; len(s) > 0; {
		tok, w := nextToken(s)
		s = s[len(tok):]
		if !w {
			// A single space between two words is implied.
			if len(tok) == 1 && tok[0] == ' ' && prevWord && len(s) > 0 && isWordByte(s[0]) {
				prevWord = false
				continue
			}
			dst = binary.AppendUvarint(dst, wcSep)
			dst = binary.AppendUvarint(dst, uint64(len(tok)))
			dst = append(dst, tok...)
			prevWord = false
			continue
		}
		if prevWord {
			panic("two words in a row") // nextToken makes maximal runs
		}
		if id, ok := v.ids[string(tok)]; ok {
			dst = binary.AppendUvarint(dst, uint64(id)+wcWord)
		} else {
			dst = binary.AppendUvarint(dst, wcLiteral)
			dst = binary.AppendUvarint(dst, uint64(len(tok)))
			dst = append(dst, tok...)
		}
		prevWord = true
	}
	return dst
}

var errWordCodeDiag = errors.New("lazymem: segment: malformed word code")

// wordDecode appends the text of enc to dst.
func wordDecode(dst []byte, v *wordVocab, enc []byte) ([]byte, error) {
	prevWord := false // the previous token was a word: a word now follows a space
	for len(enc) > 0 {
		c, n := binary.Uvarint(enc)
		if n <= 0 {
			return dst, errWordCodeDiag
		}
		enc = enc[n:]
		switch {
		case c == wcSep:
			l, n := binary.Uvarint(enc)
			if n <= 0 || uint64(len(enc)-n) < l {
				return dst, errWordCodeDiag
			}
			dst = append(dst, enc[n:n+int(l)]...)
			enc = enc[n+int(l):]
			prevWord = false
			continue
		case c == wcLiteral:
			l, n := binary.Uvarint(enc)
			if n <= 0 || uint64(len(enc)-n) < l {
				return dst, errWordCodeDiag
			}
			if prevWord {
				dst = append(dst, ' ')
			}
			dst = append(dst, enc[n:n+int(l)]...)
			enc = enc[n+int(l):]
		default:
			id := c - wcWord
			if id >= uint64(len(v.ends)) {
				return dst, errWordCodeDiag
			}
			if prevWord {
				dst = append(dst, ' ')
			}
			start := uint32(0)
			if id > 0 {
				start = v.ends[id-1]
			}
			dst = append(dst, v.flat[start:v.ends[id]]...)
		}
		prevWord = true
	}
	return dst, nil
}

// wordExtract appends the text bytes [from, to) of enc to dst, walking
// the tokens before from without copying them: what a cold read of one
// record of a frame needs.
func wordExtract(dst []byte, v *wordVocab, enc []byte, from, to int) ([]byte, error) {
	pos := 0
	emit := func(b []byte) {
		lo, hi := max(from-pos, 0), min(to-pos, len(b))
		if lo < hi {
			dst = append(dst, b[lo:hi]...)
		}
		pos += len(b)
	}
	space := []byte{' '}
	prevWord := false
	for len(enc) > 0 && pos < to {
		c, n := binary.Uvarint(enc)
		if n <= 0 {
			return dst, errWordCodeDiag
		}
		enc = enc[n:]
		if c == wcSep || c == wcLiteral {
			l, n := binary.Uvarint(enc)
			if n <= 0 || uint64(len(enc)-n) < l {
				return dst, errWordCodeDiag
			}
			if c == wcLiteral && prevWord {
				emit(space)
			}
			emit(enc[n : n+int(l)])
			enc = enc[n+int(l):]
			prevWord = c == wcLiteral
			continue
		}
		id := c - wcWord
		if id >= uint64(len(v.ends)) {
			return dst, errWordCodeDiag
		}
		if prevWord {
			emit(space)
		}
		start := uint32(0)
		if id > 0 {
			start = v.ends[id-1]
		}
		emit(v.flat[start:v.ends[id]])
		prevWord = true
	}
	return dst, nil
}

func TestWordCodeRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab  c.,\n-é中\x00Z9 ")
	var texts [][]byte
	for range 2000 {
		b := make([]byte, rng.IntN(60))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		texts = append(texts, b)
	}
	texts = append(texts, []byte(""), []byte(" "), []byte("a"), []byte("a b"), []byte(" a "), []byte("a  b"), []byte("a.b c"))
	v := buildVocab(texts[:1000], 50, 2)
	for _, s := range texts {
		enc := wordEncode(nil, v, s)
		got, err := wordDecode(nil, v, enc)
		if err != nil || !bytes.Equal(got, s) {
			t.Fatalf("%q: decoded %q, %v", s, got, err)
		}
		for from := 0; from <= len(s); from++ {
			to := from + rng.IntN(len(s)-from+1)
			got, err := wordExtract(nil, v, enc, from, to)
			if err != nil || !bytes.Equal(got, s[from:to]) {
				t.Fatalf("%q [%d, %d): extracted %q, %v", s, from, to, got, err)
			}
		}
	}
}

// TestWordCodeDiag re-codes the texts of the log in LAZYMEM_LOG_DIR: the
// log's text frames (4 KiB of text each, zstd fastest with the log's
// dictionary from the first 512 KiB) against the same 4 KiB of text as
// word codes (vocabulary from the first 512 KiB or from the whole log,
// stored once and counted), zstd fastest with a dictionary of the first
// 512 KiB's codes. Every frame is decoded back and compared. Then the CPU
// of decoding every frame, each coder alternated three times.
func TestWordCodeDiag(t *testing.T) {
	l := openDiagLog(t)
	if err := l.Seal(); err != nil { // what a load left in the tail
		t.Fatal(err)
	}
	segs := sealedSegments(l)
	var chunks [][]byte // 4 KiB of text each, segment by segment
	var first []byte
	var firstRecs []sampleRec
	var total int64
	eachSegmentText(t, l, segs, func(m segMeta, payloads [][]byte, texts, lens []byte) {
		total += int64(len(texts))
		for o := 0; o < len(texts); o += frameBytes {
			chunks = append(chunks, slices.Clone(texts[o:min(len(texts), o+frameBytes)]))
		}
		if len(first) < dictSample {
			firstRecs = appendSampleRecs(firstRecs, m.first, payloads, lens, len(first))
			first = append(first, texts...)
		}
	})
	nFirst := 0 // chunks of the first 512 KiB
	for n := 0; nFirst < len(chunks) && n < len(first); nFirst++ {
		n += len(chunks[nFirst])
	}
	fmt.Printf("%d segments, %d frames, text %d bytes\n", len(segs), len(chunks), total)

	type coder struct {
		name   string
		frames [][]byte // stored frames
		fixed  int      // bytes stored once (the vocabulary, compressed)
		dict   []byte
		vocab  *wordVocab
	}
	// The log's own text frames.
	raw, _, err := buildDict(1, first, firstRecs)
	if err != nil {
		t.Fatal(err)
	}
	base := coder{name: "text frames (the log's)", dict: raw}
	{
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false), zstd.WithEncoderDict(raw))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range chunks {
			base.frames = append(base.frames, e.EncodeAll(c, nil))
		}
	}
	coders := []coder{base}
	for _, vc := range []struct {
		name     string
		texts    [][]byte
		max, min int
	}{
		{"words, vocabulary of the first 512 KiB", chunks[:nFirst], 1 << 20, 2},
		{"words, vocabulary of the whole log (>= 2 uses)", chunks, 1 << 24, 2},
		{"words, vocabulary of the whole log (>= 8 uses)", chunks, 1 << 24, 8},
		{"words, whole log, top 4096", chunks, 4096, 2},
	} {
		v := buildVocab(vc.texts, vc.max, vc.min)
		// The dictionary: the first 512 KiB's codes, in pieces as the
		// log's history (112 KiB).
		var sample []byte
		var contents [][]byte
		for _, c := range chunks[:nFirst] {
			x := wordEncode(nil, v, c)
			contents = append(contents, x)
			sample = append(sample, x...)
		}
		var hist []byte
		step := max(dictPiece, len(sample)/(dictHistory/dictPiece))
		for o := 0; o+dictPiece <= len(sample) && len(hist) < dictHistory; o += step {
			hist = append(hist, sample[o:o+dictPiece]...)
		}
		d, err := zstd.BuildDict(zstd.BuildDictOptions{ID: 2, Contents: contents, History: hist, Offsets: [3]int{1, 4, 8}, Level: zstd.SpeedFastest})
		if err != nil {
			t.Fatal(err)
		}
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false), zstd.WithEncoderDict(d))
		if err != nil {
			t.Fatal(err)
		}
		ve, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1))
		cd := coder{name: vc.name, dict: d, vocab: v, fixed: len(ve.EncodeAll(v.bytes(), nil))}
		for _, c := range chunks {
			cd.frames = append(cd.frames, e.EncodeAll(wordEncode(nil, v, c), nil))
		}
		coders = append(coders, cd)
	}
	// Online: the vocabulary grows as the log seals, a word entering it at
	// its second sighting (ids in order of entry, not of frequency); each
	// frame coded with the vocabulary as it stood when its segment sealed
	// (a decoder needs only ids below the frame's), the zstd dictionary
	// from the first 512 KiB's codes. The vocabulary stored is every word
	// that entered it.
	for _, seeded := range []bool{false, true} {
		v := &wordVocab{ids: map[string]uint32{}}
		name := "words, online (at the 2nd sighting)"
		if seeded {
			// The first 512 KiB's words by frequency first: the frequent
			// words keep short ids.
			v = buildVocab(chunks[:nFirst], 1<<20, 2)
			name = "words, online, seeded by the first 512 KiB"
		}
		seen := map[string]bool{}
		var sample []byte
		var contents [][]byte
		var coded [][]byte
		for k, c := range chunks {
			coded = append(coded, wordEncode(nil, v, c))
			if k < nFirst {
				contents = append(contents, coded[k])
				sample = append(sample, coded[k]...)
			}
			for s := c; len(s) > 0; {
				tok, w := nextToken(s)
				s = s[len(tok):]
				if !w {
					continue
				}
				if _, ok := v.ids[string(tok)]; ok {
					continue
				}
				if seen[string(tok)] {
					delete(seen, string(tok))
					v.add(tok)
				} else {
					seen[string(tok)] = true
				}
			}
		}
		var hist []byte
		step := max(dictPiece, len(sample)/(dictHistory/dictPiece))
		for o := 0; o+dictPiece <= len(sample) && len(hist) < dictHistory; o += step {
			hist = append(hist, sample[o:o+dictPiece]...)
		}
		d, err := zstd.BuildDict(zstd.BuildDictOptions{ID: 3, Contents: contents, History: hist, Offsets: [3]int{1, 4, 8}, Level: zstd.SpeedFastest})
		if err != nil {
			t.Fatal(err)
		}
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false), zstd.WithEncoderDict(d))
		if err != nil {
			t.Fatal(err)
		}
		ve, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBetterCompression), zstd.WithEncoderConcurrency(1))
		cd := coder{name: name, dict: d, vocab: v, fixed: len(ve.EncodeAll(v.bytes(), nil))}
		for _, x := range coded {
			cd.frames = append(cd.frames, e.EncodeAll(x, nil))
		}
		coders = append(coders, cd)
		fmt.Printf("%s: %d words seen once at the end (the sealer's memory)\n", name, len(seen))
	}
	// Sizes, and every frame decoded back.
	decs := make([]*zstd.Decoder, len(coders))
	for i, c := range coders {
		dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderDicts(c.dict))
		if err != nil {
			t.Fatal(err)
		}
		defer dec.Close()
		decs[i] = dec
		var stored int64
		var buf, text []byte
		for k, f := range c.frames {
			stored += int64(len(f)) + 4
			if buf, err = dec.DecodeAll(f, buf[:0]); err != nil {
				t.Fatal(err)
			}
			text = buf
			if c.vocab != nil {
				if text, err = wordDecode(text[:0:0], c.vocab, buf); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(text, chunks[k]) {
				t.Fatalf("%s: frame %d does not decode back", c.name, k)
			}
		}
		vocab := ""
		if c.vocab != nil {
			vocab = fmt.Sprintf(", vocabulary %d words, %d bytes stored (%.4fx)", len(c.vocab.words), c.fixed, float64(c.fixed)/float64(total))
		}
		fmt.Printf("%-48s frames %.4fx, with the vocabulary %.4fx%s\n", c.name, float64(stored)/float64(total), float64(stored+int64(c.fixed))/float64(total), vocab)
	}
	// One record of each frame, as a cold read: 150 bytes from the middle.
	for round := 1; round <= 3; round++ {
		for i, c := range coders {
			var buf, text []byte
			start := cpuNow()
			for k, f := range c.frames {
				from := len(chunks[k]) / 2
				to := min(len(chunks[k]), from+150)
				buf, _ = decs[i].DecodeAll(f, buf[:0])
				if c.vocab != nil {
					var err error
					if text, err = wordExtract(text[:0], c.vocab, buf, from, to); err != nil || !bytes.Equal(text, chunks[k][from:to]) {
						t.Fatalf("%s: frame %d: extract %v", c.name, k, err)
					}
				} else {
					text = append(text[:0], buf[from:to]...)
				}
			}
			cpu := cpuNow() - start
			fmt.Printf("round %d %-48s one record of a frame: %.2f us CPU\n", round, c.name, float64(cpu.Microseconds())/float64(len(c.frames)))
		}
	}
	// Decode CPU: every frame, each coder in turn, three rounds.
	for round := 1; round <= 3; round++ {
		for i, c := range coders {
			var buf, text []byte
			start := cpuNow()
			wall := time.Now()
			for _, f := range c.frames {
				buf, _ = decs[i].DecodeAll(f, buf[:0])
				if c.vocab != nil {
					text, _ = wordDecode(text[:0], c.vocab, buf)
				}
			}
			cpu := cpuNow() - start
			wallAll := time.Since(wall)
			start = cpuNow()
			for _, f := range c.frames {
				buf, _ = decs[i].DecodeAll(f, buf[:0])
			}
			zcpu := cpuNow() - start
			fmt.Printf("round %d %-48s decode: %.2f us CPU a frame (wall %.2f us), zstd alone %.2f us\n", round, c.name,
				float64(cpu.Microseconds())/float64(len(c.frames)), float64(wallAll.Microseconds())/float64(len(c.frames)),
				float64(zcpu.Microseconds())/float64(len(c.frames)))
		}
	}
}

// cpuNow is the process's user and system CPU so far.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
