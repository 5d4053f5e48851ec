package segment

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/internal/faultfs"
)

// wordTexts returns random texts over an alphabet of word bytes, spaces,
// punctuation, newlines, NUL and multi-byte UTF-8.
func wordTexts(r *rand.Rand, n int) [][]byte {
	alphabet := []byte("ab  c.,\n-é中\x00Z9 ")
	texts := [][]byte{{}, []byte(" "), []byte("a"), []byte("a b"), []byte(" a "), []byte("a  b"), []byte("a.b c"), []byte("ab ")}
	for range n {
		b := make([]byte, r.IntN(80))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		texts = append(texts, b)
	}
	return texts
}

// wordTableOf returns a table whose words are those of texts met twice.
func wordTableOf(texts [][]byte) *wordTable {
	t := newWordTable()
	for _, s := range texts {
		t.grow(s)
	}
	t.publish()
	return t
}

// TestWordsCode: every text decodes back from its tokens, byte for byte;
// words of the vocabulary become ids; a decode past its limit, an id
// not in the vocabulary and a truncated token fail.
func TestWordsCode(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	texts := wordTexts(r, 3000)
	tab := wordTableOf(texts[:1500])
	if tab.snap.Load().size() == 0 {
		t.Fatal("no word entered the vocabulary: the test proves nothing")
	}
	ids := 0
	for _, s := range texts {
		enc := encodeWords(nil, tab.ids, s)
		got, err := decodeWords(nil, tab.snap.Load(), enc, len(s))
		if err != nil || !bytes.Equal(got, s) {
			t.Fatalf("%q: decoded %q, %v", s, got, err)
		}
		var used wordSet
		used.reset(tab.snap.Load().size())
		if err := wordsUsed(enc, &used); err != nil {
			t.Fatal(err)
		}
		marked := 0
		for id, u := range used.used {
			if u {
				marked++
				ids++
				w, _ := tab.snap.Load().word(uint64(id))
				if !bytes.Contains(s, w) {
					t.Fatalf("%q: uses word %d %q", s, id, w)
				}
			}
		}
		if marked != len(used.ids) {
			t.Fatalf("%q: %d words marked, %d listed", s, marked, len(used.ids))
		}
		if len(s) > 0 {
			if _, err := decodeWords(nil, tab.snap.Load(), enc, len(s)-1); err == nil {
				t.Fatalf("%q: decoded past a limit of %d", s, len(s)-1)
			}
		}
	}
	if ids == 0 {
		t.Fatal("no text used a word of the vocabulary")
	}
	v := tab.snap.Load()
	for _, bad := range [][]byte{{byte(tokWord + v.size())}, {tokLiteral}, {tokSep, 5, 'a'}, {tokLiteral, 0}, {0x80}} {
		if _, err := decodeWords(nil, v, bad, 100); !errors.Is(err, errWordCode) {
			t.Errorf("%x decodes: %v", bad, err)
		}
	}
	// The single space between two words is implied: "a b c" of three
	// vocabulary words is three bytes of tokens.
	tab2 := wordTableOf([][]byte{[]byte("a b c a b c")})
	if enc := encodeWords(nil, tab2.ids, []byte("a b c")); len(enc) != 3 {
		t.Fatalf("a b c: %x", enc)
	}
}

// TestSkipWords: walking a text's tokens to any byte and decoding the
// rest gives the text's bytes from where the walk stopped (at or before
// that byte, at a token's start), and the walk fails on what the decode
// fails on: an id not in the vocabulary, a malformed token, a limit.
func TestSkipWords(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	texts := wordTexts(r, 1500)
	tab := wordTableOf(texts[:800])
	v := tab.snap.Load()
	var joined []byte
	for _, s := range texts {
		joined = append(joined, s...)
	}
	for _, s := range append(texts, joined) {
		enc := encodeWords(nil, tab.ids, s)
		step := 1 + len(s)/200 // the joined text: about 200 places
		for to := 0; to <= len(s); to += step {
			pos, rest, space, err := skipWordsTo(v, enc, 0, to, len(s), false)
			if err != nil || pos > to {
				t.Fatalf("%q to %d: at %d, %v", s, to, pos, err)
			}
			got, left, _, err := decodeWordsTo(nil, v, rest, len(s)-pos, len(s)-pos, space)
			if err != nil || len(left) != 0 || !bytes.Equal(got, s[pos:]) {
				t.Fatalf("%q from %d (to %d): %q, %v", s, pos, to, got, err)
			}
		}
		if len(s) > 0 {
			if _, _, _, err := skipWordsTo(v, enc, 0, len(s), len(s)-1, false); err == nil {
				t.Fatalf("%q: walked past a limit of %d", s, len(s)-1)
			}
		}
	}
	for _, bad := range [][]byte{{byte(tokWord + v.size())}, {tokLiteral}, {tokSep, 5, 'a'}, {tokLiteral, 0}, {0x80}} {
		if _, _, _, err := skipWordsTo(v, bad, 0, 100, 100, false); !errors.Is(err, errWordCode) {
			t.Errorf("%x walks: %v", bad, err)
		}
	}
}

