package segment

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/lazymem/lazymem/codec"
)

// timeSeries are the shapes of times the packed column meets: a clock in
// nanoseconds with jitter (Zipf), whole seconds and milliseconds, bursts
// with long gaps, equal and falling times, and the extremes of int64.
func timeSeries(r *rand.Rand, n int) map[string][]int64 {
	out := map[string][]int64{}
	gen := func(name string, next func(i int, prev int64) int64) {
		ts := make([]int64, n)
		prev := int64(1_767_225_600_000_000_000)
		for i := range ts {
			prev = next(i, prev)
			ts[i] = prev
		}
		out[name] = ts
	}
	const step = 38_900_000_000
	base := int64(1_767_225_600_000_000_000)
	gen("jitter-ns", func(i int, _ int64) int64 { return base + int64(i)*step + r.Int64N(step) })
	gen("seconds", func(_ int, p int64) int64 { return p + r.Int64N(90)*1e9 })
	gen("millis", func(_ int, p int64) int64 { return p + r.Int64N(5000)*1e6 })
	gen("bursts", func(i int, p int64) int64 {
		if i%20 == 0 {
			return p + r.Int64N(3600)*1e9
		}
		return p + r.Int64N(5e9)
	})
	gen("equal", func(_ int, p int64) int64 { return p })
	gen("falling", func(_ int, p int64) int64 { return p - r.Int64N(1e6) })
	gen("extremes", func(i int, _ int64) int64 {
		return []int64{math.MinInt64, math.MaxInt64, 0, -1, 1, math.MinInt64 + 1}[i%6]
	})
	gen("random", func(int, int64) int64 { return int64(r.Uint64()) })
	return out
}

// TestPackedColumns: every series of times and of text lengths reads back
// exactly, for every count from 0; the packed mode is taken where it is
// shorter (nanosecond jitter, whole seconds) and never longer than the
// varints.
func TestPackedColumns(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	for _, n := range []int{0, 1, 2, 3, 7, 8, 9, 150, 1000} {
		for name, ts := range timeSeries(r, n) {
			col := appendTimesColumn(nil, ts)
			got, err := decodeTimesColumn(col, n, nil)
			if err != nil || !slices.Equal(got, ts) {
				t.Fatalf("%s, %d times: %v, equal %v", name, n, err, slices.Equal(got, ts))
			}
			var varints []byte
			prev := int64(0)
			for _, x := range ts {
				varints = binaryAppendVarint(varints, x-prev)
				prev = x
			}
			if n > 0 && len(col) > len(varints)+1 {
				t.Fatalf("%s, %d times: %d bytes, varints %d", name, n, len(col), len(varints))
			}
			if n >= 150 && (name == "jitter-ns" || name == "seconds") && col[0] != packBits {
				t.Fatalf("%s, %d times: mode %d, want the packed mode", name, n, col[0])
			}
			if n >= 150 && name == "jitter-ns" && len(col) > n*48/10 {
				t.Fatalf("jitter-ns: %.2f bytes a time", float64(len(col))/float64(n))
			}
		}
		for name, ls := range map[string][]uint64{
			"chat":    randLens(r, n, 40, 400),
			"one":     randLens(r, n, 7, 8),
			"wide":    randLens(r, n, 0, 1<<40),
			"extreme": randLens(r, n, math.MaxUint64-3, math.MaxUint64),
		} {
			col := appendLensColumn(nil, ls)
			got, err := decodeLensColumn(col, n, nil)
			if err != nil || !slices.Equal(got, ls) {
				t.Fatalf("lengths %s, %d: %v", name, n, err)
			}
			if n >= 150 && name == "chat" && (col[0] != packBits || len(col) > n*9/8+4) {
				t.Fatalf("lengths %s: mode %d, %d bytes for %d", name, col[0], len(col), n)
			}
		}
	}
}

func errorsIsFormat(err error) bool { return errors.Is(err, ErrFormat) }

func randLens(r *rand.Rand, n int, lo, hi uint64) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = lo + r.Uint64N(hi-lo)
	}
	return out
}

func binaryAppendVarint(dst []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	for u >= 0x80 {
		dst = append(dst, byte(u)|0x80)
		u >>= 7
	}
	return append(dst, byte(u))
}

