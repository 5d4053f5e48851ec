package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/lazymem/lazymem/codec"
)

// The log's vocabulary (segment version 5). zstd's literals cost about 4.5
// bits a character on text like the Zipf corpus's, whose order-0 word
// entropy is under 10 bits a word: a version-5 text frame holds its text
// as word tokens before zstd compresses it. A word of the log's
// vocabulary is its id; any other word, and every separator but the one
// space between two words, is written out (log-size.md section 8).
//
// Token codes (uvarints), the frame's text rebuilt in order:
//
//	0, length, bytes   a word not in the vocabulary (a space before it when
//	                   the previous token was a word)
//	1, length, bytes   a separator (a run of non-word bytes) other than the
//	                   one space implied between two words
//	k >= 2             word k-2 of the vocabulary (a space before it when
//	                   the previous token was a word)
//
// A word is a maximal run of ASCII letters, digits and bytes >= 0x80 (so
// a multi-byte UTF-8 character is a word byte); frames cut the text at
// fixed offsets, so a word cut by a frame's end is two tokens.
//
// The vocabulary is stored in the log in chunks, 'w' first id -> the
// words first, first+1, ... (uvarint count, then each word as uvarint
// length and bytes, 0 for a word Compact deleted, then crc32c), written
// in the same batch as the first segment that uses them: a crash keeps
// both or neither, so no segment is ever read with ids its batch did not
// write. Ids grow and are never reused while a segment could name them
// (an id Compact deleted is free only after a restart, and only if it
// was the highest).
//
// It grows as the log seals: the sealer seeds it, when its zstd dictionary
// sample is full (dict.go), with the sample's words used twice or more,
// by falling frequency (the frequent words take one-byte codes), and
// then adds a word the second time a new seal writes it out (it is used
// from the next seal on). Bounds:
// maxWords ids, words of at most maxWordLen bytes (a longer word is
// always written out), and at most maxSeen words met once remembered
// (the set is cleared when full): the readers' table is at most 4 MiB of
// words and 0.5 MiB of offsets, the sealer's maps about 10 MiB each at
// their bounds.
//
// Forgetting: Compact, after rewriting the segments that held deleted
// records, deletes from the chunks the words no version-5 text frame uses
// (gcWords; the segments using each word are counted, usage.go), before
// Pebble's flush and compaction rewrite the files.

// segmentVersionWords is the first byte of a version-5 segment value:
// version 4's layout, its text frames word-coded.
const segmentVersionWords = 5

const (
	maxWords   = 1 << 17
	maxWordLen = 32
	maxSeen    = 1 << 17
	// Token codes.
	tokLiteral = 0
	tokSep     = 1
	tokWord    = 2
	// wordSeedMin: a word of the seed sample enters at this many uses.
	wordSeedMin = 2
)