// FuzzWords: any text decodes back from its tokens; any tokens decode
// without a panic to at most their limit.
func FuzzWords(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 6))
	texts := wordTexts(r, 200)
	tab := wordTableOf(texts)
	for _, s := range texts[:20] {
		f.Add(s, encodeWords(nil, tab.ids, s))
	}
	f.Fuzz(func(t *testing.T, text, enc []byte) {
		e := encodeWords(nil, tab.ids, text)
		got, err := decodeWords(nil, tab.snap.Load(), e, len(text))
		if err != nil || !bytes.Equal(got, text) {
			t.Fatalf("%q: decoded %q, %v", text, got, err)
		}
		out, err := decodeWords(nil, tab.snap.Load(), enc, 4096)
		if err == nil && len(out) > 4096 {
			t.Fatalf("%d bytes past the limit", len(out))
		}
	})
}

// FuzzWordsFramed fuzzes the version-5 reader: a value built from a
// columnar body reads back as the same records as the body itself (as
// version 4 stores them), whole and record by record; any value reads
// the same record by record as whole, or fails, without a panic.
func FuzzWordsFramed(f *testing.F) {
	r := rand.New(rand.NewPCG(45, 46))
	c, err := newCompressor(CompressionZstd, 3)
	if err != nil {
		f.Fatal(err)
	}
	defer c.close()
	c.names = newNameTable()
	var sample [][]byte
	for range 200 {
		sample = append(sample, chatRecord(r, 5+r.IntN(30)))
	}
	c.words = newWordTable()
	for _, p := range sample {
		var rec codec.Record
		if _, err := codec.DecodeRecord(p, &rec); err != nil {
			f.Fatal(err)
		}
		c.words.grow([]byte(rec.Text))
	}
	c.words.publish()
	c.words.committed()
	for _, n := range []int{1, 3, 20} {
		payloads := make([][]byte, n)
		for i := range payloads {
			if i != 1 {
				payloads[i] = chatRecord(r, r.IntN(900))
			}
		}
		e := colEncoder{names: c.names}
		body, _ := e.encode(nil, payloads)
		c.names.add(e.pending)
		texts := e.cols[colTexts]
		v, err := c.appendFramed(nil, segmentVersionWords, n, body, len(texts), &wordCoder{ids: c.words.ids})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint16(n), body[:len(body)-len(texts)], texts, v)
	}
	f.Fuzz(func(t *testing.T, count uint16, head, texts, raw []byte) {
		readAll := func(v []byte, n int, want *decoded) {
			d, err := c.openFramed(1, v)
			if want != nil {
				if err != nil {
					t.Fatalf("version 4 opens, version 5 fails: %v", err)
				}
				for i := range n {
					p, ok := d.get(1 + uint64(i))
					q, wok := want.get(1 + uint64(i))
					if ok != wok || !bytes.Equal(p, q) {
						t.Fatalf("record %d: version 5 %x, version 4 %x", i+1, p, q)
					}
				}
			}
			checkAlone(t, c, v, n, d, err)
			// Some records only: each frame decoded as far as they need.
			for step := 2; step <= 5 && err == nil; step++ {
				var some []uint64
				for i := step / 2; i < n; i += step {
					some = append(some, 1+uint64(i))
				}
				rerr := c.readFramed(1, v, uint32(n), some, func(id uint64, p []byte, dead bool, ferr error) error {
					q, ok := d.get(id)
					if ferr != nil || ok == dead || !bytes.Equal(p, q) {
						t.Fatalf("record %d of every %d: %x (deleted %v, %v); whole: %x", id, step, p, dead, ferr, q)
					}
					return nil
				})
				if rerr != nil {
					t.Fatalf("the whole segment opens, every %d record fails: %v", step, rerr)
				}
			}
		}
		if count > 0 {
			body := append(bytes.Clone(head), texts...)
			v4, err4 := c.appendFramed(nil, segmentVersionNames, int(count), body, len(texts), nil)
			v5, err5 := c.appendFramed(nil, segmentVersionWords, int(count), body, len(texts), &wordCoder{ids: c.words.ids})
			if err4 == nil && err5 == nil {
				if want, err := c.openFramed(1, v4); err == nil {
					readAll(v5, int(count), want)
				} else {
					readAll(v5, int(count), nil)
				}
			}
		}
		if len(raw) > 0 {
			raw[0] = segmentVersionWords
			if fv, err := parseFramed(1, raw); err == nil {
				readAll(raw, fv.count, nil)
			} else if _, err := c.openFramed(1, raw); err == nil {
				t.Fatal("a value whose header fails opens")
			}
		}
	})
}