// TestPackedColumnsCorrupt: damaged columns fail with ErrFormat, never
// panic: a bad mode, a width over 64, bytes missing or left over, padding
// bits set, a zero divisor.
func TestPackedColumnsCorrupt(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 64))
	ts := timeSeries(r, 40)["jitter-ns"]
	good := appendTimesColumn(nil, ts)
	if good[0] != packBits {
		t.Fatalf("mode %d", good[0])
	}
	for name, b := range map[string][]byte{
		"mode":      append([]byte{7}, good[1:]...),
		"short":     good[:len(good)-1],
		"long":      append(bytes.Clone(good), 0),
		"empty":     nil,
		"width":     {packBits, 0, 2, 0, 65},
		"divisor":   {packBits, 0, 0, 0, 0},
		"padding":   {packBits, 0, 2, 0, 1, 0xff},
		"truncated": {packBits, 0x80},
	} {
		if _, err := decodeTimesColumn(b, 40, nil); err == nil || !errorsIsFormat(err) {
			t.Errorf("times %s: %v", name, err)
		}
	}
	if _, err := decodeTimesColumn(good, 0, nil); err == nil {
		t.Error("times for no record: no error")
	}
	for name, b := range map[string][]byte{
		"mode":    {9, 1},
		"width":   {packBits, 0, 70},
		"short":   {packBits, 0, 8},
		"padding": {packBits, 0, 1, 0xfe},
		"varints": {packVarint, 0x80},
	} {
		if _, err := decodeLensColumn(b, 2, nil); err == nil || !errorsIsFormat(err) {
			t.Errorf("lengths %s: %v", name, err)
		}
	}
}

// FuzzPacked fuzzes the two column decoders: any bytes decode or fail
// without a panic, and what decodes encodes again to columns that decode
// to the same values.
func FuzzPacked(f *testing.F) {
	r := rand.New(rand.NewPCG(65, 66))
	for _, n := range []int{1, 2, 9, 40} {
		for _, ts := range timeSeries(r, n) {
			f.Add(uint16(n), appendTimesColumn(nil, ts), appendLensColumn(nil, randLens(r, n, 10, 300)))
		}
	}
	f.Fuzz(func(t *testing.T, n uint16, times, lens []byte) {
		if ts, err := decodeTimesColumn(times, int(n), nil); err == nil {
			if len(ts) != int(n) {
				t.Fatalf("%d times for %d records", len(ts), n)
			}
			again, err := decodeTimesColumn(appendTimesColumn(nil, ts), int(n), nil)
			if err != nil || !slices.Equal(again, ts) {
				t.Fatalf("times re-encoded: %v", err)
			}
		}
		if ls, err := decodeLensColumn(lens, int(n), nil); err == nil {
			if len(ls) != int(n) {
				t.Fatalf("%d lengths for %d records", len(ls), n)
			}
			again, err := decodeLensColumn(appendLensColumn(nil, ls), int(n), nil)
			if err != nil || !slices.Equal(again, ls) {
				t.Fatalf("lengths re-encoded: %v", err)
			}
		}
	})
}

// FuzzPackedFramed fuzzes the version-6 reader: segments of records of
// every time shape, some deleted, read back as the records whatever way
// they are read (whole, record by record, every k-th record), and as
// their version-5 value does; any value with version 6's first byte reads
// the same record by record as whole, or fails, without a panic.
func FuzzPackedFramed(f *testing.F) {
	c, err := newCompressor(CompressionZstd, 3)
	if err != nil {
		f.Fatal(err)
	}
	defer c.close()
	c.names = newNameTable()
	c.words = newWordTable()
	r := rand.New(rand.NewPCG(67, 68))
	for range 100 {
		var rec codec.Record
		if _, err := codec.DecodeRecord(chatRecord(r, 20), &rec); err != nil {
			f.Fatal(err)
		}
		c.words.grow([]byte(rec.Text))
	}
	c.words.publish()
	c.words.committed()
	build := func(tb testing.TB, seed uint64, n int, shape byte, dels uint64) ([][]byte, []byte, []byte) {
		r := rand.New(rand.NewPCG(seed, 69))
		var names []string
		for name := range timeSeries(r, 0) {
			names = append(names, name)
		}
		slices.Sort(names)
		ts := timeSeries(r, n)[names[int(shape)%len(names)]]
		payloads := make([][]byte, n)
		for i := range payloads {
			if n > 1 && dels&(1<<(i%64)) != 0 {
				continue
			}
			var rec codec.Record
			if _, err := codec.DecodeRecord(chatRecord(r, r.IntN(300)), &rec); err != nil {
				tb.Fatal(err)
			}
			rec.Time = ts[i]
			payloads[i] = codec.AppendRecord(nil, &rec)
		}
		e := colEncoder{names: c.names}
		body, ok := e.encode(nil, payloads)
		if !ok {
			tb.Fatal("records do not encode as columns")
		}
		c.names.add(e.pending)
		texts := len(e.cols[colTexts])
		v5, err := c.appendFramed(nil, segmentVersionWords, n, body, texts, &wordCoder{ids: c.words.ids})
		if err != nil {
			tb.Fatal(err)
		}
		v6, err := c.appendFramed(nil, segmentVersionPacked, n, e.appendBody(nil, true), texts, &wordCoder{ids: c.words.ids})
		if err != nil {
			tb.Fatal(err)
		}
		return payloads, v5, v6
	}
	for i, n := range []int{1, 2, 30, 150} {
		_, _, v6 := build(f, uint64(i), n, byte(i), 0x0102)
		f.Add(uint64(i), uint16(n), byte(i), uint64(0x0102), v6)
	}
	f.Fuzz(func(t *testing.T, seed uint64, count uint16, shape byte, dels uint64, raw []byte) {
		{
			n := int(count%400) + 1
			payloads, v5, v6 := build(t, seed, n, shape, dels)
			if len(v6) > len(v5)+8 {
				t.Fatalf("version 6 %d bytes, version 5 %d", len(v6), len(v5))
			}
			for _, v := range [][]byte{v5, v6} {
				d, err := c.openFramed(1, v)
				if err != nil {
					t.Fatalf("version %d: %v", v[0], err)
				}
				for i, p := range payloads {
					q, ok := d.get(1 + uint64(i))
					if ok != (p != nil) || !bytes.Equal(p, q) {
						t.Fatalf("version %d, record %d: %x, want %x", v[0], i+1, q, p)
					}
				}
				if err := readConsistent(c, v, n, d); err != nil {
					t.Fatal(err)
				}
			}
		}
		if len(raw) > 0 {
			raw[0] = segmentVersionPacked
			if fv, err := parseFramed(1, raw); err == nil {
				if d, err := c.openFramed(1, raw); err == nil {
					if err := readConsistent(c, raw, fv.count, d); err != nil {
						t.Fatal(err)
					}
				}
			} else if _, err := c.openFramed(1, raw); err == nil {
				t.Fatal("a value whose header fails opens")
			}
		}
	})
}