// isWordChar reports whether c is a word byte: an ASCII letter or digit,
// or any byte of a multi-byte UTF-8 character.
func isWordChar(c byte) bool {
	return c >= 0x80 || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// wordToken returns the token at the start of s (non-empty): a maximal
// run of word bytes or of other bytes, and whether it is a word.
func wordToken(s []byte) (tok []byte, word bool) {
	w := isWordChar(s[0])
	i := 1
	for i < len(s) && isWordChar(s[i]) == w {
		i++
	}
	return s[:i], w
}

// wordCoder is what a seal codes its text frames with: the vocabulary,
// and the words it wrote out (not in it), which the vocabulary then
// grows from.
type wordCoder struct {
	ids    *wordIDs
	misses [][]byte // slices of the texts coded: valid while they are
}

// encodeWords appends the tokens of text to dst; ids is the vocabulary.
func encodeWords(dst []byte, ids *wordIDs, text []byte) []byte {
	return encodeWordsMiss(dst, ids, text, nil)
}

// encodeWordsMiss is encodeWords noting in misses (unless nil) every word
// written out.
//
// It scans up to wordBatch tokens, reading the home slot of each short
// word in the table, then codes them: the loads of the first pass do not
// depend on each other, so the CPU overlaps their cache misses, and the
// lookups that follow find the slots in the cache. Profile lesson (the
// whole engine, Zipf 200k, session context): the load of the home slot
// was 0.65 of the lookups' 1.0 s, one miss at a time (the analysis and
// the insert on the same cores evict the table between two seals).
func encodeWordsMiss(dst []byte, ids *wordIDs, text []byte, misses *[][]byte) []byte {
	var toks [wordBatch]wordTok
	prevWord := false
	for s := text; len(s) > 0; {
		n, rest := scanWords(&toks, ids, s)
		for k := range n {
			tk := &toks[k]
			tok := s[tk.off : tk.off+tk.n]
			if !tk.word {
				if len(tok) == 1 && tok[0] == ' ' && prevWord && int(tk.off+tk.n) < len(s) {
					// A single space between two words (what follows is
					// a word: tokens are maximal runs) is implied.
					prevWord = false
					continue
				}
				dst = binary.AppendUvarint(dst, tokSep)
				dst = binary.AppendUvarint(dst, uint64(len(tok)))
				dst = append(dst, tok...)
				prevWord = false
				continue
			}
			if id, ok := ids.getAt(tok, tk.home); ok {
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
		s = rest
	}
	return dst
}

// wordBatch is how many tokens encodeWordsMiss scans ahead.
const wordBatch = 64

// wordTok is a token scanned ahead: s[off:off+n] of the text scanned, and
// for a word of up to inlineWord bytes its home slot.
type wordTok struct {
	off, n uint32
	word   bool
	home   uint64
}

// scanWords fills toks with the first tokens of s (at most wordBatch),
// reading the home slot of each short word, and returns how many and the
// rest of s.
func scanWords(toks *[wordBatch]wordTok, ids *wordIDs, s []byte) (int, []byte) {
	var sink uint64
	n, off := 0, 0
	for n < wordBatch && off < len(s) {
		tok, w := wordToken(s[off:])
		tk := wordTok{off: uint32(off), n: uint32(len(tok)), word: w}
		if w && len(tok) <= inlineWord {
			tk.home = ids.home(tok)
			sink += ids.slots[tk.home].a
		}
		toks[n] = tk
		n++
		off += len(tok)
	}
	ids.sink = sink
	return n, s[off:]
}

// errWordCode: a text frame's tokens do not parse.
var errWordCode = errors.New("malformed word code")

// decodeWords appends the text of the tokens enc to dst: at most limit
// bytes (more is an error), with the vocabulary v.
func decodeWords(dst []byte, v *wordSnap, enc []byte, limit int) ([]byte, error) {
	dst, _, _, err := decodeWordsTo(dst, v, enc, len(dst)+limit, math.MaxInt, false)
	return dst, err
}

// decodeWordsTo appends the text of the tokens enc to dst until dst holds
// need bytes or more (or enc ends), never more than limit bytes in all,
// and returns the tokens left and whether the last token was a word
// (space: what the next call takes to go on). A cold read of one record
// decodes its frame only up to the record's end.
func decodeWordsTo(dst []byte, v *wordSnap, enc []byte, limit, need int, space bool) ([]byte, []byte, bool, error) {
	for len(enc) > 0 && len(dst) < need {
		c, n := binary.Uvarint(enc)
		if n <= 0 {
			return dst, nil, false, errWordCode
		}
		enc = enc[n:]
		var b []byte
		if c == tokSep || c == tokLiteral {
			l, n := binary.Uvarint(enc)
			if n <= 0 || uint64(len(enc)-n) < l || l == 0 {
				return dst, nil, false, errWordCode
			}
			b, enc = enc[n:n+int(l)], enc[n+int(l):]
		} else {
			w, ok := v.word(c - tokWord)
			if !ok {
				return dst, nil, false, fmt.Errorf("%w: word %d not in the log's vocabulary", errWordCode, c-tokWord)
			}
			b = w
		}
		if c != tokSep && space {
			dst = append(dst, ' ')
		}
		if len(dst)+len(b) > limit {
			return dst, nil, false, fmt.Errorf("%w: more text than the frame holds", errWordCode)
		}
		dst = append(dst, b...)
		space = c != tokSep
	}
	if len(dst) > limit {
		return dst, nil, false, fmt.Errorf("%w: more text than the frame holds", errWordCode)
	}
	return dst, enc, space, nil
}

// skipWordsTo walks the tokens enc from pos (the bytes of the frame
// before them, space as decodeWordsTo's) without writing their text,
// consuming every token that ends at or before to, and returns where the
// next token's text starts, the tokens left and space. It checks what
// decodeWordsTo checks of each token it consumes (a malformed token, a
// word id with no word, more than limit bytes) and reads only the words'
// lengths: a cold read of one record need not copy the frame's text
// before the record (most of a 3 KiB frame), nor touch those words'
// bytes.
func skipWordsTo(v *wordSnap, enc []byte, pos, to, limit int, space bool) (int, []byte, bool, error) {
	for len(enc) > 0 {
		c, n := binary.Uvarint(enc)
		if n <= 0 {
			return pos, nil, false, errWordCode
		}
		rest := enc[n:]
		var l int
		if c == tokSep || c == tokLiteral {
			ll, n := binary.Uvarint(rest)
			if n <= 0 || uint64(len(rest)-n) < ll || ll == 0 {
				return pos, nil, false, errWordCode
			}
			l, rest = int(ll), rest[n+int(ll):]
		} else {
			wl, ok := v.wordLen(c - tokWord)
			if !ok {
				return pos, nil, false, fmt.Errorf("%w: word %d not in the log's vocabulary", errWordCode, c-tokWord)
			}
			l = wl
		}
		if c != tokSep && space {
			l++
		}
		if pos+l > to {
			break
		}
		if pos+l > limit {
			return pos, nil, false, fmt.Errorf("%w: more text than the frame holds", errWordCode)
		}
		pos += l
		enc = rest
		space = c != tokSep
	}
	return pos, enc, space, nil
}

// wordsUsed adds to used every word id of the tokens enc; an id past the
// set's size is an error.
func wordsUsed(enc []byte, used *wordSet) error {
	for len(enc) > 0 {
		c, n := binary.Uvarint(enc)
		if n <= 0 {
			return errWordCode
		}
		enc = enc[n:]
		if c == tokSep || c == tokLiteral {
			l, n := binary.Uvarint(enc)
			if n <= 0 || uint64(len(enc)-n) < l {
				return errWordCode
			}
			enc = enc[n+int(l):]
			continue
		}
		if !used.mark(c - tokWord) {
			return fmt.Errorf("%w: word %d not in the log's vocabulary", errWordCode, c-tokWord)
		}
	}
	return nil
}

// wordSnap is the vocabulary as readers see it: word i is
// flat[offs[i]:offs[i+1]], empty for an id with no word. Never written in
// place once published: appends go past the published lengths.
type wordSnap struct {
	flat []byte
	offs []uint32
}

// word returns word id, and false when the vocabulary has none.
func (s *wordSnap) word(id uint64) ([]byte, bool) {
	if s == nil || id+1 >= uint64(len(s.offs)) {
		return nil, false
	}
	a, b := s.offs[id], s.offs[id+1]
	return s.flat[a:b], a < b
}

// wordLen returns the length of word id, and false when the vocabulary
// has none: word's answer without its bytes.
func (s *wordSnap) wordLen(id uint64) (int, bool) {
	if s == nil || id+1 >= uint64(len(s.offs)) {
		return 0, false
	}
	a, b := s.offs[id], s.offs[id+1]
	return int(b - a), a < b
}

// size is the number of ids the snapshot covers.
func (s *wordSnap) size() int {
	if s == nil || len(s.offs) == 0 {
		return 0
	}
	return len(s.offs) - 1
}

// wordTable is the log's vocabulary: what readers decode with (snap) and
// the sealer's side, under Log.sealMu.
type wordTable struct {
	snap atomic.Pointer[wordSnap]
	// Under sealMu: flat and offs are the sealer's copy of the vocabulary
	// (the snapshot and the words assigned since, published before the
	// batch that writes them commits: a reader may meet them as soon as
	// the segment is in Pebble); ids holds every word with an id; pend the
	// words from id pendBase on, not yet in a committed batch (written
	// again with every seal until one commits); seen the words met once;
	// chunks the 'w' keys, first id -> count; active: new seals are
	// version 5.
	flat     []byte
	offs     []uint32
	ids      *wordIDs
	pendBase uint32
	pend     []string
	seen     map[string]struct{}
	chunks   map[uint32]uint32
	active   bool
}

func newWordTable() *wordTable {
	t := &wordTable{ids: newWordIDs(), seen: map[string]struct{}{}, chunks: map[uint32]uint32{}, offs: []uint32{0}}
	t.publish()
	return t
}

// publish makes the sealer's copy the readers' snapshot.
func (t *wordTable) publish() {
	t.snap.Store(&wordSnap{flat: t.flat, offs: t.offs})
}

// assign gives w the next id, unless the vocabulary is full; the word is
// pending until a batch holding it commits.
func (t *wordTable) assign(w []byte) {
	n := len(t.offs) - 1
	if n >= maxWords || len(w) > maxWordLen {
		return
	}
	t.ids.set(w, uint32(n))
	t.flat = append(t.flat, w...)
	t.offs = append(t.offs, uint32(len(t.flat)))
	t.pend = append(t.pend, string(w))
}

// grow adds the words of texts met for the second time (or more) to the
// vocabulary.
func (t *wordTable) grow(texts []byte) {
	for s := texts; len(s) > 0; {
		tok, w := wordToken(s)
		s = s[len(tok):]
		if w {
			t.met(tok)
		}
	}
}

// growFrom adds the words a seal wrote out (wordCoder.misses) met for
// the second time (or more) to the vocabulary: the seal's coding looked
// every word up once already (measured, BenchmarkWords: looking every
// word of the texts up again to grow was a quarter of a seal's CPU).
func (t *wordTable) growFrom(misses [][]byte) {
	for _, tok := range misses {
		t.met(tok)
	}
}

// met counts one sighting of word tok.
func (t *wordTable) met(tok []byte) {
	{
		if len(tok) > maxWordLen {
			return
		}
		if t.ids.has(tok) {
			return
		}
		if _, ok := t.seen[string(tok)]; ok {
			delete(t.seen, string(tok))
			t.assign(tok)
			return
		}
		if len(t.seen) >= maxSeen {
			clear(t.seen)
		}
		t.seen[string(tok)] = struct{}{}
	}
}

// seed adds the words of sample used at least wordSeedMin times and not
// in the vocabulary yet, by falling frequency.
func (t *wordTable) seed(sample []byte) {
	counts := map[string]int{}
	for s := sample; len(s) > 0; {
		tok, w := wordToken(s)
		s = s[len(tok):]
		if w && len(tok) <= maxWordLen {
			if !t.ids.has(tok) {
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
		if c >= wordSeedMin {
			all = append(all, wc{w, c})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].c != all[j].c {
			return all[i].c > all[j].c
		}
		return all[i].w < all[j].w
	})
	for _, x := range all {
		t.assign([]byte(x.w))
		delete(t.seen, x.w)
	}
}

// codeSample returns a dictionary sample's texts as tokens, each record's
// text coded alone, and where each record's tokens end.
func (t *wordTable) codeSample(texts []byte, recs []sampleRec) ([]byte, []sampleRec) {
	var out []byte
	coded := make([]sampleRec, len(recs))
	start := 0
	for i, r := range recs {
		out = encodeWords(out, t.ids, texts[start:r.end])
		coded[i] = sampleRec{id: r.id, end: len(out)}
		start = r.end
	}
	return out, coded
}

// pendingValue is the 'w' value of the pending words, nil for none.
func (t *wordTable) pendingValue() []byte {
	if len(t.pend) == 0 {
		return nil
	}
	return wordChunkValue(t.pend)
}

// committed notes that a batch holding the pending words committed.
func (t *wordTable) committed() {
	if len(t.pend) == 0 {
		return
	}
	t.chunks[t.pendBase] = uint32(len(t.pend))
	t.pendBase += uint32(len(t.pend))
	t.pend = nil
}

// parseWordChunk reads a 'w' value: the words, "" for a deleted one.
func parseWordChunk(v []byte) ([]string, error) {
	b, err := codec.VerifyChecksum(v)
	if err != nil {
		return nil, err
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, fmt.Errorf("%w: vocabulary chunk: count", ErrFormat)
	}
	b = b[k:]
	words := make([]string, 0, n)
	for range n {
		l, k := binary.Uvarint(b)
		if k <= 0 || l > maxWordLen || uint64(len(b)-k) < l {
			return nil, fmt.Errorf("%w: vocabulary chunk: word %d", ErrFormat, len(words))
		}
		words = append(words, string(b[k:k+int(l)]))
		b = b[k+int(l):]
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%w: vocabulary chunk: %d bytes after the last word", ErrFormat, len(b))
	}
	return words, nil
}

// loadWords reads the log's vocabulary at Open. A damaged chunk is
// logged and left out: the segments that use its words fail to read,
// each with a *CorruptionError.
func (l *Log) loadWords(it *pebble.Iterator) error {
	t := l.words
	// From the store alone (a reopen after a full disk loads it again: a
	// seal committed without sync may be lost, and its words with it).
	t.ids, t.chunks, t.pend, t.pendBase = newWordIDs(), map[uint32]uint32{}, nil, 0
	t.flat, t.offs = nil, []uint32{0}
	byID := map[uint32]string{}
	top := uint32(0)
	for ok := it.SeekGE([]byte{prefixWords}); ok && it.Key()[0] == prefixWords; ok = it.Next() {
		id, kok := keyID(it.Key())
		words, err := parseWordChunk(it.Value())
		if err == nil && (!kok || id+uint64(len(words)) > maxWords) {
			err = fmt.Errorf("%w: vocabulary chunk key %x", ErrFormat, it.Key())
		}
		if err != nil {
			l.logf("lazymem: segment: vocabulary %x: %v", it.Key(), err)
			if kok && id < maxWords {
				top = max(top, uint32(id)+1) // its ids stay taken
			}
			continue
		}
		t.chunks[uint32(id)] = uint32(len(words))
		for i, w := range words {
			if w != "" {
				byID[uint32(id)+uint32(i)] = w
			}
		}
		top = max(top, uint32(id)+uint32(len(words)))
	}
	if top == 0 {
		t.publish()
		return nil
	}
	t.offs = make([]uint32, 1, top+1)
	for id := range top {
		w := byID[id]
		t.flat = append(t.flat, w...)
		t.offs = append(t.offs, uint32(len(t.flat)))
		if w != "" {
			t.ids.set([]byte(w), id)
		}
	}
	t.pendBase = top
	t.publish()
	t.active = true
	return nil
}

// buildDict builds dictionary num from a sample of texts (buildDict):
// for a log that word-codes its frames, from the sample's tokens (what
// the frames hold), or from its texts when zstd cannot build one from
// the tokens (a vocabulary that covers nearly every word leaves no
// literals to gather statistics on). The dictionary only primes zstd: a
// frame decodes the same with either.
func (l *Log) buildDict(num uint32, sample []byte, recs []sampleRec) ([]byte, []uint64, error) {
	if l.wordsOn() && l.words.active {
		// The tokens are shorter than the texts: a history of the usual
		// size would hold most of the sample, and zstd finds no literals
		// left to count (it refuses to build).
		codes, crecs := l.words.codeSample(sample, recs)
		if raw, hist, err := buildDictSized(num, codes, crecs, min(dictHistory, len(codes)/4)); err == nil {
			return raw, hist, nil
		}
	}
	return buildDict(num, sample, recs)
}

// wordsOn reports whether the log word-codes its texts at all.
func (l *Log) wordsOn() bool {
	return !l.opts.DisableWords && !l.opts.DisableColumns && l.columnsVersion == segmentVersionNames
}

// gcWords deletes every word no version-5 text frame uses, on disk and in
// memory, and forgets the words met once. Callers hold sealMu.
func (l *Log) gcWords() error {
	t := l.words
	clear(t.seen)
	snap := t.snap.Load()
	if snap.size() == 0 {
		return nil
	}
	if known, err := l.usageKnown("vocabulary"); !known {
		return err
	}
	used := make([]bool, snap.size())
	for id := range used {
		used[id] = l.use.wordUsed(id)
	}
	db, err := l.rdb()
	if err != nil {
		return err
	}
	defer l.dbMu.RUnlock()
	b := db.NewBatch()
	defer l.closeBatch(b)
	var drop, gone []uint32
	for first, n := range t.chunks {
		words := make([]string, 0, n)
		left, dropped := 0, false
		for id := first; id < first+n; id++ {
			w, ok := snap.word(uint64(id))
			if ok && !used[id] {
				drop, ok, dropped = append(drop, id), false, true
			}
			if ok {
				words = append(words, string(w))
				left++
			} else {
				words = append(words, "")
			}
		}
		if !dropped {
			continue
		}
		k := makeKey(prefixWords, uint64(first))
		if left == 0 {
			gone = append(gone, first)
			err = b.Delete(k, nil)
		} else {
			err = b.Set(k, wordChunkValue(words), nil)
		}
		if err != nil {
			return err
		}
	}
	if len(drop) == 0 {
		return nil
	}
	l.commitMu.Lock()
	err = l.commitLocked(b, pebble.NoSync)
	l.commitMu.Unlock()
	if err != nil {
		return wrapWrite("compact vocabulary", err)
	}
	for _, first := range gone {
		delete(t.chunks, first)
	}
	// The words leave memory once no read in flight can be decoding with
	// them (see gcNames).
	if !l.waitReaders(len(drop), "words") {
		return nil
	}
	// A fresh copy: readers keep the old one. The pending words (a commit
	// failed since they were assigned) stay.
	old := &wordSnap{flat: t.flat, offs: t.offs}
	unused := func(id uint32) bool { return int(id) < len(used) && !used[id] && id < t.pendBase }
	t.flat, t.offs = make([]byte, 0, len(old.flat)), make([]uint32, 1, len(old.offs))
	for id := range old.size() {
		w, ok := old.word(uint64(id))
		if ok && unused(uint32(id)) {
			w = nil
		}
		t.flat = append(t.flat, w...)
		t.offs = append(t.offs, uint32(len(t.flat)))
	}
	t.ids = t.ids.without(unused)
	t.publish()
	l.names.readers.Unlock()
	return nil
}

// wordChunkValue is the 'w' value of words ("" for a deleted one).
func wordChunkValue(words []string) []byte {
	var v []byte
	v = binary.AppendUvarint(v, uint64(len(words)))
	for _, w := range words {
		v = binary.AppendUvarint(v, uint64(len(w)))
		v = append(v, w...)
	}
	return codec.AppendChecksum(v, v)
}

// wordsUsed marks the word ids version-5 value v's text frames use.
func (c *compressor) wordsUsed(first uint64, v []byte, used *wordSet, codes *[]byte) error {
	f, err := parseFramed(first, v)
	if err != nil {
		return err
	}
	for k, s := range f.frames {
		b := f.v[s.off : s.off+s.stored]
		if sum, want := binary.LittleEndian.Uint32(f.v[s.off+s.stored:]), frameCRC(b); sum != want {
			return &CorruptionError{Segment: first, Err: fmt.Errorf("%w: text frame %d", ErrChecksum, k)}
		}
		if *codes, err = c.decompress(f.algo, f.dict, (*codes)[:0], b); err != nil {
			return &CorruptionError{Segment: first, Err: err}
		}
		if err := wordsUsed(*codes, used); err != nil {
			return &CorruptionError{Segment: first, Err: err}
		}
	}
	return nil
}