// wordsStore is a log past the dictionary's sample: chat records, and
// later records holding tokens each used twice in its record (so that it
// enters the vocabulary when sealed); secret records are forgotten later,
// kept ones not, and one word ("sharedword...") is in both.
type wordsStore struct {
	recs    [][]byte
	secret  map[uint64][]string
	kept    map[uint64][]string
	secrets []uint64
}

func newWordsStore() *wordsStore {
	r := rand.New(rand.NewPCG(71, 72))
	s := &wordsStore{secret: map[uint64][]string{}, kept: map[uint64][]string{}}
	for i := range 9000 {
		id := uint64(i + 1)
		var toks []string
		switch {
		case i%50 == 11:
			for k := range 6 {
				toks = append(toks, fmt.Sprintf("quillforget%04dz%d", i/50, k))
			}
			s.secret[id] = toks
			s.secrets = append(s.secrets, id)
			toks = append(toks, "sharedwordzz")
		case i%50 == 31:
			for k := range 6 {
				toks = append(toks, fmt.Sprintf("quillkeep%04dz%d", i/50, k))
			}
			s.kept[id] = toks
			toks = append(toks, "sharedwordzz")
		default:
			s.recs = append(s.recs, chatRecord(r, 5+r.IntN(30)))
			continue
		}
		text := strings.Join(toks, " ") + ". " + strings.Join(toks, " ")
		s.recs = append(s.recs, codec.AppendRecord(nil, &codec.Record{Time: 1e18 + int64(i), Agent: "agent-1",
			Session: "s-1", Role: "user", Text: text}))
	}
	return s
}

// segVersions counts the log's segment values by version.
func segVersions(t *testing.T, l *Log) map[byte]int {
	t.Helper()
	out := map[byte]int{}
	for _, m := range l.segs {
		v, closer, err := l.db.Get(makeKey(prefixSegment, m.first))
		if err != nil {
			t.Fatal(err)
		}
		out[v[0]]++
		closer.Close()
	}
	return out
}

