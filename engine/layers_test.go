package engine

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/lazymem/lazymem/codec"
	"github.com/lazymem/lazymem/index"
	"github.com/lazymem/lazymem/segment"
)

// layers holds a real log and a real index on an in-memory filesystem, so a
// record can be offered to each layer as the engine would hand it down.
type layers struct {
	log *segment.Log
	idx *index.Index
	id  uint64
}

func openLayers(t testing.TB) *layers {
	fs := vfs.NewMem()
	l, err := segment.Open("log", segment.Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	x, err := index.Open("index", index.Options{FS: fs}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close(); l.Close() })
	return &layers{log: l, idx: x, id: 1}
}

// accept offers r, converted as the engine converts it, to the log (codec
// validation, encoding, a decode of what was stored) and to the index. It
// returns the first layer's refusal.
func (ls *layers) accept(r *Record) error {
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	d := index.Doc{ID: ls.id, Time: t.UnixNano(), Agent: r.Agent, Session: r.Session, Role: r.Role, Text: r.Text, Meta: indexFields(r.Meta)}
	var scratch []codec.Field
	c := docRecord(&d, &scratch)
	if err := c.Validate(); err != nil {
		return err
	}
	// A time the engine accepts must read back as the same instant.
	if !r.Time.IsZero() && !time.Unix(0, c.Time).Equal(r.Time) {
		return errors.New("time does not round-trip through the log's int64 nanoseconds")
	}
	if err := ls.idx.Add([]*index.Doc{&d}); err != nil {
		return err
	}
	id, err := ls.log.Append(context.Background(), codec.AppendRecord(nil, &c))
	if err != nil {
		return err
	}
	b, err := ls.log.Get(id, nil)
	if err != nil {
		return err
	}
	var got codec.Record
	if _, err := codec.DecodeRecord(b, &got); err != nil {
		return err
	}
	ls.id++
	return nil
}

var testOpts = func() Options {
	var o Options
	o.EnsureDefaults()
	return o
}()

// TestLayersAcceptWhatEngineAccepts is the one-validation property: every
// record the engine's check accepts, the log and the index accept too, and
// the records a lower layer refuses (a NUL metadata key, a time outside the
// log's range) the engine refuses first, naming the field.
func TestLayersAcceptWhatEngineAccepts(t *testing.T) {
	ls := openLayers(t)
	cases := []struct {
		name  string
		r     Record
		field string // "" when the engine must accept
	}{
		{"plain", Record{Agent: "a", Text: "hello"}, ""},
		{"meta", Record{Agent: "a", Text: "x", Meta: map[string][]string{"k": {"v"}, "z": {"1", "2"}}}, ""},
		{"nul key", Record{Agent: "a", Text: "x", Meta: map[string][]string{"\x00x": {"v"}}}, `record.meta["\x00x"]`},
		{"nul agent key", Record{Agent: "a", Text: "x", Meta: map[string][]string{"\x00agent": {"b"}}}, `record.meta["\x00agent"]`},
		{"nul inside key", Record{Agent: "a", Text: "x", Meta: map[string][]string{"a\x00b": {"v"}}}, ""},
		{"nul in value", Record{Agent: "a", Text: "x", Meta: map[string][]string{"k": {"\x00v"}}}, ""},
		{"year 9999", Record{Agent: "a", Text: "x", Time: time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)}, "record.time"},
		{"year 1", Record{Agent: "a", Text: "x", Time: time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)}, "record.time"},
		{"year 1600", Record{Agent: "a", Text: "x", Time: time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)}, "record.time"},
		{"min time", Record{Agent: "a", Text: "x", Time: MinTime}, ""},
		{"max time", Record{Agent: "a", Text: "x", Time: MaxTime}, ""},
		{"just past max", Record{Agent: "a", Text: "x", Time: MaxTime.Add(time.Nanosecond)}, "record.time"},
		{"year 2200", Record{Agent: "a", Text: "x", Time: time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := validateRecord(&c.r, &testOpts, "record")
			if c.field == "" {
				if err != nil {
					t.Fatalf("engine refused: %v", err)
				}
				if err := ls.accept(&c.r); err != nil {
					t.Fatalf("engine accepts but a layer refuses: %v", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != c.field {
				t.Fatalf("engine: got %v, want a FieldError naming %s", err, c.field)
			}
		})
	}
}

// FuzzRecordLayers is the differential form: whatever record the fuzzer
// builds, if the engine's check accepts it the log and the index accept it;
// if the engine refuses it the error names a field of the record.
func FuzzRecordLayers(f *testing.F) {
	f.Add("a", "s", "user", "hello world", "k", "v", int64(0))
	f.Add("a", "", "", "x", "\x00x", "v", int64(1))
	f.Add("a", "", "", "x", "", "v", int64(math.MaxInt64))
	f.Add("\xff", "", "", "x", "k", "", int64(-1))
	f.Add("a", "", "", "关于预算", "標籤", "值", int64(253402214400)) // 9999-12-31 in seconds
	ls := openLayers(f)
	f.Fuzz(func(t *testing.T, agent, session, role, text, key, val string, sec int64) {
		r := Record{Agent: agent, Session: session, Role: role, Text: text}
		if sec != 0 {
			r.Time = time.Unix(sec, 0).UTC()
		}
		if key != "" || val != "" {
			r.Meta = map[string][]string{key: {val}}
		}
		err := validateRecord(&r, &testOpts, "record")
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || !strings.HasPrefix(fe.Field, "record") {
				t.Fatalf("refusal does not name a field: %v", err)
			}
			return
		}
		if err := ls.accept(&r); err != nil {
			t.Fatalf("engine accepts %+v but a layer refuses: %v", r, err)
		}
	})
}

