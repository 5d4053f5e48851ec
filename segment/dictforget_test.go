package segment

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/klauspost/compress/zstd"
	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/internal/faultfs"
	"github.com/lazymem/lazymem/internal/tablescan"
)

// dictStore is a log big enough for the sealer to build its dictionary
// (well past dictSample): chat records, with secret records (forgotten
// later) and kept marker records among the first texts sealed, whose
// tokens are each unique to their record.
type dictStore struct {
	recs    [][]byte
	secret  map[uint64][]string // id -> its tokens
	kept    map[uint64][]string
	secrets []uint64
}

func newDictStore() *dictStore {
	r := rand.New(rand.NewPCG(61, 62))
	s := &dictStore{secret: map[uint64][]string{}, kept: map[uint64][]string{}}
	for i := range 9000 {
		id := uint64(i + 1)
		var toks []string
		switch {
		case i < 4000 && i%40 == 7:
			for k := range 24 {
				toks = append(toks, fmt.Sprintf("vellichor%03dq%02d", i/40, k))
			}
			s.secret[id] = toks
			s.secrets = append(s.secrets, id)
		case i < 4000 && i%40 == 27:
			for k := range 24 {
				toks = append(toks, fmt.Sprintf("keptmarker%03dq%02d", i/40, k))
			}
			s.kept[id] = toks
		default:
			s.recs = append(s.recs, chatRecord(r, 5+r.IntN(30)))
			continue
		}
		s.recs = append(s.recs, codec.AppendRecord(nil, &codec.Record{Time: 1e18 + int64(i), Agent: "agent-1",
			Session: "s-1", Role: "user", Text: strings.Join(toks, " ")}))
	}
	return s
}

// dictValues returns the values of the log's 'y' keys by id.
func dictValues(t *testing.T, l *Log) map[uint64][]byte {
	t.Helper()
	out := map[uint64][]byte{}
	it, err := l.db.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	for ok := it.SeekGE([]byte{prefixDict}); ok && it.Key()[0] == prefixDict; ok = it.Next() {
		id, _ := keyID(it.Key())
		out[id] = bytes.Clone(it.Value())
	}
	return out
}

// tokensIn returns the tokens of toks (id -> tokens) some of whose
// tokens b holds.
func tokensIn(b []byte, toks map[uint64][]string) []uint64 {
	var ids []uint64
	for id, ts := range toks {
		for _, tok := range ts {
			if bytes.Contains(b, []byte(tok)) {
				ids = append(ids, id)
				break
			}
		}
	}
	return ids
}