// readConsistent reads the n records of framed value v record by record
// and every k-th, and compares them with d, the whole value's records.
func readConsistent(c *compressor, v []byte, n int, d *decoded) error {
	for step := 1; step <= 5; step++ {
		var ids []uint64
		for i := step / 2; i < n; i += step {
			ids = append(ids, 1+uint64(i))
		}
		var bad error
		err := c.readFramed(1, v, uint32(n), ids, func(id uint64, p []byte, dead bool, ferr error) error {
			q, ok := d.get(id)
			if bad == nil && (ferr != nil || ok == dead || !bytes.Equal(p, q)) {
				bad = fmt.Errorf("record %d of every %d: %x (deleted %v, %v); whole: %x", id, step, p, dead, ferr, q)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("the whole segment opens, every %d record fails: %w", step, err)
		}
		if bad != nil {
			return bad
		}
	}
	return nil
}

// TestPackedLog: past its dictionary's sample the log seals version-6
// segments (version 5 with packing off); every record, some deleted,
// reads back through Get, GetMany and Scan, before and after a reopen and
// after a Compact that rewrites the segments holding deletions; the
// version-6 log's segments are smaller than version 5's.
func TestPackedLog(t *testing.T) {
	s := newWordsStore()
	r := rand.New(rand.NewPCG(73, 74))
	// Nanosecond jitter on a clock, as the Zipf corpus's times.
	for i, p := range s.recs {
		var rec codec.Record
		if _, err := codec.DecodeRecord(p, &rec); err != nil {
			t.Fatal(err)
		}
		rec.Time = 1_767_225_600_000_000_000 + int64(i)*38_900_000_000 + r.Int64N(38_900_000_000)
		s.recs[i] = codec.AppendRecord(nil, &rec)
	}
	var del []uint64
	for id := uint64(5000); id < 5400; id += 7 {
		del = append(del, id)
	}
	gone := map[uint64][]string{}
	for _, id := range del {
		gone[id] = []string{}
	}
	sizes := map[byte]int64{}
	for _, want := range []byte{segmentVersionPacked, segmentVersionWords} {
		fs := vfs.NewMem()
		opts := Options{DisableBackgroundSeal: true}
		l := openMem(t, fs, opts)
		l.noPacking = want == segmentVersionWords
		for lo := 0; lo < len(s.recs); lo += 100 {
			if _, err := l.AppendBatch(ctx, s.recs[lo:min(len(s.recs), lo+100)]); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Seal(); err != nil {
			t.Fatal(err)
		}
		vers := segVersions(t, l)
		if vers[want] < len(l.segs)/2 || vers[segmentVersionPacked+segmentVersionWords-want] != 0 {
			t.Fatalf("want version %d: versions %v of %d segments", want, vers, len(l.segs))
		}
		for _, m := range l.segs {
			sizes[want] += int64(m.stored)
		}
		if err := checkRecords(l, s.recs, nil); err != nil {
			t.Fatalf("version %d: %v", want, err)
		}
		if err := l.Delete(ctx, del); err != nil {
			t.Fatal(err)
		}
		if err := l.Compact(ctx); err != nil {
			t.Fatal(err)
		}
		if err := checkRecords(l, s.recs, gone); err != nil {
			t.Fatalf("version %d after Compact: %v", want, err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l = openMem(t, fs, opts)
		if err := checkRecords(l, s.recs, gone); err != nil {
			t.Fatalf("version %d reopened: %v", want, err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if sizes[segmentVersionPacked] >= sizes[segmentVersionWords] {
		t.Fatalf("segments: version 6 %d bytes, version 5 %d", sizes[segmentVersionPacked], sizes[segmentVersionWords])
	}
	t.Logf("segments: version 6 %d bytes, version 5 %d", sizes[segmentVersionPacked], sizes[segmentVersionWords])
}
