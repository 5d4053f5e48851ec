package segment

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/lazymem/lazymem/codec"
)

func nameRecord(agent, session, text string, meta ...codec.Field) []byte {
	return codec.AppendRecord(nil, &codec.Record{Time: 1e18, Agent: agent, Session: session, Role: "user", Text: text, Meta: meta})
}

// storeHolds reports, for each of needles, whether some file of the store
// in fs holds it, raw or in a zstd frame (Pebble compresses its blocks
// with zstd), and fails if no file could be read.
func storeHolds(t *testing.T, fs vfs.FS, needles ...string) map[string]bool {
	t.Helper()
	found := map[string]bool{}
	total := 0
	for _, b := range storeFiles(t, fs, nil) {
		total += len(b)
		for _, n := range needles {
			if bytes.Contains(b, []byte(n)) {
				found[n] = true
			}
		}
	}
	if total == 0 {
		t.Fatal("read no store files")
	}
	return found
}

// TestNamesForgotten: an agent, a session and a metadata value whose
// every record is deleted leave the log's name table at Compact, in memory and in every
// file of the store; a name a live record still uses (one session shared
// by a deleted record and a kept one, in another segment) stays, and the
// kept records read back after a reopen.
func TestNamesForgotten(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewMem()
	opts := Options{SegmentRecords: 8, NoCompression: true, DisableBackgroundSeal: true}
	l := openMem(t, fs, opts)
	const (
		goneAgent   = "AGENT-FORGOTTEN-7781"
		goneSession = "SESSION-FORGOTTEN-5531"
		goneTag     = "TAG-FORGOTTEN-9917"
		keptTag     = "TAG-KEPT-3030"
		shared      = "SESSION-SHARED-4242"
		keptAgent   = "AGENT-KEPT-1234"
	)
	var recs [][]byte
	for i := range 24 {
		switch {
		case i >= 8 && i < 16: // the second segment, all forgotten
			recs = append(recs, nameRecord(goneAgent, goneSession, fmt.Sprintf("gone %d", i),
				codec.Field{Key: "tags", Values: []string{goneTag, keptTag}}))
		case i == 3 || i == 20: // the shared session, in two segments
			recs = append(recs, nameRecord(keptAgent, shared, fmt.Sprintf("shared %d", i)))
		default:
			recs = append(recs, nameRecord(keptAgent, fmt.Sprintf("session-%d", i%2), fmt.Sprintf("kept %d", i),
				codec.Field{Key: "tags", Values: []string{keptTag}}))
		}
	}
	if _, err := l.AppendBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if err := l.Seal(); err != nil {
		t.Fatal(err)
	}
	if len(l.segs) != 3 {
		t.Fatalf("%d segments, want 3", len(l.segs))
	}
	for _, m := range l.segs {
		v, closer, err := l.db.Get(makeKey(prefixSegment, m.first))
		if err != nil {
			t.Fatal(err)
		}
		if v[0] < segmentVersionNames || bytes.Contains(v, []byte(keptAgent)) {
			t.Fatalf("segment %d: version %d, holds the agent's name: %v", m.first, v[0], bytes.Contains(v, []byte(keptAgent)))
		}
		closer.Close()
	}
	if got := storeHolds(t, fs, goneAgent, goneSession, goneTag); !got[goneAgent] || !got[goneSession] || !got[goneTag] {
		t.Fatalf("before the delete the store holds %v: the scan cannot see names", got)
	}
	del := []uint64{4} // the shared session's first record
	for id := uint64(9); id <= 16; id++ {
		del = append(del, id)
	}
	if err := l.Delete(ctx, del); err != nil {
		t.Fatal(err)
	}
	if err := l.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{goneAgent, goneSession, goneTag} {
		if _, ok := l.names.ids[n]; ok {
			t.Errorf("%s still in the name table in memory", n)
		}
	}
	for _, n := range []string{keptAgent, shared, "user", "tags", keptTag} {
		if _, ok := l.names.ids[n]; !ok {
			t.Errorf("%s left the name table: a live record uses it", n)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got := storeHolds(t, fs, goneAgent, goneSession, goneTag, keptAgent, shared, keptTag)
	if got[goneAgent] || got[goneSession] || got[goneTag] {
		t.Errorf("after Compact the store still holds a forgotten name: %v", got)
	}
	if !got[keptAgent] || !got[shared] || !got[keptTag] {
		t.Errorf("a live name is gone from the store: %v", got)
	}
	l = openMem(t, fs, opts)
	defer l.Close()
	for i, p := range recs {
		id := uint64(i + 1)
		q, err := l.Get(id, nil)
		gone := id == 4 || (id >= 9 && id <= 16)
		if gone != (err != nil) || !gone && !bytes.Equal(p, q) {
			t.Fatalf("id %d after reopen: %v", id, err)
		}
	}
	if _, ok := l.names.ids[goneAgent]; ok {
		t.Error("the forgotten agent is back after a reopen")
	}
}

// TestNamesOldSegments: a log written as version 3 (names in each head)
// reads on in a process that writes version 4; Compact rewrites the old
// segments holding deletions as version 4 and keeps the others; every
// record reads back, before and after a reopen.
func TestNamesOldSegments(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewMem()
	opts := Options{SegmentRecords: 32, DisableBackgroundSeal: true}
	l := openMem(t, fs, opts)
	l.columnsVersion = segmentVersionFrames // written as before the name table
	r := rand.New(rand.NewPCG(5, 6))
	var recs [][]byte
	for range 96 {
		recs = append(recs, chatRecord(r, 5+r.IntN(40)))
	}
	if _, err := l.AppendBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if err := l.Seal(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openMem(t, fs, opts)
	more := make([][]byte, 64)
	for i := range more {
		more[i] = chatRecord(r, 5+r.IntN(40))
	}
	if _, err := l.AppendBatch(ctx, more); err != nil {
		t.Fatal(err)
	}
	recs = append(recs, more...)
	if err := l.Seal(); err != nil {
		t.Fatal(err)
	}
	if err := l.Delete(ctx, []uint64{40}); err != nil { // in the second old segment
		t.Fatal(err)
	}
	if err := l.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	versions := func() []byte {
		var vs []byte
		for _, m := range l.segs {
			v, closer, err := l.db.Get(makeKey(prefixSegment, m.first))
			if err != nil {
				t.Fatal(err)
			}
			vs = append(vs, v[0])
			closer.Close()
		}
		return vs
	}
	want := []byte{3, 4, 3, 4, 4}
	check := func(stage string) {
		t.Helper()
		if got := versions(); !bytes.Equal(got, want) {
			t.Fatalf("%s: segment versions %v, want %v", stage, got, want)
		}
		for i, p := range recs {
			id := uint64(i + 1)
			q, err := l.Get(id, nil)
			if id == 40 {
				if err == nil {
					t.Fatalf("%s: deleted id 40 reads", stage)
				}
				continue
			}
			if err != nil || !bytes.Equal(p, q) {
				t.Fatalf("%s: id %d: %v", stage, id, err)
			}
		}
		ids := make([]uint64, len(recs))
		for i := range ids {
			ids[i] = uint64(i + 1)
		}
		l.cache = newSegCache(1) // GetMany reads the frames
		n := 0
		if err := l.GetMany(ids, func(id uint64, p []byte) error {
			n++
			if !bytes.Equal(p, recs[id-1]) {
				return fmt.Errorf("id %d differs", id)
			}
			return nil
		}); err != nil || n != len(recs)-1 {
			t.Fatalf("%s: GetMany: %d records, %v", stage, n, err)
		}
	}
	check("after compact")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openMem(t, fs, opts)
	defer l.Close()
	check("after reopen")
}

// TestNamesMissing: a version-4 head that refers to a name the log does
// not have fails the reads of the records that name it with a
// *CorruptionError (and the whole segment's, and Verify); a read of
// another record walks past it (the head's checksum held: the head is
// what was written) and returns its record.
func TestNamesMissing(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewMem()
	l := openMem(t, fs, Options{SegmentRecords: 8, DisableBackgroundSeal: true})
	defer l.Close()
	var recs [][]byte
	for i := range 8 {
		recs = append(recs, nameRecord("agent", fmt.Sprintf("s%d", i), "text"))
	}
	if _, err := l.AppendBatch(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if err := l.Seal(); err != nil {
		t.Fatal(err)
	}
	id := l.names.ids["s3"]
	l.names.mu.Lock()
	l.names.remove([]uint64{id})
	l.names.mu.Unlock()
	l.cache = newSegCache(1)
	if _, err := l.Get(4, nil); !IsCorruption(err) {
		t.Fatalf("read with a name missing: %v, want a corruption error", err)
	}
	if err := l.GetMany([]uint64{4}, func(uint64, []byte) error { return nil }); !IsCorruption(err) {
		t.Fatalf("GetMany of the record naming a missing name: %v, want a corruption error", err)
	}
	var got []uint64
	if err := l.GetMany([]uint64{2, 5, 8}, func(id uint64, p []byte) error {
		want := nameRecord("agent", fmt.Sprintf("s%d", id-1), "text")
		if !bytes.Equal(p, want) {
			t.Fatalf("record %d: %x, want %x", id, p, want)
		}
		got = append(got, id)
		return nil
	}); err != nil || len(got) != 3 {
		t.Fatalf("GetMany of records past the missing name: %v (read %v), want all three", err, got)
	}
	if err := l.Verify(ctx); !IsCorruption(err) {
		t.Fatalf("Verify with a name missing: %v, want a corruption error", err)
	}
}

// FuzzNames fuzzes the version-4 reader: a value whose head refers to
// names by id, built from fuzzed columns or fuzzed whole, reads each
// record alone as the whole-segment decoder rebuilds it, or fails both
// ways, and never panics.
func FuzzNames(f *testing.F) {
	r := rand.New(rand.NewPCG(43, 44))
	c, err := newCompressor(CompressionNone, 3)
	if err != nil {
		f.Fatal(err)
	}
	defer c.close()
	c.names = newNameTable()
	c.names.maxBytes = 40 // some metadata strings stay in the heads (code 1)
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
		v, err := c.appendFramed(nil, segmentVersionNames, n, body, len(texts), nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint16(n), body[:len(body)-len(texts)], texts, v)
	}
	f.Fuzz(func(t *testing.T, count uint16, head, texts, raw []byte) {
		readAll := func(v []byte, n int) {
			d, err := c.openFramed(1, v)
			checkAlone(t, c, v, n, d, err)
			used := map[uint64]bool{}
			if c.namesUsed(1, v, used) == nil && err == nil {
				for id := range used {
					if _, ok := c.names.get(id); !ok {
						t.Fatalf("the segment opens, its name %d is not in the table", id)
					}
				}
			}
		}
		if count > 0 {
			body := append(bytes.Clone(head), texts...)
			if v, err := c.appendFramed(nil, segmentVersionNames, int(count), body, len(texts), nil); err == nil {
				readAll(v, int(count))
			}
		}
		if len(raw) > 0 {
			raw[0] = segmentVersionNames
			if fv, err := parseFramed(1, raw); err == nil {
				readAll(raw, fv.count)
			} else if _, err := c.openFramed(1, raw); err == nil {
				t.Fatal("a value whose header fails opens")
			}
		}
	})
}

// BenchmarkNameLookup resolves names by id, as a cold read's head walk
// does (one lookup a name a segment meets first), from parallel readers
// (the recall's fetch runs up to four): impl=map is the table's former
// layout (a map under a shared lock), impl=slice the table's (a slice
// indexed by id, read without a lock). 200k names, about the sessions of
// the 1M-record Zipf corpus; ids drawn at random.
//
//	go test ./segment -run XXX -bench NameLookup
func BenchmarkNameLookup(b *testing.B) {
	const n = 200_000
	t := newNameTable()
	var mu sync.RWMutex
	m := make(map[uint64][]byte, n)
	names := make([]pendingName, n)
	for i := range names {
		names[i] = pendingName{id: uint64(i + 1), s: fmt.Sprintf("session-%d", i)}
		m[uint64(i+1)] = []byte(names[i].s)
	}
	t.add(names)
	for _, impl := range []string{"map", "slice"} {
		b.Run("impl="+impl, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				r := rand.New(rand.NewPCG(1, 2))
				found, iters := 0, 0
				for pb.Next() {
					iters++
					id := 1 + r.Uint64N(n)
					var ok bool
					if impl == "map" {
						mu.RLock()
						_, ok = m[id]
						mu.RUnlock()
					} else {
						_, ok = t.get(id)
					}
					if ok {
						found++
					}
				}
				if found != iters {
					b.Errorf("%d names found of %d", found, iters)
				}
			})
		})
	}
}

