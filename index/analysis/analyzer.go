package analysis

import (
	"fmt"
	"sync"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/cases"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"
)

// Version identifies the analysis rules. It changes whenever a change to
// this package can turn the same text into different terms, so that an
// index built with older rules can be detected and rebuilt. Never reuse a
// value.
const Version = 1

// maxText bounds the text analyzed by one call so that positions fit in an
// int32 whatever the input; the rest of a longer text is ignored.
const maxText = 1 << 30

// Token is one term of an analyzed text.
type Token struct {
	// Term is the normalized term. Terms from the cache share their memory:
	// treat them as immutable (as any Go string).
	Term string
	// Pos is the token position, counted from 0 for each AppendTokens call.
	// An identifier's parts share the whole identifier's position for the
	// first part and take consecutive positions after it; a dropped
	// stopword still uses its position.
	Pos int32
}

// Analyzer turns text into terms. The same Analyzer (or one with equal
// Options) must analyze documents and queries. It is safe for concurrent
// use.
type Analyzer struct {
	// reference disables the fast paths (ASCII lowercasing while scanning,
	// the hand-made NFKC): tests compare both.
	reference bool
	opts      Options
	cache     *termCache // nil when disabled
	pool      sync.Pool  // *scratch
}

type span struct{ start, end int }

// scratch holds per-call buffers, recycled through a sync.Pool so that
// steady-state analysis does not allocate.
type scratch struct {
	norm   []byte
	buf    []byte
	low    []byte
	fold   []byte
	parts  []span
	folder transform.Transformer // cases.Fold, created on first non-ASCII token
	// A terms-only run keeps each token's folded surface in surf and
	// resolves them once the text is scanned (emitter.resolve).
	surf []byte
	pend []pending
	sink uint64
}

// pending is one scanned token of a terms-only run: its folded surface
// surf[off:off+n] and its hashSurface (0 when the cache does not take it).
type pending struct {
	off, n uint32
	h      uint64
}

// New returns an Analyzer. The zero Options means DefaultOptions().
func New(opts Options) (*Analyzer, error) {
	opts.EnsureDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	a := &Analyzer{opts: opts}
	if opts.CacheSize > 0 {
		a.cache = newTermCache(opts.CacheSize)
	}
	a.pool.New = func() any {
		return &scratch{buf: make([]byte, 0, 64), low: make([]byte, 0, 64), fold: make([]byte, 0, 64), parts: make([]span, 0, 8)}
	}
	return a, nil
}

// Options returns the options in effect (after EnsureDefaults).
func (a *Analyzer) Options() Options { return a.opts }

// Signature names the analysis an index was built with: Version and every
// option that changes terms. Store it with an index; a different signature
// on open means the index must be rebuilt.
func (a *Analyzer) Signature() string {
	return fmt.Sprintf("analysis/v%d stem=%t stop=%t cjkuni=%t maxlen=%d", Version, a.opts.Stem, a.opts.Stopwords, a.opts.CJKUnigrams, a.opts.MaxTokenLen)
}

// Terms returns the terms of text, in order. It allocates the result; hot
// paths use AppendTokens.
func (a *Analyzer) Terms(text string) []string {
	return a.AppendTerms(nil, text)
}

// AppendTokens analyzes text and appends its tokens to dst. Positions start
// at 0. In steady state (terms already in the cache, dst large enough) it
// does not allocate.
func (a *Analyzer) AppendTokens(dst []Token, text string) []Token {
	e := emitter{dst: dst}
	a.run(&e, text)
	return e.dst
}

// AppendTerms is AppendTokens without positions: it appends the terms of
// text to dst, for callers that only score bags of words.
func (a *Analyzer) AppendTerms(dst []string, text string) []string {
	e := emitter{terms: dst, termsOnly: true}
	a.run(&e, text)
	return e.terms
}

// AppendTermsKeyed is AppendTerms that also appends each term's TermKey
// to keys (the cache keeps the hash beside the term, and the prefix comes
// from the surface just scanned when the term is a prefix of it, so a
// caller that keys tables by term need not hash each token again nor read
// the term's bytes).
func (a *Analyzer) AppendTermsKeyed(dst []string, keys []TermKey, text string) ([]string, []TermKey) {
	e := emitter{terms: dst, keys: keys, termsOnly: true, withKey: true}
	a.run(&e, text)
	return e.terms, e.keys
}