// TestOpenWithReservedKeyInLog: a store whose log already holds a record
// with a NUL metadata key (written before the shared check existed) opens,
// re-indexes, and serves both that record and the others.
func TestOpenWithReservedKeyInLog(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := db.Append(ctx, Record{Agent: "a", Text: "the zebra crossing"}); err != nil {
		t.Fatal(err)
	}
	_, err = db.Append(ctx, Record{Agent: "a", Text: "poison", Meta: map[string][]string{"\x00x": {"v"}}})
	if !errors.Is(err, ErrReserved) {
		t.Fatalf("append of a NUL key: %v, want ErrReserved", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// Plant the record as an older version would have logged it.
	l, err := segment.Open(dir+"/log", segment.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := codec.Record{Time: time.Now().UnixNano(), Agent: "a", Text: "the poisoned giraffe",
		Meta: []codec.Field{{Key: "\x00x", Values: []string{"v"}}}}
	pid, err := l.Append(ctx, codec.AppendRecord(nil, &c))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, rebuild := range []bool{false, true} {
		if rebuild {
			if err := vfs.Default.RemoveAll(dir + "/index"); err != nil {
				t.Fatal(err)
			}
		}
		db, err = Open(dir, Options{})
		if err != nil {
			t.Fatalf("open (rebuild %v): %v", rebuild, err)
		}
		got, err := db.Get(ctx, pid)
		if err != nil || got.Text != c.Text {
			t.Fatalf("get planted record: %+v %v", got, err)
		}
		for _, word := range []string{"zebra", "giraffe"} {
			res, err := db.Recall(ctx, Query{Agent: "a", Text: word, Mode: ModeSparse})
			if err != nil || len(res.Memories) != 1 {
				t.Fatalf("recall %q (rebuild %v): %+v %v", word, rebuild, res, err)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestQueryTimesInRange: a query's since or until outside the storable
// range is refused naming the field, never wrapped around.
func TestQueryTimesInRange(t *testing.T) {
	db, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	far := time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)
	early := time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)
	for _, c := range []struct {
		q     Query
		field string
	}{
		{Query{Agent: "a", Text: "x", Since: far}, "query.since"},
		{Query{Agent: "a", Text: "x", Until: far}, "query.until"},
		{Query{Agent: "a", Text: "x", Since: early}, "query.since"},
	} {
		_, err := db.Recall(context.Background(), c.q)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !errors.Is(err, ErrRange) {
			t.Errorf("%+v: got %v, want ErrRange naming %s", c.q, err, c.field)
		}
	}
}