// TestNameTable: names added in seals' batches, reloaded, far past the
// table (a damaged key at Open) and removed are found, or not, as they
// should be, and the bytes counted; readers running during adds and
// removes see every name added before they started (under -race, no
// race: an entry a reader may see is never written in place).
func TestNameTable(t *testing.T) {
	tb := newNameTable()
	var batch []pendingName
	for id := uint64(1); id <= 300; id++ {
		batch = append(batch, pendingName{id: id, s: fmt.Sprintf("n%d", id)})
		if id%7 == 0 {
			tb.add(batch)
			batch = batch[:0]
		}
	}
	tb.add(batch)
	far := uint64(1) << 40
	tb.add([]pendingName{{id: far, s: "far"}, {id: 5, s: "n5"}}) // 5 again: as Open's reload
	if got := tb.size(); got != 301 {
		t.Fatalf("size %d, want 301", got)
	}
	want := 3 // "far"
	for id := 1; id <= 300; id++ {
		want += len(fmt.Sprintf("n%d", id))
	}
	if tb.bytes != want {
		t.Fatalf("bytes %d, want %d", tb.bytes, want)
	}
	check := func(id uint64, want string, ok bool) {
		t.Helper()
		s, got := tb.get(id)
		if got != ok || string(s) != want {
			t.Fatalf("get(%d) = %q, %v; want %q, %v", id, s, got, want, ok)
		}
	}
	check(0, "", false)
	check(1, "n1", true)
	check(300, "n300", true)
	check(301, "", false)
	check(far, "far", true)
	check(far+1, "", false)
	if tb.next != far+1 {
		t.Fatalf("next %d, want %d", tb.next, far+1)
	}
	// Readers during adds and removes.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for id := uint64(1); id <= 200; id++ {
					if s, ok := tb.get(id); !ok || string(s) != fmt.Sprintf("n%d", id) {
						t.Errorf("get(%d) = %q, %v during writes", id, s, ok)
						return
					}
				}
			}
		}()
	}
	removed := 0
	for id := uint64(301); id < 3000; id++ {
		tb.add([]pendingName{{id: id, s: fmt.Sprintf("n%d", id)}})
		if id%100 == 0 {
			removed++
			tb.mu.Lock()
			tb.remove([]uint64{id - 50})
			tb.mu.Unlock()
		}
	}
	close(stop)
	wg.Wait()
	tb.mu.Lock()
	tb.remove([]uint64{1, far, 12345})
	tb.mu.Unlock()
	check(1, "", false)
	check(far, "", false)
	check(2, "n2", true)
	check(350, "", false)
	check(351, "n351", true)
	check(2999, "n2999", true)
	if _, ok := tb.ids["n1"]; ok {
		t.Fatal("a removed name is still in ids")
	}
	if got, want := tb.size(), 2999-removed-1; got != want { // "far" and 1 removed, 2-2999 less the others
		t.Fatalf("size %d, want %d", got, want)
	}
}