// checkRecords reads every record of recs back (Get, GetMany and Scan),
// gone listing the ids that must be deleted.
func checkRecords(l *Log, recs [][]byte, gone map[uint64][]string) error {
	var ids []uint64
	for i, want := range recs {
		id := uint64(i + 1)
		got, err := l.Get(id, nil)
		if gone[id] != nil {
			if !errors.Is(err, ErrDeleted) {
				return fmt.Errorf("forgotten record %d: %v", id, err)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, want) {
			return fmt.Errorf("record %d: %v", id, err)
		}
		if i%7 == 0 {
			ids = append(ids, id)
		}
	}
	n := 0
	err := l.GetMany(ids, func(id uint64, p []byte) error {
		n++
		if !bytes.Equal(p, recs[id-1]) {
			return fmt.Errorf("GetMany: record %d differs", id)
		}
		return nil
	})
	if err == nil && n != len(ids) {
		err = fmt.Errorf("GetMany: %d of %d records", n, len(ids))
	}
	if err != nil {
		return err
	}
	return l.Scan(1, uint64(len(recs)+1), func(id uint64, p []byte) error {
		if !bytes.Equal(p, recs[id-1]) {
			return fmt.Errorf("Scan: record %d differs", id)
		}
		return nil
	})
}

// TestWordsLog: past its dictionary's sample the log seals version-6 (5 and packed heads)
// segments whose vocabulary is seeded and grows; every record reads back
// (Get, GetMany, Scan) before and after a reopen; the log is smaller than
// the same records' log without the word coder; with the coder off no
// segment is version 5.
func TestWordsLog(t *testing.T) {
	s := newWordsStore()
	size := map[bool]int64{}
	for _, off := range []bool{true, false} {
		fs := vfs.NewMem()
		opts := Options{DisableBackgroundSeal: true, DisableWords: off}
		l := framedLog(t, fs, opts, s.recs, nil)
		vers := segVersions(t, l)
		words := l.words.snap.Load().size()
		switch {
		case off && (vers[segmentVersionWords] != 0 || vers[segmentVersionPacked] != 0 || words != 0):
			t.Fatalf("DisableWords: versions %v, %d words", vers, words)
		case !off && (vers[segmentVersionPacked] < len(l.segs)/2 || words == 0 || len(l.words.chunks) < 2):
			t.Fatalf("versions %v of %d segments, %d words in %d chunks", vers, len(l.segs), words, len(l.words.chunks))
		}
		if !off {
			if ok := l.words.ids.has([]byte("quillforget0170z3")); !ok {
				t.Fatal("a word met twice after the seed did not enter the vocabulary")
			}
		}
		for _, m := range l.segs {
			size[off] += int64(m.stored)
		}
		if err := checkRecords(l, s.recs, nil); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l = openMem(t, fs, opts)
		if got := l.words.snap.Load().size(); got != words {
			t.Fatalf("%d words after a reopen, %d before", got, words)
		}
		if err := checkRecords(l, s.recs, nil); err != nil {
			t.Fatalf("after a reopen: %v", err)
		}
		// Seals go on after the reopen with the vocabulary loaded.
		if _, err := l.AppendBatch(ctx, s.recs[:500]); err != nil {
			t.Fatal(err)
		}
		if err := l.Seal(); err != nil {
			t.Fatal(err)
		}
		if err := checkRecords(l, append(slices2(s.recs), s.recs[:500]...), nil); err != nil {
			t.Fatalf("after appends past the reopen: %v", err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("segment values: %d bytes with words, %d without", size[false], size[true])
	if size[false] >= size[true] {
		t.Fatalf("with words the segments take %d bytes, without %d", size[false], size[true])
	}
}

func slices2(b [][]byte) [][]byte { return append([][]byte(nil), b...) }

// TestWordsForgotten: the words of forgotten records leave the
// vocabulary at Compact, in memory and in every file of the store (raw,
// or in any zstd frame decompressed with any dictionary the store held),
// when no live record uses them; a word a live record shares stays, and
// the live records read back after a reopen.
func TestWordsForgotten(t *testing.T) {
	s := newWordsStore()
	fs := vfs.NewMem()
	opts := Options{DisableBackgroundSeal: true, ReserveBytes: -1}
	l := framedLog(t, fs, opts, s.recs, nil)
	var dicts [][]byte
	for _, v := range dictValues(t, l) {
		raw, _ := codec.VerifyChecksum(v)
		dicts = append(dicts, raw)
	}
	for _, w := range []string{"quillforget0170z3", "quillkeep0170z3", "sharedwordzz"} {
		if ok := l.words.ids.has([]byte(w)); !ok {
			t.Fatalf("%s is not in the vocabulary: the test proves nothing", w)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	before := 0
	for _, b := range storeFiles(t, fs, dicts) {
		before += len(tokensIn(b, s.secret))
	}
	if before == 0 {
		t.Fatal("the store holds no forgotten token before the delete: the scan sees nothing")
	}
	l = openMem(t, fs, opts)
	if err := l.Delete(ctx, s.secrets); err != nil {
		t.Fatal(err)
	}
	if err := l.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.WaitPurged(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, toks := range s.secret {
		for _, w := range toks {
			if ok := l.words.ids.has([]byte(w)); ok {
				t.Fatalf("%s is still in the vocabulary in memory", w)
			}
		}
	}
	for _, w := range []string{"quillkeep0170z3", "sharedwordzz"} {
		if ok := l.words.ids.has([]byte(w)); !ok {
			t.Fatalf("%s left the vocabulary: a live record uses it", w)
		}
	}
	for _, v := range dictValues(t, l) {
		raw, _ := codec.VerifyChecksum(v)
		dicts = append(dicts, raw)
	}
	if err := checkRecords(l, s.recs, s.secret); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	kept := 0
	for name, b := range storeFiles(t, fs, dicts) {
		if ids := tokensIn(b, s.secret); len(ids) > 0 {
			t.Errorf("after Compact %s holds tokens of forgotten records %v", name, ids[:min(5, len(ids))])
		}
		kept += len(tokensIn(b, s.kept))
	}
	if kept == 0 {
		t.Fatal("no file holds a kept record's token: the scan sees nothing")
	}
	l = openMem(t, fs, opts)
	defer l.Close()
	if err := checkRecords(l, s.recs, s.secret); err != nil {
		t.Fatalf("after a reopen: %v", err)
	}
	if ok := l.words.ids.has([]byte("quillforget0170z3")); ok {
		t.Fatal("a forgotten word is back after a reopen")
	}
}

// TestWordsCrash takes a crash image of the store at every write of a
// load (the sealer growing the vocabulary, background seals) and of a
// Compact purging words, each losing all, half or none of the unsynced
// writes: every image opens, every acknowledged record reads back byte
// for byte (a record decoded with a vocabulary it was not written with
// would not), and the log seals and compacts on.
func TestWordsCrash(t *testing.T) {
	s := newWordsStore()
	n := len(s.recs)
	if testing.Short() {
		n = 7000
	}
	recs := s.recs[:n]
	mem := vfs.NewCrashableMem()
	opts := Options{ReserveBytes: -1}
	type image struct {
		n, acked int
		phase    string
		op       string
		fs       *vfs.MemFS
	}
	v := faultfs.Verify(t, func(img image) error {
		return verifyWordsImage(img.fs, opts, recs, img.acked, img.phase == "compact", s)
	},
		func(img image) string { return fmt.Sprintf("%s: crash before op %d (%s)", img.phase, img.n, img.op) })
	var armed atomic.Bool
	var acked atomic.Int64
	var phase atomic.Value
	phase.Store("load")
	var mu sync.Mutex
	k := 0
	rng := rand.New(rand.NewPCG(9, 10))
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if !armed.Load() || op.Kind.ReadOrWrite() != errorfs.OpIsWrite {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if !armed.Load() {
			return nil
		}
		k++
		// Every write during the Compact, every 25th during the load (an
		// image of each is about a megabyte).
		if ph := phase.Load(); ph == "delete" || ph == "load" && k%25 != 0 {
			return nil
		}
		v.Add(image{n: k, acked: int(acked.Load()), phase: phase.Load().(string), op: fmt.Sprintf("%v %s", op.Kind, op.Path), fs: mem.CrashClone(faultfs.CrashCfg(k, rng))})
		return nil
	})
	l := openMem(t, errorfs.Wrap(mem, inj), opts)
	armed.Store(true)
	for lo := 0; lo < len(recs); lo += 100 {
		hi := min(len(recs), lo+100)
		if _, err := l.AppendBatch(ctx, recs[lo:hi]); err != nil {
			t.Fatal(err)
		}
		acked.Store(int64(hi))
	}
	if err := l.Seal(); err != nil {
		t.Fatal(err)
	}
	if l.words.snap.Load().size() == 0 {
		t.Fatal("no vocabulary: the test proves nothing")
	}
	var secrets []uint64
	for _, id := range s.secrets {
		if id <= uint64(n) {
			secrets = append(secrets, id)
		}
	}
	mu.Lock()
	phase.Store("delete") // no image: a delete in flight may or may not survive
	mu.Unlock()
	if err := l.Delete(ctx, secrets); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	phase.Store("compact")
	mu.Unlock()
	err := l.Compact(ctx)
	mu.Lock()
	armed.Store(false)
	mu.Unlock()
	checked := v.Wait(t, 20)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d crash images verified", checked)
}

// verifyWordsImage opens a crash image of TestWordsCrash: the first acked
// records read back (the secret ones deleted, in the compact phase),
// nothing past what was appended exists, and a Compact and a seal go on.
func verifyWordsImage(fs vfs.FS, opts Options, recs [][]byte, acked int, compact bool, s *wordsStore) error {
	opts.FS = fs
	opts.DisableBackgroundSeal = true
	l, err := Open("db", opts)
	if err != nil {
		return fmt.Errorf("reopen: %w", err)
	}
	defer l.Close()
	next := int(l.Next()) - 1
	if next < acked || next > len(recs) {
		return fmt.Errorf("%d records recovered, %d acknowledged of %d", next, acked, len(recs))
	}
	var gone map[uint64][]string
	if compact {
		gone = map[uint64][]string{}
		for id, toks := range s.secret {
			if id <= uint64(next) {
				gone[id] = toks
			}
		}
	}
	if err := checkRecords(l, recs[:next], gone); err != nil {
		return err
	}
	if err := l.Seal(); err != nil {
		return fmt.Errorf("seal: %w", err)
	}
	if err := l.Compact(ctx); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	return checkRecords(l, recs[:next], gone)
}