func (a *Analyzer) run(e *emitter, text string) {
	if len(text) > maxText {
		text = text[:maxText]
	}
	st := a.pool.Get().(*scratch)
	s := text
	if a.reference {
		s = referenceNormalize(text)
	} else if !isASCII(text) {
		s = st.normalize(text)
	}
	e.a, e.st, e.max = a, st, a.opts.MaxTokenLen
	e.lazy = e.termsOnly && a.cache != nil
	st.surf, st.pend = st.surf[:0], st.pend[:0]
	e.scan(s)
	if e.lazy {
		e.resolve()
	}
	st.trim()
	a.pool.Put(st)
}

// normalize returns NFKC(text) with each invalid UTF-8 byte replaced by a
// space (x/text leaves runes after an invalid byte unnormalized, and the
// scanner treats invalid bytes as separators anyway). Text made of
// NFKC-safe runes is returned as is; fullwidth ASCII (U+FF01-FF5E) and the
// ideographic space, common in CJK chat, are mapped by hand (their NFKC
// mappings); anything else takes x/text's full normalizer.
func (st *scratch) normalize(text string) string {
	out := st.norm[:0]
	changed, full := false, false
	last := 0 // text[last:i] is not yet copied to out
	for i := 0; i < len(text); {
		if text[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		var repl byte
		switch {
		case r == utf8.RuneError && size == 1:
			repl = ' '
		case r < 0x10000 && bmpInfo(r)&nfkcSafe != 0:
			i += size
			continue
		case r >= 0xFF01 && r <= 0xFF5E:
			repl = byte(r - 0xFEE0)
		case r == 0x3000:
			repl = ' '
		case r >= 0x10000 && safeRune(st.buf[:0], r):
			i += size
			continue
		default: // a rune that may change or interact with its neighbours
			full = true
			i += size
			continue
		}
		out = append(out, text[last:i]...)
		out = append(out, repl)
		i += size
		last = i
		changed = true
	}
	if !changed && !full {
		return text
	}
	out = append(out, text[last:]...)
	if full {
		st.fold = append(st.fold[:0], out...)
		out = norm.NFKC.Append(out[:0], st.fold...)
	}
	st.norm = out
	return st.view()
}

// trim drops buffers that one huge input grew, so that the pool does not
// pin them.
func (st *scratch) trim() {
	const maxBuf = 64 << 10
	if cap(st.norm) > 1<<20 {
		st.norm = nil
	}
	if cap(st.buf) > maxBuf {
		st.buf = nil
	}
	if cap(st.low) > maxBuf {
		st.low = nil
	}
	if cap(st.fold) > maxBuf {
		st.fold = nil
	}
	if cap(st.parts) > maxBuf/16 {
		st.parts = nil
	}
	if cap(st.surf) > 1<<20 {
		st.surf = nil
	}
	if cap(st.pend) > maxBuf/16 {
		st.pend = nil
	}
}

// referenceNormalize is what normalize computes, the slow way.
func referenceNormalize(text string) string {
	b := make([]byte, 0, len(text))
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, ' ')
		} else {
			b = append(b, text[i:i+size]...)
		}
		i += size
	}
	return string(norm.NFKC.Bytes(b))
}

