package segment

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/lazymem/lazymem/codec"
)

// randomRecord is an engine record with every field exercised: empty and
// long strings, repeated and new agents, sessions and metadata, times
// going back and forth.
func randomRecord(r *rand.Rand) []byte {
	pick := func(pre string, n int) string {
		if r.IntN(8) == 0 {
			return ""
		}
		return fmt.Sprintf("%s-%d", pre, r.IntN(n))
	}
	c := codec.Record{
		Time:    r.Int64N(1<<62) - 1<<61,
		Agent:   pick("agent", 5),
		Session: pick("session", 40),
		Role:    pick("role", 3),
		Text:    strings.Repeat("word ", r.IntN(60)) + pick("tail", 1000),
	}
	for k := range r.IntN(4) {
		f := codec.Field{Key: fmt.Sprintf("key%d", k)}
		for range r.IntN(4) {
			f.Values = append(f.Values, pick("v", 20))
		}
		c.Meta = append(c.Meta, f)
	}
	if r.IntN(30) == 0 {
		c.Text = strings.Repeat("ü", 200) // a text length of two uvarint bytes
	}
	return codec.AppendRecord(nil, &c)
}

func decodeColumns(t testing.TB, payloads [][]byte) *decoded {
	t.Helper()
	var e colEncoder
	body, ok := e.encode(nil, payloads)
	if !ok {
		t.Fatal("encode refused engine records")
	}
	d, err := parseColumns(100, len(payloads), body, nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestColumnsRoundTrip: a columnar body rebuilds every record byte for
// byte, deleted slots included, whatever the mix of fields.
func TestColumnsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 1 + r.IntN(600)
		payloads := make([][]byte, n)
		for i := range payloads {
			if r.IntN(10) > 0 || trial == 0 {
				payloads[i] = randomRecord(r)
			}
		}
		d := decodeColumns(t, payloads)
		for i, p := range payloads {
			got, ok := d.get(100 + uint64(i))
			if ok != (p != nil) || !bytes.Equal(got, p) {
				t.Fatalf("trial %d record %d: got %x (live %v), want %x", trial, i, got, ok, p)
			}
		}
	}
}

// TestColumnsRefuse: payloads the layout cannot rebuild exactly make the
// encoder refuse (the segment is then stored as rows).
func TestColumnsRefuse(t *testing.T) {
	good := codec.AppendRecord(nil, &codec.Record{Time: 1, Agent: "a", Text: "hello"})
	nonMinimal := append([]byte{1, 0x80 | byte(len(good)-2), 0}, good[2:]...) // body length in two bytes
	for name, p := range map[string][]byte{
		"empty":           {},
		"not a record":    []byte("record 7: free text"),
		"version 2":       append([]byte{2}, good[1:]...),
		"trailing byte":   append(append([]byte(nil), good...), 0),
		"short":           good[:len(good)-1],
		"non-minimal len": nonMinimal,
	} {
		var e colEncoder
		if body, ok := e.encode([]byte("x"), [][]byte{good, p}); ok || string(body) != "x" {
			t.Errorf("%s: encode accepted %x (body %x)", name, p, body)
		}
	}
}

// TestColumnsBytes pins the columnar layout (doc.go, docs/format/segment.md):
// two records of one agent and a deleted slot.
func TestColumnsBytes(t *testing.T) {
	a := codec.AppendRecord(nil, &codec.Record{Time: 1000, Agent: "ag", Session: "s1", Role: "user", Text: "hi there",
		Meta: []codec.Field{{Key: "k", Values: []string{"v"}}}})
	b := codec.AppendRecord(nil, &codec.Record{Time: 990, Agent: "ag", Session: "s2", Text: "ok"})
	var e colEncoder
	body, ok := e.encode(nil, [][]byte{a, nil, b})
	if !ok {
		t.Fatal("refused")
	}
	got := hex.EncodeToString(body)
	// The expectation column by column, then as pinned bytes.
	var exp []byte
	cols := [][]byte{
		{0x02}, // deleted: bit 1
		binary.AppendVarint(binary.AppendVarint(nil, 1000), -10),
		{0, 2, 'a', 'g', 1},              // agents: new "ag", entry 1
		{0, 2, 's', '1', 0, 2, 's', '2'}, // sessions: new "s1", new "s2"
		{0, 4, 'u', 's', 'e', 'r', 0, 0}, // roles: new "user", new ""
		{1, 0, 1, 'k', 1, 0, 1, 'v', 0},  // meta: 1 field, new "k", 1 value, new "v"; 0 fields
		{8, 2},                           // text lengths
	}
	for _, c := range cols {
		exp = binary.AppendUvarint(exp, uint64(len(c)))
	}
	for _, c := range cols {
		exp = append(exp, c...)
	}
	exp = append(exp, "hi thereok"...)
	if got != hex.EncodeToString(exp) {
		t.Fatalf("columnar body\n%s\nwant\n%x", got, exp)
	}
	const pinned = "0103050808090202d00f130002616701000273310002733200047573657200000100016b0100017600080268692074686572656f6b"
	if got != pinned {
		t.Fatalf("columnar body\n%s\npinned\n%s", got, pinned)
	}
}

