package segment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/lazymem/lazymem/internal/testwatch"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	testwatch.Start()
	goleak.VerifyTestMain(m)
}

var ctx = context.Background()

func payload(i int) []byte {
	return []byte(fmt.Sprintf("record %d: the connection pool for service-%d was resized to %d", i, i%7, i*3))
}

func openMem(t testing.TB, fs vfs.FS, opts Options) *Log {
	t.Helper()
	opts.FS = fs
	l, err := Open("db", opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return l
}

func mustGet(t testing.TB, l *Log, id uint64) []byte {
	t.Helper()
	p, err := l.Get(id, nil)
	if err != nil {
		t.Fatalf("get %d: %v", id, err)
	}
	return p
}

func TestAppendGetSealScanReopen(t *testing.T) {
	for _, algo := range []Compression{CompressionNone, CompressionZstd, CompressionS2} {
		t.Run(algo.String(), func(t *testing.T) {
			fs := vfs.NewMem()
			l := openMem(t, fs, Options{SegmentRecords: 10, Compression: algo, NoCompression: algo == CompressionNone, DisableBackgroundSeal: true})
			id, err := l.Append(ctx, payload(0))
			if err != nil || id != 1 {
				t.Fatalf("first append: id %d err %v", id, err)
			}
			var batch [][]byte
			for i := 1; i < 35; i++ {
				batch = append(batch, payload(i))
			}
			first, err := l.AppendBatch(ctx, batch)
			if err != nil || first != 2 {
				t.Fatalf("batch: first %d err %v", first, err)
			}
			check := func(l *Log) {
				t.Helper()
				for i := 0; i < 35; i++ {
					if got := mustGet(t, l, uint64(i+1)); !bytes.Equal(got, payload(i)) {
						t.Fatalf("id %d: got %q want %q", i+1, got, payload(i))
					}
				}
				if _, err := l.Get(36, nil); !errors.Is(err, ErrNotFound) {
					t.Fatalf("get past end: %v", err)
				}
				if _, err := l.Get(0, nil); !errors.Is(err, ErrNotFound) {
					t.Fatalf("get 0: %v", err)
				}
				var seen []uint64
				if err := l.Scan(5, 30, func(id uint64, p []byte) error {
					if !bytes.Equal(p, payload(int(id-1))) {
						return fmt.Errorf("scan id %d: wrong payload", id)
					}
					seen = append(seen, id)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				if len(seen) != 25 || seen[0] != 5 || seen[24] != 29 {
					t.Fatalf("scan saw %v", seen)
				}
				var many []uint64
				if err := l.GetMany([]uint64{33, 2, 17, 2, 99}, func(id uint64, p []byte) error {
					if !bytes.Equal(p, payload(int(id-1))) {
						return fmt.Errorf("getmany id %d: wrong payload", id)
					}
					many = append(many, id)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(many) != "[2 17 33]" {
					t.Fatalf("getmany saw %v", many)
				}
			}
			check(l)
			if n, err := l.sealOne(false); err != nil || n != 10 {
				t.Fatalf("sealOne: %d %v", n, err)
			}
			check(l)
			if err := l.Seal(); err != nil {
				t.Fatal(err)
			}
			if m := l.Metrics(); m.Segments != 4 || m.TailRecords != 0 || m.SealedRecords != 35 {
				t.Fatalf("metrics after seal: %+v", m)
			}
			check(l)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = openMem(t, fs, Options{SegmentRecords: 10, Compression: algo, NoCompression: algo == CompressionNone, DisableBackgroundSeal: true})
			check(l)
			if id, err := l.Append(ctx, []byte("after reopen")); err != nil || id != 36 {
				t.Fatalf("append after reopen: %d %v", id, err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	l := openMem(t, vfs.NewMem(), Options{MaxRecordBytes: 100})
	defer l.Close()
	if _, err := l.AppendBatch(ctx, nil); !errors.Is(err, ErrEmpty) {
		t.Fatalf("empty batch: %v", err)
	}
	if _, err := l.AppendBatch(ctx, [][]byte{[]byte("ok"), make([]byte, 101)}); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("too large: %v", err)
	}
	if l.Next() != 1 {
		t.Fatalf("a rejected batch consumed ids: next %d", l.Next())
	}
	if err := l.Delete(ctx, []uint64{5}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("delete unknown: %v", err)
	}
	for _, o := range []Options{{SegmentRecords: -1}, {Compression: 9}, {ZstdLevel: 7}, {MaxRecordBytes: -3}} {
		o.FS = vfs.NewMem()
		if _, err := Open("x", o); err == nil {
			t.Fatalf("options %+v accepted", o)
		}
	}
}

// TestConcurrentAppendDense checks that concurrent appenders get dense,
// unique ids and that every record reads back as written, while the
// background sealer runs.
func TestConcurrentAppendDense(t *testing.T) {
	l := openMem(t, vfs.NewMem(), Options{SegmentRecords: 64})
	const writers, per = 8, 300
	var mu sync.Mutex
	got := map[uint64][]byte{}
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				p := []byte(fmt.Sprintf("w%d-%d", w, i))
				var ids []uint64
				if i%3 == 0 {
					first, err := l.AppendBatch(ctx, [][]byte{p, append(p, '!')})
					if err != nil {
						t.Error(err)
						return
					}
					ids = []uint64{first, first + 1}
					mu.Lock()
					got[first], got[first+1] = p, append(p, '!')
					mu.Unlock()
				} else {
					id, err := l.Append(ctx, p)
					if err != nil {
						t.Error(err)
						return
					}
					ids = []uint64{id}
					mu.Lock()
					got[id] = p
					mu.Unlock()
				}
				_ = ids
			}
		}(w)
	}
	wg.Wait()
	n := uint64(len(got))
	if l.Next() != n+1 {
		t.Fatalf("next %d after %d records", l.Next(), n)
	}
	for id := uint64(1); id <= n; id++ {
		want, ok := got[id]
		if !ok {
			t.Fatalf("id %d never handed out: ids not dense", id)
		}
		if p := mustGet(t, l, id); !bytes.Equal(p, want) {
			t.Fatalf("id %d: got %q want %q", id, p, want)
		}
	}
	if m := l.Metrics(); m.Groups >= m.Appended {
		t.Logf("no group commit observed: %d groups for %d records", m.Groups, m.Appended)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestDeleteCompactRemovesBytes(t *testing.T) {
	fs := vfs.NewMem()
	l := openMem(t, fs, Options{SegmentRecords: 8, NoCompression: true, DisableBackgroundSeal: true})
	secret := func(i int) []byte { return []byte(fmt.Sprintf("SECRET-%04d-do-not-keep", i)) }
	var batch [][]byte
	for i := 0; i < 20; i++ {
		if i%5 == 0 {
			batch = append(batch, secret(i))
		} else {
			batch = append(batch, payload(i))
		}
	}
	if _, err := l.AppendBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if _, err := l.sealOne(false); err != nil { // ids 1-8 sealed, the rest in the tail
		t.Fatal(err)
	}
	del := []uint64{1, 6, 11, 16} // two sealed, two in the tail
	if err := l.Delete(ctx, del); err != nil {
		t.Fatal(err)
	}
	for _, id := range del {
		if _, err := l.Get(id, nil); !errors.Is(err, ErrDeleted) {
			t.Fatalf("get deleted %d: %v", id, err)
		}
	}
	if err := l.Seal(); err != nil {
		t.Fatal(err)
	}
	if err := l.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range del {
		if _, err := l.Get(id, nil); !errors.Is(err, ErrDeleted) {
			t.Fatalf("get deleted %d after compact: %v", id, err)
		}
	}
	for i := 0; i < 20; i++ {
		if i%5 != 0 && !bytes.Equal(mustGet(t, l, uint64(i+1)), payload(i)) {
			t.Fatalf("id %d damaged by compaction", i+1)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Physically gone: no file of the store holds a deleted secret.
	files, err := fs.List("db")
	if err != nil {
		t.Fatal(err)
	}
	var total int
	for _, name := range files {
		f, err := fs.Open(fs.PathJoin("db", name))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		_, err = buf.ReadFrom(f)
		f.Close()
		if err != nil {
			continue // a directory
		}
		total += buf.Len()
		for _, i := range []int{0, 5, 10, 15} {
			if bytes.Contains(buf.Bytes(), secret(i)) {
				t.Errorf("file %s still holds deleted record %q", name, secret(i))
			}
		}
	}
	if total == 0 {
		t.Fatal("read no store files: the check above proved nothing")
	}
	l = openMem(t, fs, Options{SegmentRecords: 8, NoCompression: true})
	defer l.Close()
	if _, err := l.Get(6, nil); !errors.Is(err, ErrDeleted) {
		t.Fatalf("deleted id after reopen: %v", err)
	}
	if !bytes.Equal(mustGet(t, l, 7), payload(6)) {
		t.Fatal("live record lost after reopen")
	}
}

func TestDropBefore(t *testing.T) {
	l := openMem(t, vfs.NewMem(), Options{SegmentRecords: 10, DisableBackgroundSeal: true})
	defer l.Close()
	var batch [][]byte
	for i := 0; i < 45; i++ {
		batch = append(batch, payload(i))
	}
	if _, err := l.AppendBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if err := l.Seal(); err != nil {
		t.Fatal(err)
	}
	n, err := l.DropBefore(ctx, 25) // segments [1,11) and [11,21) go; [21,31) straddles
	if err != nil || n != 20 {
		t.Fatalf("drop: %d %v", n, err)
	}
	if _, err := l.Get(20, nil); !errors.Is(err, ErrDeleted) {
		t.Fatalf("dropped id: %v", err)
	}
	if !bytes.Equal(mustGet(t, l, 21), payload(20)) {
		t.Fatal("kept id wrong")
	}
	var count int
	if err := l.Scan(1, 100, func(uint64, []byte) error { count++; return nil }); err != nil || count != 25 {
		t.Fatalf("scan after drop: %d %v", count, err)
	}
}

func TestRandomOpsAgainstModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	fs := vfs.NewMem()
	opts := Options{SegmentRecords: 7, SegmentBytes: 300, DisableBackgroundSeal: true}
	l := openMem(t, fs, opts)
	model := map[uint64][]byte{}
	deleted := map[uint64]bool{}
	next := uint64(1)
	for step := 0; step < 400; step++ {
		switch r := rng.IntN(100); {
		case r < 50:
			n := 1 + rng.IntN(5)
			var b [][]byte
			for i := 0; i < n; i++ {
				p := make([]byte, rng.IntN(80))
				for j := range p {
					p[j] = byte('a' + rng.IntN(26))
				}
				b = append(b, p)
			}
			first, err := l.AppendBatch(ctx, b)
			if err != nil || first != next {
				t.Fatalf("step %d append: first %d want %d err %v", step, first, next, err)
			}
			for i, p := range b {
				model[next+uint64(i)] = p
			}
			next += uint64(n)
		case r < 60 && next > 1:
			id := 1 + uint64(rng.IntN(int(next-1)))
			if err := l.Delete(ctx, []uint64{id}); err != nil {
				t.Fatal(err)
			}
			deleted[id] = true
		case r < 70:
			if _, err := l.sealOne(rng.IntN(2) == 0); err != nil {
				t.Fatal(err)
			}
		case r < 73:
			if err := l.Compact(ctx); err != nil {
				t.Fatal(err)
			}
		case r < 78:
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = openMem(t, fs, opts)
		case r < 88 && next > 1:
			// GetMany of a scattered set (served from segments and from the
			// record cache it fills) against the model.
			var ids []uint64
			for range 1 + rng.IntN(12) {
				ids = append(ids, 1+uint64(rng.IntN(int(next-1))))
			}
			checkGetMany(t, l, ids, model, deleted)
		default:
			if next == 1 {
				continue
			}
			id := 1 + uint64(rng.IntN(int(next-1)))
			p, err := l.Get(id, nil)
			if deleted[id] {
				if !errors.Is(err, ErrDeleted) {
					t.Fatalf("step %d: deleted id %d: %v", step, id, err)
				}
			} else if err != nil || !bytes.Equal(p, model[id]) {
				t.Fatalf("step %d: id %d: %q %v, want %q", step, id, p, err, model[id])
			}
		}
	}
	var seen int
	err := l.Scan(1, next, func(id uint64, p []byte) error {
		if deleted[id] || !bytes.Equal(p, model[id]) {
			return fmt.Errorf("scan: id %d wrong", id)
		}
		seen++
		return nil
	})
	if err != nil || seen != len(model)-len(deleted) {
		t.Fatalf("final scan: %d of %d, %v", seen, len(model)-len(deleted), err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSealReusedBuffers: consecutive seals reuse the sealing scratch, so a
// segment must never see another's bytes; empty payloads stay records (not
// deletions) and deleted tail records stay deleted.
func TestSealReusedBuffers(t *testing.T) {
	fs := vfs.NewMem()
	l := openMem(t, fs, Options{SegmentRecords: 4, DisableBackgroundSeal: true})
	ctx := context.Background()
	want := map[uint64][]byte{}
	for round := range 5 {
		var batch [][]byte
		for i := range 6 {
			p := bytes.Repeat([]byte{byte('a' + round)}, (i*7+round*3)%20)
			batch = append(batch, p)
		}
		first, err := l.AppendBatch(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range batch {
			want[first+uint64(i)] = p
		}
		if err := l.Delete(ctx, []uint64{first + 1}); err != nil {
			t.Fatal(err)
		}
		delete(want, first+1)
		if _, err := l.sealOne(false); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Seal(); err != nil {
		t.Fatal(err)
	}
	for id := uint64(1); id < l.Next(); id++ {
		p, ok := want[id]
		got, err := l.Get(id, nil)
		switch {
		case !ok && !errors.Is(err, ErrDeleted):
			t.Fatalf("id %d: deleted, got %q, %v", id, got, err)
		case ok && (err != nil || !bytes.Equal(got, p)):
			t.Fatalf("id %d: got %q, %v, want %q", id, got, err, p)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkGetMany compares GetMany(ids) with the live records of model.
func checkGetMany(t *testing.T, l *Log, ids []uint64, model map[uint64][]byte, deleted map[uint64]bool) {
	t.Helper()
	want := map[uint64]bool{}
	for _, id := range ids {
		if _, ok := model[id]; ok && !deleted[id] {
			want[id] = true
		}
	}
	var last uint64
	got := 0
	err := l.GetMany(ids, func(id uint64, p []byte) error {
		if id <= last {
			return fmt.Errorf("id %d after %d", id, last)
		}
		last = id
		if !want[id] {
			return fmt.Errorf("id %d returned (deleted or unknown)", id)
		}
		if !bytes.Equal(p, model[id]) {
			return fmt.Errorf("id %d: %q, want %q", id, p, model[id])
		}
		got++
		return nil
	})
	if err != nil {
		t.Fatalf("GetMany(%v): %v", ids, err)
	}
	if got != len(want) {
		t.Fatalf("GetMany(%v): %d records, want %d", ids, got, len(want))
	}
}

// TestGetManyRecordCache: records GetMany caches one by one are never
// served after their deletion, a compaction (which clears tombstones) or a
// drop, and survive evictions intact, for every compression.
func TestGetManyRecordCache(t *testing.T) {
	for _, algo := range []Compression{CompressionNone, CompressionZstd, CompressionS2} {
		for _, cacheBytes := range []int64{1 << 20, 2000, 1400} { // roomy: segments; 1400: records only (a segment is ~1.5 KB)
			t.Run(fmt.Sprintf("%s/cache=%d", algo, cacheBytes), func(t *testing.T) {
				l := openMem(t, vfs.NewMem(), Options{SegmentRecords: 20, Compression: algo, NoCompression: algo == CompressionNone, CacheBytes: cacheBytes, DisableBackgroundSeal: true})
				defer l.Close()
				model := map[uint64][]byte{}
				var b [][]byte
				for i := range 200 {
					b = append(b, payload(i))
					model[uint64(i+1)] = payload(i)
				}
				if _, err := l.AppendBatch(ctx, b); err != nil {
					t.Fatal(err)
				}
				if err := l.Seal(); err != nil {
					t.Fatal(err)
				}
				deleted := map[uint64]bool{}
				scattered := []uint64{3, 3, 27, 28, 64, 101, 150, 199, 200, 201}
				for range 2 { // the second pass is served from the caches
					checkGetMany(t, l, scattered, model, deleted)
				}
				misses := l.Metrics().CacheMisses
				checkGetMany(t, l, scattered, model, deleted)
				if cacheBytes > 1<<16 && l.Metrics().CacheMisses != misses {
					t.Fatalf("cached records read a segment again: misses %d -> %d", misses, l.Metrics().CacheMisses)
				}
				// The records about to be deleted are the most recently used:
				// still cached (as records when segments do not fit) when the
				// compaction clears their tombstones.
				doomed := []uint64{27, 150}
				checkGetMany(t, l, doomed, model, deleted)
				if err := l.Delete(ctx, doomed); err != nil {
					t.Fatal(err)
				}
				deleted[27], deleted[150] = true, true
				checkGetMany(t, l, doomed, model, deleted)
				if err := l.Compact(ctx); err != nil {
					t.Fatal(err)
				}
				checkGetMany(t, l, doomed, model, deleted)
				checkGetMany(t, l, scattered, model, deleted)
				if _, err := l.DropBefore(ctx, 61); err != nil {
					t.Fatal(err)
				}
				for id := uint64(1); id < 61; id++ {
					deleted[id] = true
				}
				checkGetMany(t, l, scattered, model, deleted)
			})
		}
	}
}

// TestGetManyConcurrentCompact: readers that GetMany scattered ids or Scan
// short ranges while a writer deletes, compacts (rewriting segments and
// clearing tombstones) and drops segments never see a record whose deletion
// or drop completed before their call began, and always see the right
// bytes: a record cached from, or a copy of, a segment read before a
// compaction must not be served after it.
func TestGetManyConcurrentCompact(t *testing.T) {
	for _, cacheBytes := range []int64{1 << 20, 1400} { // segments and records; records only
		t.Run(fmt.Sprintf("cache=%d", cacheBytes), func(t *testing.T) {
			l := openMem(t, vfs.NewMem(), Options{SegmentRecords: 20, CacheBytes: cacheBytes, DisableBackgroundSeal: true})
			defer l.Close()
			const n = 600
			var b [][]byte
			for i := range n {
				b = append(b, payload(i))
			}
			if _, err := l.AppendBatch(ctx, b); err != nil {
				t.Fatal(err)
			}
			if err := l.Seal(); err != nil {
				t.Fatal(err)
			}
			// gone[id] is set once id's deletion (or its segment's drop) has
			// returned.
			var gone [n + 1]atomic.Bool
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for r := range 2 {
				wg.Add(1)
				go func(seed uint64) {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(seed, 3))
					for {
						select {
						case <-stop:
							return
						default:
						}
						ids := make([]uint64, 1+rng.IntN(8))
						for i := range ids {
							ids[i] = 1 + uint64(rng.IntN(n))
						}
						var before [n + 1]bool
						for id := range before {
							before[id] = gone[id].Load()
						}
						check := func(id uint64, p []byte) error {
							if before[id] {
								return fmt.Errorf("id %d returned after its deletion", id)
							}
							if !bytes.Equal(p, payload(int(id-1))) {
								return fmt.Errorf("id %d: wrong payload %q", id, p)
							}
							return nil
						}
						var err error
						if rng.IntN(3) == 0 {
							lo := ids[0]
							err = l.Scan(lo, lo+50, check)
						} else {
							err = l.GetMany(ids, check)
						}
						if err != nil {
							t.Error(err)
							return
						}
					}
				}(uint64(r))
			}
			rng := rand.New(rand.NewPCG(9, 9))
			for step := range 60 {
				var del []uint64
				for range 1 + rng.IntN(10) {
					del = append(del, 1+uint64(rng.IntN(n)))
				}
				if err := l.Delete(ctx, del); err != nil {
					t.Fatal(err)
				}
				for _, id := range del {
					gone[id].Store(true)
				}
				if step%3 == 2 {
					if err := l.Compact(ctx); err != nil {
						t.Fatal(err)
					}
				}
				if step == 40 {
					if _, err := l.DropBefore(ctx, 101); err != nil {
						t.Fatal(err)
					}
					for id := 1; id < 101; id++ {
						gone[id].Store(true)
					}
				}
			}
			close(stop)
			wg.Wait()
		})
	}
}

// TestDefaultCompression: the zero Options compress sealed segments with
// zstd (the documented default), NoCompression stores them raw.
func TestDefaultCompression(t *testing.T) {
	o := Options{}
	o.EnsureDefaults()
	if o.Compression != CompressionZstd {
		t.Fatalf("zero Options: %v, want zstd", o.Compression)
	}
	o = Options{NoCompression: true, Compression: CompressionS2}
	o.EnsureDefaults()
	if o.Compression != CompressionNone {
		t.Fatalf("NoCompression: %v, want none", o.Compression)
	}
	o = Options{Compression: CompressionS2}
	o.EnsureDefaults()
	if o.Compression != CompressionS2 {
		t.Fatalf("s2 asked: %v", o.Compression)
	}
}

// TestSegmentStarts: a sealed record's start is its segment's first id,
// the same for every record of a segment; an unsealed record's is itself.
func TestSegmentStarts(t *testing.T) {
	l := openMem(t, vfs.NewMem(), Options{SegmentRecords: 20, DisableBackgroundSeal: true})
	defer l.Close()
	var b [][]byte
	for i := range 70 {
		b = append(b, payload(i))
	}
	if _, err := l.AppendBatch(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := l.Seal(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendBatch(ctx, b[:5]); err != nil { // ids 71-75, unsealed
		t.Fatal(err)
	}
	ids := []uint64{1, 2, 20, 21, 40, 41, 60, 61, 70, 71, 75}
	want := []uint64{1, 1, 1, 21, 21, 41, 41, 61, 61, 71, 75}
	if got := l.SegmentStarts(ids, nil); !slices.Equal(got, want) {
		t.Fatalf("starts %v, want %v", got, want)
	}
}
