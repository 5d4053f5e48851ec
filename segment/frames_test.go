package segment

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/lazymem/lazymem/codec"
)

// chatRecord is an engine record whose text is n words of a small
// vocabulary (so that a dictionary has something to learn).
func chatRecord(r *rand.Rand, n int) []byte {
	words := strings.Fields("the deploy of the billing service moved to friday after the review " +
		"and alice asked bob about the cache size in the staging cluster while carol " +
		"wrote the migration plan for postgres and the team agreed on the rollout")
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[r.IntN(len(words))])
	}
	c := codec.Record{Time: 1e18 + r.Int64N(1e12), Agent: fmt.Sprintf("agent-%d", r.IntN(4)),
		Session: fmt.Sprintf("s-%d", r.IntN(30)), Role: "user", Text: b.String()}
	if r.IntN(3) == 0 {
		c.Meta = []codec.Field{{Key: "topic", Values: []string{fmt.Sprintf("t%d", r.IntN(9))}}}
	}
	return codec.AppendRecord(nil, &c)
}

// framedLog appends recs to a new in-memory log sealing framed segments
// of up to 64 records, deletes the ids in del and seals everything.
func framedLog(t *testing.T, fs vfs.FS, opts Options, recs [][]byte, del []uint64) *Log {
	t.Helper()
	l := openMem(t, fs, opts)
	for lo := 0; lo < len(recs); lo += 100 {
		if _, err := l.AppendBatch(ctx, recs[lo:min(len(recs), lo+100)]); err != nil {
			t.Fatal(err)
		}
	}
	if len(del) > 0 {
		if err := l.Delete(ctx, del); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Seal(); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestFramedReads: records of a framed log (texts of every length, some
// spanning two or three frames, some deleted) read back byte for byte
// through GetMany runs, which decompress only the frames they need, and
// through Get, which reads the segment whole; and after a reopen.
func TestFramedReads(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	recs := make([][]byte, 700)
	spanning := 0
	for i := range recs {
		n := r.IntN(40)
		if r.IntN(15) == 0 {
			n = 800 + r.IntN(2000) // 4-14 KiB of text
			spanning++
		}
		recs[i] = chatRecord(r, n)
	}
	var del []uint64
	for range 40 {
		id := uint64(1 + r.IntN(len(recs)))
		del = append(del, id)
		recs[id-1] = nil
	}
	fs := vfs.NewMem()
	// A log cache too small to hold a segment: every GetMany reads.
	opts := Options{SegmentRecords: 64, SegmentBytes: 1 << 20, DisableBackgroundSeal: true, CacheBytes: 1}
	l := framedLog(t, fs, opts, recs, del)
	frames := 0
	for _, m := range l.segs {
		v, closer, err := l.db.Get(makeKey(prefixSegment, m.first))
		if err != nil {
			t.Fatal(err)
		}
		if v[0] != segmentVersionNames {
			t.Fatalf("segment %d: version %d", m.first, v[0])
		}
		f, err := parseFramed(m.first, v)
		if err != nil {
			t.Fatal(err)
		}
		frames += len(f.frames)
		closer.Close()
	}
	if spanning == 0 || frames < 2*len(l.segs) {
		t.Fatalf("%d long records, %d frames in %d segments: the test needs texts spanning frames", spanning, frames, len(l.segs))
	}
	check := func(l *Log) {
		t.Helper()
		for trial := range 300 {
			var ids []uint64
			for range 1 + r.IntN(6) {
				ids = append(ids, uint64(1+r.IntN(len(recs)+3)))
			}
			got := map[uint64][]byte{}
			misses := l.cache.misses.Load()
			err := l.GetMany(ids, func(id uint64, p []byte) error {
				got[id] = bytes.Clone(p)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if l.cache.misses.Load() == misses && trial == 0 {
				t.Fatal("GetMany read no segment")
			}
			for _, id := range ids {
				var want []byte
				if id <= uint64(len(recs)) {
					want = recs[id-1]
				}
				if p, ok := got[id]; ok != (want != nil) || !bytes.Equal(p, want) {
					t.Fatalf("GetMany %v: id %d read %v %x, want %x", ids, id, ok, p, want)
				}
			}
		}
		for i, want := range recs {
			p, err := l.Get(uint64(i+1), nil)
			if want == nil {
				if !errors.Is(err, ErrDeleted) {
					t.Fatalf("id %d: deleted, read %v", i+1, err)
				}
				continue
			}
			if err != nil || !bytes.Equal(p, want) {
				t.Fatalf("Get %d: %v", i+1, err)
			}
		}
		if err := l.Verify(ctx); err != nil {
			t.Fatal(err)
		}
	}
	check(l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openMem(t, fs, opts)
	check(l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestFramedDictionary: once the sealer has seen dictSample bytes of
// text it builds the log's dictionary, stores it with the segment that
// first uses it, and the segments after it are smaller than the same
// records' segments without one; everything reads back after a reopen.
func TestFramedDictionary(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	recs := make([][]byte, 12000)
	text := 0
	for i := range recs {
		recs[i] = chatRecord(r, 5+r.IntN(30))
		text += len(recs[i])
	}
	if text < 2*dictSample {
		t.Fatalf("%d bytes of records: too few to build a dictionary and use it", text)
	}
	stored := map[bool]int64{}
	for _, disable := range []bool{true, false} {
		fs := vfs.NewMem()
		opts := Options{DisableBackgroundSeal: true, DisableDictionary: disable, DisableWords: true}
		l := framedLog(t, fs, opts, recs, nil)
		dicts := map[uint32]int{}
		for i, m := range l.segs {
			v, closer, err := l.db.Get(makeKey(prefixSegment, m.first))
			if err != nil {
				t.Fatal(err)
			}
			f, err := parseFramed(m.first, v)
			if err != nil {
				t.Fatal(err)
			}
			closer.Close()
			dicts[f.dict]++
			// Compare the segments sealed once the dictionary exists.
			if i >= len(l.segs)/2 {
				stored[disable] += int64(m.stored)
			}
		}
		_, closer, err := l.db.Get(makeKey(prefixDict, 1))
		switch {
		case disable && (err == nil || len(dicts) != 1 || dicts[0] == 0):
			t.Fatalf("DisableDictionary: dictionaries used %v, stored %v", dicts, err)
		case !disable && (err != nil || dicts[1] < len(l.segs)/2):
			t.Fatalf("dictionaries used %v (of %d segments), stored: %v", dicts, len(l.segs), err)
		}
		if err == nil {
			closer.Close()
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l = openMem(t, fs, opts)
		for i, want := range recs {
			if got := mustGet(t, l, uint64(i+1)); !bytes.Equal(got, want) {
				t.Fatalf("id %d after reopen", i+1)
			}
		}
		if err := l.Verify(ctx); err != nil {
			t.Fatal(err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if stored[false] >= stored[true] {
		t.Fatalf("the later half of the segments: %d bytes with the dictionary, %d without", stored[false], stored[true])
	}
	t.Logf("the later half of the segments: %d bytes with the dictionary, %d without", stored[false], stored[true])
}

// TestFramedCorruptFrame damages one text frame of a framed segment: the
// records whose text lies in it fail with a *CorruptionError naming the
// segment (through Get and GetMany), its other records and the other
// segments read, and Verify reports the segment. A damaged head fails
// every record of its segment.
func TestFramedCorruptFrame(t *testing.T) {
	for _, where := range []string{"frame", "head"} {
		t.Run(where, func(t *testing.T) {
			r := rand.New(rand.NewPCG(31, 32))
			recs := make([][]byte, 128)
			for i := range recs {
				recs[i] = chatRecord(r, 20+r.IntN(200))
			}
			fs := vfs.NewMem()
			opts := Options{SegmentRecords: 64, SegmentBytes: 1 << 20, DisableBackgroundSeal: true, CacheBytes: 1}
			l := framedLog(t, fs, opts, recs, nil)
			const victim = 65 // the second segment
			key := makeKey(prefixSegment, victim)
			v, closer, err := l.db.Get(key)
			if err != nil {
				t.Fatal(err)
			}
			bad := bytes.Clone(v)
			closer.Close()
			f, err := parseFramed(victim, bad)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.frames) < 3 {
				t.Fatalf("%d frames: the test needs 3", len(f.frames))
			}
			// The records whose text touches frame 1.
			lost := map[uint64]bool{}
			if where == "head" {
				bad[f.head.off+f.head.stored/2] ^= 0x5a
				for id := uint64(victim); id < victim+64; id++ {
					lost[id] = true
				}
			} else {
				bad[f.frames[1].off+f.frames[1].stored/2] ^= 0x5a
				var off uint64
				for id := uint64(victim); id < victim+64; id++ {
					var c codec.Record
					if _, err := codec.DecodeRecord(recs[id-1], &c); err != nil {
						t.Fatal(err)
					}
					end := off + uint64(len(c.Text))
					if off < f.starts[2] && end > f.starts[1] {
						lost[id] = true
					}
					off = end
				}
				if len(lost) == 0 || len(lost) > 40 {
					t.Fatalf("%d records touch frame 1", len(lost))
				}
			}
			if err := l.db.Set(key, bad, pebble.Sync); err != nil {
				t.Fatal(err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = openMem(t, fs, opts)
			defer l.Close()
			for id := uint64(1); id <= uint64(len(recs)); id++ {
				var got []byte
				gmErr := l.GetMany([]uint64{id}, func(_ uint64, p []byte) error {
					got = bytes.Clone(p)
					return nil
				})
				p, err := l.Get(id, nil)
				if !lost[id] {
					if err != nil || gmErr != nil || !bytes.Equal(p, recs[id-1]) || !bytes.Equal(got, recs[id-1]) {
						t.Fatalf("id %d (intact): Get %v, GetMany %v", id, err, gmErr)
					}
					continue
				}
				for _, e := range []error{err, gmErr} {
					var ce *CorruptionError
					if !errors.As(e, &ce) || ce.Segment != victim {
						t.Fatalf("id %d (damaged): want a *CorruptionError naming segment %d, got %v", id, victim, e)
					}
				}
			}
			var ce *CorruptionError
			if err := l.Verify(ctx); !errors.As(err, &ce) || ce.Segment != victim {
				t.Fatalf("verify: %v", err)
			}
			// Repair keeps what reads alone: the records of the intact
			// frames survive it, the damaged ones are deleted.
			n, err := l.Repair(ctx, ce)
			if err != nil || n != len(lost) {
				t.Fatalf("repair: %d lost, %v; want %d", n, err, len(lost))
			}
			if err := l.Verify(ctx); err != nil {
				t.Fatalf("verify after repair: %v", err)
			}
			for id := uint64(1); id <= uint64(len(recs)); id++ {
				p, err := l.Get(id, nil)
				switch {
				case lost[id] && !errors.Is(err, ErrDeleted):
					t.Fatalf("id %d (damaged) after repair: %v", id, err)
				case !lost[id] && (err != nil || !bytes.Equal(p, recs[id-1])):
					t.Fatalf("id %d (intact) after repair: %v", id, err)
				}
			}
		})
	}
}

// checkAlone reads each of the n records of the framed value v alone
// (readFramed) and fails t unless each equals the same record of d, the
// whole segment as openFramed returned it with openErr; when openErr is
// set, the reads alone need only not panic.
func checkAlone(t *testing.T, c *compressor, v []byte, n int, d *decoded, openErr error) {
	t.Helper()
	ids := make([]uint64, n)
	for i := range ids {
		ids[i] = 1 + uint64(i)
	}
	rerr := c.readFramed(1, v, uint32(n), ids, func(id uint64, p []byte, dead bool, ferr error) error {
		if openErr != nil {
			return nil
		}
		q, ok := d.get(id)
		if ferr != nil || ok == dead || !bytes.Equal(p, q) {
			t.Fatalf("record %d alone: %x (deleted %v, %v); whole: %x", id, p, dead, ferr, q)
		}
		return nil
	})
	if openErr == nil && rerr != nil {
		t.Fatalf("the whole segment opens, its records alone fail: %v", rerr)
	}
	// Every third record: the read walks past the others (colCursor.skip,
	// their names not looked up), and must still rebuild those it reads
	// as the whole segment does; on a value that does not open, it may
	// read or fail but not panic.
	some := ids[:0:0]
	for i := 2; i < n; i += 3 {
		some = append(some, ids[i])
	}
	rerr = c.readFramed(1, v, uint32(n), some, func(id uint64, p []byte, dead bool, ferr error) error {
		if openErr != nil {
			return nil
		}
		q, ok := d.get(id)
		if ferr != nil || ok == dead || !bytes.Equal(p, q) {
			t.Fatalf("record %d of every third: %x (deleted %v, %v); whole: %x", id, p, dead, ferr, q)
		}
		return nil
	})
	if openErr == nil && rerr != nil {
		t.Fatalf("the whole segment opens, every third record fails: %v", rerr)
	}
}

// FuzzFramed: a framed value built from any head and texts (no
// compression) either fails to open, or every record read alone
// (readFramed) equals the same record of the whole segment; and any
// stored value fails cleanly or reads.
func FuzzFramed(f *testing.F) {
	r := rand.New(rand.NewPCG(41, 42))
	c, err := newCompressor(CompressionNone, 3)
	if err != nil {
		f.Fatal(err)
	}
	defer c.close()
	for _, n := range []int{1, 3, 20} {
		payloads := make([][]byte, n)
		for i := range payloads {
			if i != 1 {
				payloads[i] = chatRecord(r, r.IntN(900))
			}
		}
		var e colEncoder
		body, _ := e.encode(nil, payloads)
		texts := e.cols[colTexts]
		v, err := c.appendFramed(nil, segmentVersionFrames, n, body, len(texts), nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint16(n), body[:len(body)-len(texts)], texts, v)
	}
	f.Fuzz(func(t *testing.T, count uint16, head, texts, raw []byte) {
		readAll := func(v []byte, n int) {
			d, err := c.openFramed(1, v)
			checkAlone(t, c, v, n, d, err)
		}
		if count > 0 {
			body := append(bytes.Clone(head), texts...)
			if v, err := c.appendFramed(nil, segmentVersionFrames, int(count), body, len(texts), nil); err == nil {
				readAll(v, int(count))
			}
		}
		if len(raw) > 0 {
			raw[0] = segmentVersionFrames
			if fv, err := parseFramed(1, raw); err == nil {
				readAll(raw, fv.count)
			} else if _, err := c.openFramed(1, raw); err == nil {
				t.Fatal("a value whose header fails opens")
			}
		}
	})
}

// TestFramedDamagedDictionary: a damaged dictionary fails the reads of the
// segments compressed with it, each with a *CorruptionError, while the
// segments sealed before it read; the log does not build another one (a
// new dictionary under the same id would decode the old frames into wrong
// bytes), and what it seals after the reopen reads back.
func TestFramedDamagedDictionary(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	recs := make([][]byte, 8000)
	for i := range recs {
		recs[i] = chatRecord(r, 5+r.IntN(30))
	}
	fs := vfs.NewMem()
	opts := Options{DisableBackgroundSeal: true}
	l := framedLog(t, fs, opts, recs, nil)
	key := makeKey(prefixDict, 1)
	v, closer, err := l.db.Get(key)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(v)
	closer.Close()
	bad[len(bad)/2] ^= 0x5a
	if err := l.db.Set(key, bad, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	usesDict := map[uint64]bool{}
	for _, m := range l.segs {
		v, closer, err := l.db.Get(makeKey(prefixSegment, m.first))
		if err != nil {
			t.Fatal(err)
		}
		f, err := parseFramed(m.first, v)
		if err != nil {
			t.Fatal(err)
		}
		closer.Close()
		for id := m.first; id < m.end(); id++ {
			usesDict[id] = f.dict == 1
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openMem(t, fs, opts)
	defer l.Close()
	without := 0
	for i, want := range recs {
		id := uint64(i + 1)
		got, err := l.Get(id, nil)
		if usesDict[id] {
			var ce *CorruptionError
			if !errors.As(err, &ce) {
				t.Fatalf("id %d (dictionary damaged): %v", id, err)
			}
			continue
		}
		without++
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("id %d (no dictionary): %v", id, err)
		}
	}
	if without == 0 || without == len(recs) {
		t.Fatalf("%d of %d records in segments without the dictionary", without, len(recs))
	}
	more := make([][]byte, 6000)
	for i := range more {
		more[i] = chatRecord(r, 5+r.IntN(30))
	}
	first, err := l.AppendBatch(ctx, more)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Seal(); err != nil {
		t.Fatal(err)
	}
	got, closer, err := l.db.Get(key)
	if err != nil || !bytes.Equal(got, bad) {
		t.Fatalf("the damaged dictionary was replaced (%v)", err)
	}
	closer.Close()
	for i, want := range more {
		if got := mustGet(t, l, first+uint64(i)); !bytes.Equal(got, want) {
			t.Fatalf("record %d sealed after the reopen", first+uint64(i))
		}
	}
}

// TestFramedFrameSizes: a segment value whose texts were cut into 4 KiB
// frames (the sealer's before sealFrameBytes) and one cut into
// sealFrameBytes frames hold the same records, and the reader serves
// every record of both, alone and all at once, byte for byte.
func TestFramedFrameSizes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var payloads [][]byte
	for size := 0; size < 40<<10; {
		p := chatRecord(r, 1+r.IntN(120))
		payloads = append(payloads, p)
		size += len(p)
	}
	c, err := newCompressor(CompressionZstd, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	c.names = newNameTable()
	e := colEncoder{names: c.names}
	body, ok := e.encode(nil, payloads)
	if !ok {
		t.Fatal("not records")
	}
	c.names.add(e.pending)
	n := len(payloads)
	for _, fb := range []int{frameBytes, sealFrameBytes, 1000} {
		v, err := c.appendFramedSized(nil, segmentVersionNames, n, body, len(e.cols[colTexts]), fb, nil)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parseFramed(1, v)
		if err != nil {
			t.Fatalf("frames of %d bytes: %v", fb, err)
		}
		if want := (len(e.cols[colTexts]) + fb - 1) / fb; len(f.frames) != want {
			t.Fatalf("frames of %d bytes: %d frames, want %d", fb, len(f.frames), want)
		}
		all := make([]uint64, n)
		for i := range all {
			all[i] = uint64(1 + i)
		}
		for _, ids := range append([][]uint64{all}, all[:1], all[n/2:n/2+1], all[n-1:]) {
			got := 0
			err := c.readFramed(1, v, uint32(n), ids, func(id uint64, p []byte, dead bool, err error) error {
				if err != nil || dead {
					return fmt.Errorf("record %d: dead %v, %v", id, dead, err)
				}
				if !bytes.Equal(p, payloads[id-1]) {
					return fmt.Errorf("record %d differs", id)
				}
				got++
				return nil
			})
			if err != nil || got != len(ids) {
				t.Fatalf("frames of %d bytes: %d of %d records read: %v", fb, got, len(ids), err)
			}
		}
		d, err := c.openFramed(1, v)
		if err != nil {
			t.Fatalf("frames of %d bytes, whole: %v", fb, err)
		}
		for i, p := range payloads {
			if q, ok := d.get(uint64(1 + i)); !ok || !bytes.Equal(q, p) {
				t.Fatalf("frames of %d bytes, whole: record %d differs", fb, 1+i)
			}
		}
	}
}