// view returns st.norm as a string without copying. The scanner only reads
// it, nothing writes st.norm until AppendTokens returns, and every emitted
// term is a copy, so the view never outlives the buffer's contents.
func (st *scratch) view() string {
	return unsafe.String(unsafe.SliceData(st.norm), len(st.norm))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// emitter is the state of one AppendTokens call.
type emitter struct {
	a         *Analyzer
	st        *scratch
	dst       []Token
	terms     []string
	keys      []TermKey // with withKey: the key of each of terms
	termsOnly bool
	withKey   bool
	lazy      bool // tokens wait in st.pend for resolve
	pos       int32
	max       int
}

func (e *emitter) scan(s string) {
	for i := 0; i < len(s); {
		var c class
		size := 1
		if ch := s[i]; ch < utf8.RuneSelf {
			c = asciiClass[ch]
		} else {
			c, size = classAt(s, i)
		}
		switch c {
		case cLower, cUpper, cLetter, cDigit:
			i = e.word(s, i)
		case cCJK:
			i = e.cjk(s, i)
		default:
			i += size
		}
	}
}

// word consumes the identifier or word starting at s[start] (an alphanumeric
// character) and emits it. An identifier is a run of atoms (letters, digits,
// marks, inner apostrophes) joined by single joiner characters (. - @ : / & _);
// atoms are further split at camelCase boundaries. One part: one token. More
// parts: the whole identifier, then each part.
func (e *emitter) word(s string, start int) int {
	parts := e.st.parts[:0]
	// low collects the ASCII-lowercased word while scanning; it is valid
	// while ascii holds, and then parts are slices of it (ASCII folding
	// keeps byte offsets). Other words are folded by emitFolded.
	low := e.st.low[:0]
	ascii := true
	partStart := start
	prev := cSep
	i := start
	for {
		for i < len(s) {
			var c class
			size := 1
			ch := s[i]
			if ch < utf8.RuneSelf {
				c = asciiClass[ch] // fast path: chat is mostly ASCII
			} else {
				c, size = classAt(s, i)
				ascii = false
			}
			if isAlnum(c) {
				// camelCase: aB, 3B, and the last capital of ABc.
				if c == cUpper && i > partStart &&
					(prev == cLower || prev == cDigit || (prev == cUpper && e.wordFollows(s, i+size))) {
					parts = append(parts, span{partStart, i})
					partStart = i
				}
				prev = c
				low = append(low, asciiLower[ch&0x7f])
				i += size
				continue
			}
			if c == cMark {
				i += size
				continue
			}
			if c == cApos && isLetter(prev) && i+size < len(s) {
				if nc, _ := classAt(s, i+size); isLetter(nc) {
					low = append(low, '\'')
					i += size
					prev = cSep // O'Neil is one part, not o' + neil
					continue
				}
			}
			break
		}
		if i < len(s) {
			c, size := classAt(s, i)
			if (c == cJoin || c == cUnder) && i+size < len(s) {
				if nc, _ := classAt(s, i+size); isAlnum(nc) {
					parts = append(parts, span{partStart, i})
					if size == 1 {
						low = append(low, s[i])
					} else {
						ascii = false // a Unicode connector such as U+203F
					}
					i += size
					partStart = i
					prev = cSep
					continue
				}
			}
		}
		parts = append(parts, span{partStart, i})
		break
	}
	e.st.parts, e.st.low = parts, low
	if ascii && !e.a.reference {
		e.emit(low, e.pos)
		if len(parts) > 1 {
			for k, p := range parts {
				e.emit(low[p.start-start:p.end-start], e.pos+int32(k))
			}
		}
	} else {
		e.emitFolded(s[start:i], e.pos)
		if len(parts) > 1 {
			for k, p := range parts {
				e.emitFolded(s[p.start:p.end], e.pos+int32(k))
			}
		}
	}
	e.pos += int32(len(parts))
	return i
}

// wordFollows reports whether a lowercase word starts at s[j], after an
// uppercase run: "HTTPServer" splits before "Server". A lone plural "s"
// ("IDs", "PDFs", "URLs") is not a word.
func (e *emitter) wordFollows(s string, j int) bool {
	if j >= len(s) {
		return false
	}
	if c, _ := classAt(s, j); c != cLower {
		return false
	}
	if s[j] == 's' {
		if j+1 >= len(s) {
			return false
		}
		c, _ := classAt(s, j+1)
		return isLetter(c)
	}
	return true
}

// cjk consumes a run of CJK characters and emits overlapping bigrams, or
// the lone character when the run has one. With Options.CJKUnigrams, each
// character is also emitted alone, at the position of the bigram it starts.
func (e *emitter) cjk(s string, start int) int {
	uni := e.a.opts.CJKUnigrams
	_, size := classAt(s, start)
	prev := start // start of the previous character
	i := start + size
	n := 1
	for i < len(s) {
		c, sz := classAt(s, i)
		if c != cCJK {
			break
		}
		if uni {
			e.emitRaw(s[prev:i], e.pos)
		}
		e.emitRaw(s[prev:i+sz], e.pos)
		e.pos++
		prev = i
		i += sz
		n++
	}
	if n == 1 || uni {
		e.emitRaw(s[prev:i], e.pos)
		e.pos++
	}
	return i
}

// emitFolded case-folds w (ASCII by table, the rest with Unicode full case
// folding), maps U+2019 to an ASCII apostrophe, and emits it.
func (e *emitter) emitFolded(w string, pos int32) {
	buf := e.st.buf[:0]
	nonASCII := false
	for j := 0; j < len(w); j++ {
		c := w[j]
		if c < utf8.RuneSelf {
			buf = append(buf, asciiLower[c])
			continue
		}
		if c == 0xE2 && j+2 < len(w) && w[j+1] == 0x80 && w[j+2] == 0x99 { // U+2019
			buf = append(buf, '\'')
			j += 2
			continue
		}
		nonASCII = true
		buf = append(buf, c)
	}
	if nonASCII {
		buf = e.fold(buf)
	}
	e.st.buf = buf
	e.emit(buf, pos)
}

// fold applies full case folding to b (which is st.buf) and renormalizes
// to NFKC when folding broke it, so that folding is idempotent.
func (e *emitter) fold(b []byte) []byte {
	st := e.st
	if st.folder == nil {
		st.folder = cases.Fold()
	}
	out, _, err := transform.Append(st.folder, st.fold[:0], b)
	if err != nil {
		return b // cannot happen for valid UTF-8; keep the unfolded form
	}
	st.fold = out
	if norm.NFKC.IsNormal(out) {
		return append(b[:0], out...)
	}
	return norm.NFKC.Append(b[:0], out...)
}

func (e *emitter) emitRaw(w string, pos int32) {
	e.st.buf = append(e.st.buf[:0], w...)
	e.emit(e.st.buf, pos)
}

func (e *emitter) emit(b []byte, pos int32) {
	if len(b) == 0 || len(b) > e.max {
		return
	}
	if e.lazy {
		st := e.st
		p := pending{off: uint32(len(st.surf)), n: uint32(len(b))}
		if len(b) <= slotKey {
			p.h = hashSurface(e.a, b)
		}
		st.surf = append(st.surf, b...)
		st.pend = append(st.pend, p)
		return
	}
	t, th, tl, ok := e.a.term(b)
	e.appendTerm(b, pos, t, th, tl, ok)
}

// resolve looks up the terms of the tokens a terms-only run scanned, in
// order. It first reads the home slot of each in the cache: those loads do
// not depend on each other, so the CPU overlaps their cache misses, and the
// lookups that follow find the slots in the cache. Profile lesson (Zipf
// corpus, session context): looking each token up as it was scanned, the
// cache's find was a third of the analyzer's CPU, most of it waiting on
// the slot of a rare word (the table is megabytes), one miss at a time:
// between two lookups lay the scanning of a word. The first pass reads
// the home slot's entry in the terms array too, once the slot is published
// under the token's hash: a hit returns it, and it is a second array as
// large as the slots' (profile, whole engine, Zipf 200k with session
// context: that load was 0.71 of the cache's 1.59 s).
func (e *emitter) resolve() {
	st := e.st
	t := e.a.cache.table.Load()
	var s uint64
	for _, p := range st.pend {
		if p.h != 0 {
			i := p.h & t.mask
			// The terms entry only once the slot is published under this
			// hash (put writes it before it stores the state): read before,
			// it races with put. The branch is predicted, so the load still
			// issues beside the others.
			state := t.slots[i].state.Load()
			s += state
			if state == p.h {
				s += uint64(len(t.terms[i]))
			}
		}
	}
	st.sink = s
	for _, p := range st.pend {
		b := st.surf[p.off : p.off+p.n]
		var t string
		var th uint64
		var tl uint8
		var ok bool
		if p.h == 0 {
			t, th, tl, ok = e.a.term(b)
		} else {
			t, th, tl, ok = e.a.termHashed(b, p.h)
		}
		e.appendTerm(b, 0, t, th, tl, ok)
	}
}

// appendTerm appends what term returned for surface b at pos, unless a
// stopword.
func (e *emitter) appendTerm(b []byte, pos int32, t string, th uint64, tl uint8, ok bool) {
	if ok {
		if e.termsOnly {
			e.terms = append(e.terms, t)
			if e.withKey {
				e.keys = append(e.keys, TermKey{th, termKeyPrefix(t, b, tl)})
			}
		} else {
			e.dst = append(e.dst, Token{Term: t, Pos: pos})
		}
	}
}