// storeFiles returns every file of the store in fs (dir db and below),
// raw and with every zstd frame in it decompressed with each of dicts.
func storeFiles(t *testing.T, fs vfs.FS, dicts [][]byte) map[string][]byte {
	t.Helper()
	dec, err := zstd.NewReader(nil, zstd.WithDecoderDicts(dicts...), zstd.WithDecoderMaxMemory(64<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	magic := []byte{0x28, 0xb5, 0x2f, 0xfd}
	out := map[string][]byte{}
	var walk func(dir string)
	walk = func(dir string) {
		names, err := fs.List(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			p := fs.PathJoin(dir, n)
			if st, err := fs.Stat(p); err == nil && st.IsDir() {
				walk(p)
				continue
			}
			f, err := fs.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := io.ReadAll(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(n, ".sst") {
				// The keys and values as Pebble reads them: a block
				// compressed with Pebble's fastest compression holds a
				// repeated string only as a back-reference.
				raw = append(raw, tablescan.Contents(fs, p)...)
			}
			all := bytes.Clone(raw)
			for off := 0; ; off += len(magic) {
				i := bytes.Index(raw[off:], magic)
				if i < 0 {
					break
				}
				off += i
				if err := dec.Reset(bytes.NewReader(raw[off:])); err == nil {
					b, _ := io.ReadAll(dec) // a partial frame still yields its blocks
					all = append(all, b...)
				}
			}
			out[p] = all
		}
	}
	walk("db")
	if len(out) == 0 {
		t.Fatal("no store files: the scan proves nothing")
	}
	return out
}

// TestDictForgotten: records forgotten after the log built its zstd
// dictionary from their texts leave the dictionary at Compact: no file
// of the store holds a piece of their text afterwards (raw, or in any
// zstd frame decompressed with any dictionary the store ever held). Live
// records whose text was in the old dictionary read back, before and
// after a reopen, and the log keeps a dictionary: the rewritten log is
// not larger than a log compressed with the old one.
func TestDictForgotten(t *testing.T) {
	s := newDictStore()
	fs := vfs.NewMem()
	opts := Options{DisableBackgroundSeal: true}
	l := framedLog(t, fs, opts, s.recs, nil)
	before := dictValues(t, l)
	if len(before) != 1 {
		t.Fatalf("%d dictionaries: the store is too small for the test", len(before))
	}
	var old []byte
	for _, v := range before {
		old = v
	}
	inDict := tokensIn(old, s.secret)
	keptInDict := tokensIn(old, s.kept)
	if len(inDict) == 0 || len(keptInDict) == 0 {
		t.Fatalf("the dictionary holds %d secret and %d kept records' text: the test proves nothing", len(inDict), len(keptInDict))
	}
	storedBefore := l.Metrics().SegmentBytes
	if err := l.Delete(ctx, s.secrets); err != nil {
		t.Fatal(err)
	}
	if err := l.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.WaitPurged(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	after := dictValues(t, l)
	storedAfter := l.Metrics().SegmentBytes
	uses := map[uint32]int{}
	for _, m := range l.segs {
		d, err := l.segmentDict(m)
		if err != nil {
			t.Fatal(err)
		}
		uses[d]++
	}
	if _, ok := after[1]; ok || uses[1] > 0 || uses[2] == 0 {
		t.Fatalf("after Compact dictionaries %d are stored, the segments use %v; want dictionary 2 (or none)", len(after), uses)
	}
	check := func(stage string) {
		t.Helper()
		for i, want := range s.recs {
			id := uint64(i + 1)
			got, err := l.Get(id, nil)
			if s.secret[id] != nil {
				if !errors.Is(err, ErrDeleted) {
					t.Fatalf("%s: forgotten record %d: %v", stage, id, err)
				}
				continue
			}
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s: record %d: %v", stage, id, err)
			}
		}
	}
	check("after Compact")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	dicts := [][]byte{}
	for _, v := range before {
		dicts = append(dicts, v[:len(v)-4])
	}
	for id, v := range after {
		if before[id] == nil {
			dicts = append(dicts, v[:len(v)-4])
		}
	}
	files := storeFiles(t, fs, dicts)
	for name, b := range files {
		if ids := tokensIn(b, s.secret); len(ids) > 0 {
			t.Errorf("%s holds text of forgotten records %v", name, ids)
		}
	}
	found := 0
	for _, b := range files {
		found += len(tokensIn(b, s.kept))
	}
	if found == 0 {
		t.Fatal("no file holds a kept record's text: the scan is broken")
	}
	if len(after) != 1 {
		t.Errorf("%d dictionaries after Compact, want 1", len(after))
	}
	// The segments compressed with the new dictionary lost at most a few
	// percent (they also lost the forgotten records).
	if float64(storedAfter) > 1.03*float64(storedBefore) {
		t.Errorf("segments %d bytes after the rebuild, %d before", storedAfter, storedBefore)
	}
	t.Logf("segments %d bytes before, %d after; %d forgotten records were in the old dictionary", storedBefore, storedAfter, len(inDict))
	l = openMem(t, fs, opts)
	defer l.Close()
	check("after reopen")
}

// TestDictRebuildCrash crashes the Compact of TestDictForgotten before
// every filesystem operation that changes the store (images with none,
// half or all of the unsynced data): every image opens, every record
// reads back (the forgotten ones deleted), and a Compact on the image
// leaves one dictionary, holding no forgotten record's text.
func TestDictRebuildCrash(t *testing.T) {
	s := newDictStore()
	mem := vfs.NewCrashableMem()
	opts := Options{DisableBackgroundSeal: true, ReserveBytes: -1}
	l := framedLog(t, mem, opts, s.recs, nil)
	if err := l.Delete(ctx, s.secrets); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	type image struct {
		n  int
		op string
		fs *vfs.MemFS
	}
	v := faultfs.Verify(t, func(img image) error { return verifyDictImage(img.fs, opts, s) },
		func(img image) string { return fmt.Sprintf("crash before op %d (%s)", img.n, img.op) })
	var armed atomic.Bool
	var mu sync.Mutex
	n := 0
	rng := rand.New(rand.NewPCG(7, 8))
	inj := errorfs.InjectorFunc(func(op errorfs.Op) error {
		if !armed.Load() || op.Kind.ReadOrWrite() != errorfs.OpIsWrite {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		// Pebble's background work (obsolete files' cleanup) may still
		// write after the Compact: the flag is read again under the lock
		// that disarming takes, so no image follows Wait.
		if !armed.Load() {
			return nil
		}
		n++
		cfg := faultfs.CrashCfg(n, rng)
		v.Add(image{n: n, op: fmt.Sprintf("%v %s", op.Kind, op.Path), fs: mem.CrashClone(cfg)})
		return nil
	})
	l = openMem(t, errorfs.Wrap(mem, inj), opts)
	armed.Store(true)
	err := l.Compact(ctx)
	if err == nil {
		err = l.WaitPurged(ctx, 30*time.Second)
	}
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

// verifyDictImage opens a crash image of TestDictRebuildCrash and checks
// it.
func verifyDictImage(fs vfs.FS, opts Options, s *dictStore) error {
	opts.FS = fs
	l, err := Open("db", opts)
	if err != nil {
		return fmt.Errorf("reopen: %w", err)
	}
	defer l.Close()
	check := func(stage string) error {
		for i, want := range s.recs {
			id := uint64(i + 1)
			got, err := l.Get(id, nil)
			if s.secret[id] != nil {
				if !errors.Is(err, ErrDeleted) {
					return fmt.Errorf("%s: forgotten record %d: %v", stage, id, err)
				}
				continue
			}
			if err != nil || !bytes.Equal(got, want) {
				return fmt.Errorf("%s: record %d: %v", stage, id, err)
			}
		}
		return nil
	}
	if err := check("after the crash"); err != nil {
		return err
	}
	if err := l.Compact(ctx); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	if err := check("after Compact"); err != nil {
		return err
	}
	it, err := l.db.NewIter(nil)
	if err != nil {
		return err
	}
	defer it.Close()
	dicts := 0
	for ok := it.SeekGE([]byte{prefixDict}); ok && it.Key()[0] == prefixDict; ok = it.Next() {
		dicts++
		if ids := tokensIn(it.Value(), s.secret); len(ids) > 0 {
			return fmt.Errorf("after Compact dictionary %x holds forgotten records %v", it.Key(), ids)
		}
	}
	if dicts != 1 {
		return fmt.Errorf("after Compact %d dictionaries", dicts)
	}
	return nil
}

// TestDictRebuildTooLittle: when too little live text is left to build a
// dictionary from, Compact rewrites the segments of the old one without
// a dictionary and deletes it; the kept records read back, and the
// sealer builds the next dictionary, under a new id, once it has sealed
// dictSample bytes again.
func TestDictRebuildTooLittle(t *testing.T) {
	s := newDictStore()
	fs := vfs.NewMem()
	opts := Options{DisableBackgroundSeal: true}
	l := framedLog(t, fs, opts, s.recs, nil)
	defer func() { _ = l.Close() }()
	var del []uint64
	keep := map[uint64]bool{}
	for i := range s.recs {
		id := uint64(i + 1)
		if i%100 == 0 {
			keep[id] = true
		} else {
			del = append(del, id)
		}
	}
	if err := l.Delete(ctx, del); err != nil {
		t.Fatal(err)
	}
	if err := l.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if got := dictValues(t, l); len(got) != 0 {
		t.Fatalf("%d dictionaries after a Compact that left %d records", len(got), len(keep))
	}
	for _, m := range l.segs {
		if d, err := l.segmentDict(m); err != nil || d != 0 {
			t.Fatalf("segment %d uses dictionary %d (%v)", m.first, d, err)
		}
	}
	for id := range keep {
		if !bytes.Equal(mustGet(t, l, id), s.recs[id-1]) {
			t.Fatalf("record %d", id)
		}
	}
	first, err := l.AppendBatch(ctx, s.recs)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Seal(); err != nil {
		t.Fatal(err)
	}
	got := dictValues(t, l)
	if len(got) != 1 || got[2] == nil {
		t.Fatalf("dictionaries %v after sealing %d more records, want one, id 2", len(got), len(s.recs))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openMem(t, fs, opts)
	for i, want := range s.recs {
		if !bytes.Equal(mustGet(t, l, first+uint64(i)), want) {
			t.Fatalf("record %d after reopen", first+uint64(i))
		}
	}
	for id := range keep {
		if !bytes.Equal(mustGet(t, l, id), s.recs[id-1]) {
			t.Fatalf("record %d after reopen", id)
		}
	}
}