// TestLogColumns: a log of engine records stores its segments as framed
// columns (or, when told, as unframed columns: the version before) and
// reads every record back, through deletions, a compaction and a
// reopen; a segment with one payload that is not a record is stored as
// rows, and a log opened with DisableColumns stores rows only.
func TestLogColumns(t *testing.T) {
	for _, version := range []byte{segmentVersionNames, segmentVersionFrames, segmentVersionColumns, segmentVersionRows} {
		disable := version == segmentVersionRows
		fs := vfs.NewMem()
		opts := Options{SegmentRecords: 64, DisableBackgroundSeal: true, DisableColumns: disable}
		l := openMem(t, fs, opts)
		if !disable {
			l.columnsVersion = version // a framed log, or one written as before frames
		}
		r := rand.New(rand.NewPCG(3, 4))
		var want [][]byte
		for range 10 {
			batch := make([][]byte, 50)
			for i := range batch {
				batch[i] = randomRecord(r)
			}
			if len(want) == 200 {
				batch[7] = []byte("not a record") // its segment is stored as rows
			}
			if _, err := l.AppendBatch(context.Background(), batch); err != nil {
				t.Fatal(err)
			}
			want = append(want, batch...)
		}
		if err := l.Seal(); err != nil {
			t.Fatal(err)
		}
		if err := l.Delete(context.Background(), []uint64{3, 70, 71, 300}); err != nil {
			t.Fatal(err)
		}
		for _, id := range []uint64{3, 70, 71, 300} {
			want[id-1] = nil
		}
		if err := l.Compact(context.Background()); err != nil {
			t.Fatal(err)
		}
		versions := map[byte]int{}
		for _, m := range l.segs {
			v, closer, err := l.db.Get(makeKey(prefixSegment, m.first))
			if err != nil {
				t.Fatal(err)
			}
			versions[v[0]]++
			closer.Close()
		}
		switch {
		case disable && versions[segmentVersionRows] != len(l.segs):
			t.Fatalf("DisableColumns: segment versions %v", versions)
		case !disable && (versions[segmentVersionRows] != 1 || versions[version] != len(l.segs)-1):
			t.Fatalf("segment versions %v: want %d, and rows for the one segment with a non-record", versions, version)
		}
		check := func(l *Log) {
			t.Helper()
			for i, p := range want {
				got, err := l.Get(uint64(i+1), nil)
				if p == nil {
					if err == nil {
						t.Fatalf("record %d: deleted, read %x", i+1, got)
					}
					continue
				}
				if err != nil || !bytes.Equal(got, p) {
					t.Fatalf("record %d: %x, %v; want %x", i+1, got, err, p)
				}
			}
			if err := l.Verify(context.Background()); err != nil {
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
}

// FuzzParseColumns: any body either fails with an error or rebuilds
// records that, encoded again, rebuild the same records.
func FuzzParseColumns(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 3, 20} {
		payloads := make([][]byte, n)
		for i := range payloads {
			if i != 1 {
				payloads[i] = randomRecord(r)
			}
		}
		var e colEncoder
		body, _ := e.encode(nil, payloads)
		f.Add(uint16(n), body)
	}
	f.Fuzz(func(t *testing.T, count uint16, body []byte) {
		if count == 0 {
			return
		}
		d, err := parseColumns(1, int(count), body, nil)
		if err != nil {
			return
		}
		payloads := make([][]byte, count)
		for i := range payloads {
			if p, ok := d.get(1 + uint64(i)); ok {
				payloads[i] = p
			}
		}
		var e colEncoder
		again, ok := e.encode(nil, payloads)
		if !ok {
			return // e.g. a rebuilt length that is not a record's
		}
		d2, err := parseColumns(1, int(count), again, nil)
		if err != nil {
			t.Fatalf("re-encoded body fails: %v", err)
		}
		for i, p := range payloads {
			if q, ok := d2.get(1 + uint64(i)); ok != (p != nil) || !bytes.Equal(p, q) {
				t.Fatalf("record %d: %x then %x", i, p, q)
			}
		}
	})
}

// BenchmarkParseBody times splitting a decompressed segment of 150
// records into its payloads, for each layout (the decompression excluded).
func BenchmarkParseBody(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	payloads := make([][]byte, 150)
	for i := range payloads {
		payloads[i] = randomRecord(r)
	}
	for _, layout := range []string{"rows", "columns"} {
		var body []byte
		if layout == "rows" {
			body = encodeBody(nil, payloads)
		} else {
			var e colEncoder
			body, _ = e.encode(nil, payloads)
		}
		b.Run("layout="+layout, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				var err error
				if layout == "rows" {
					_, err = parseBody(1, len(payloads), body)
				} else {
					_, err = parseColumns(1, len(payloads), body, nil)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
