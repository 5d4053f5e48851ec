package index

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestCorruptSegment: a damaged segment file is a CorruptionError without a
// Source; with one, Open drops it (and the segments after it) and
// re-indexes their ids from the log.
func TestCorruptSegment(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	docs := genCorpus(rng, 600, 1, 50)
	fs := vfs.NewMem()
	opts := Options{Analyzer: SimpleAnalyzer{}, FS: fs, FlushDocs: 200, DisableBackgroundMerge: true}
	x, err := Open("idx", opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 600; i += 100 {
		if err := x.Add(docs[i : i+100]); err != nil {
			t.Fatal(err)
		}
	}
	if len(x.segs) != 3 {
		t.Fatalf("%d segments, want 3", len(x.segs))
	}
	seg1, seg2 := x.segs[1], x.segs[2]
	x.Close()
	// flip one byte in the middle of the second segment
	name := "idx/" + segName(2)
	b, err := readFile(fs, name)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := writeFileSync(fs, name, b); err != nil {
		t.Fatal(err)
	}
	_, err = Open("idx", opts, nil)
	var ce *CorruptionError
	if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("want CorruptionError, got %v", err)
	}
	src := &memSource{docs: docs}
	y, err := Open("idx", opts, src)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	m := y.Metrics()
	if m.Dropped != 2 || m.Rebuilt != 400 {
		t.Fatalf("metrics %+v: want 2 segments dropped, 400 docs rebuilt", m)
	}
	// Every dropped segment is reported: which, its ids, why.
	if len(m.Repairs) != 2 {
		t.Fatalf("repairs %v, want the corrupt segment and the one after it", m.Repairs)
	}
	r0, r1 := m.Repairs[0], m.Repairs[1]
	if r0.File != segName(2) || r0.Lo != uint64(seg1.lo) || r0.Hi != uint64(seg1.hi) || r0.Reason != RepairCorrupt ||
		!errors.As(r0.Err, &ce) || ce.File != segName(2) {
		t.Fatalf("first repair: %v; want %s ids %d-%d corrupt with its CorruptionError", r0, segName(2), seg1.lo, seg1.hi)
	}
	if r1.File != segName(3) || r1.Lo != uint64(seg2.lo) || r1.Hi != uint64(seg2.hi) || r1.Reason != RepairAfterCorrupt || r1.Err != nil {
		t.Fatalf("second repair: %v; want %s ids %d-%d after a corrupt segment", r1, segName(3), seg2.lo, seg2.hi)
	}
	if s := r0.String(); !strings.Contains(s, segName(2)) || !strings.Contains(s, "corrupt") || !strings.Contains(s, fmt.Sprintf("%d-%d", seg1.lo, seg1.hi)) {
		t.Fatalf("repair reads %q", s)
	}
	if err := sameIndex(y, src, nil, []string{"w1 w2", "w3 w9"}, []*Filter{{Agents: []string{"a2"}}}); err != nil {
		t.Fatal(err)
	}
}

func TestMergePolicy(t *testing.T) {
	x := &Index{opts: Options{MergeFactor: 3, MergeMinDocs: 100}}
	mk := func(sizes ...uint32) {
		x.segs = x.segs[:0]
		for _, n := range sizes {
			x.segs = append(x.segs, &segment{nDocs: n})
		}
	}
	for _, tc := range []struct {
		sizes []uint32
		want  int // index of the first merged segment, -1 none
	}{
		{[]uint32{50, 60}, -1},
		{[]uint32{50, 60, 70}, 0},
		{[]uint32{5000, 50, 60, 70}, 1},
		{[]uint32{5000, 300, 310, 50, 60}, -1},
		{[]uint32{400, 350, 320, 50}, 0},
		{[]uint32{10000, 900, 80, 70, 60}, 2},
	} {
		mk(tc.sizes...)
		got := x.pickMerge(false)
		idx := -1
		if got != nil {
			idx = indexOf(x.segs, got[0])
			if len(got) != 3 {
				t.Fatalf("%v: merged %d segments", tc.sizes, len(got))
			}
		}
		if idx != tc.want {
			t.Errorf("sizes %v: merge at %d, want %d", tc.sizes, idx, tc.want)
		}
	}
}

func indexOf(segs []*segment, s *segment) int {
	for i := range segs {
		if segs[i] == s {
			return i
		}
	}
	return -1
}

// failFS fails Create while fail is set.
type failFS struct {
	vfs.FS
	fail bool
}

var errInjected = errors.New("injected")

func (f *failFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	if f.fail {
		return nil, errInjected
	}
	return f.FS.Create(name, c)
}

// TestFlushErrorRetried: a failed flush keeps its documents searchable and
// the next Flush persists them.
func TestFlushErrorRetried(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	docs := genCorpus(rng, 400, 1, 40)
	ffs := &failFS{FS: vfs.NewMem()}
	opts := Options{Analyzer: SimpleAnalyzer{}, FS: ffs, FlushDocs: -1, DisableBackgroundMerge: true}
	x, err := Open("idx", opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Add(docs[:200]); err != nil {
		t.Fatal(err)
	}
	ffs.fail = true
	if err := x.Flush(); !errors.Is(err, errInjected) {
		t.Fatalf("flush error %v", err)
	}
	if err := x.Add(docs[200:]); err != nil {
		t.Fatal(err)
	}
	src := &memSource{docs: docs}
	if err := sameIndex(x, src, nil, []string{"w1 w2", "w3"}, []*Filter{{Agents: []string{"a0"}}}); err != nil {
		t.Fatal(err)
	}
	ffs.fail = false
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	if m := x.Metrics(); m.Segments != 2 || m.MemDocs != 0 {
		t.Fatalf("metrics %+v", m)
	}
	x.Close()
	y, err := Open("idx", opts, src)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	if m := y.Metrics(); m.Rebuilt != 0 {
		t.Fatalf("rebuilt %d docs: flushed segments not persisted", m.Rebuilt)
	}
	if err := sameIndex(y, src, nil, []string{"w1 w2", "w3"}, []*Filter{{Agents: []string{"a0"}}}); err != nil {
		t.Fatal(err)
	}
}

// TestAnalyzerChanged: segments built with other analysis rules are
// rebuilt from the log, or refused without one.
func TestAnalyzerChanged(t *testing.T) {
	fs := vfs.NewMem()
	docs := []*Doc{{ID: 1, Text: "the connections were pooled"}, {ID: 2, Text: "lunch"}}
	x, err := Open("idx", Options{Analyzer: SimpleAnalyzer{}, FS: fs}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Add(docs); err != nil {
		t.Fatal(err)
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	x.Close()
	if _, err := Open("idx", Options{FS: fs}, nil); !errors.Is(err, ErrAnalyzerChanged) {
		t.Fatalf("want ErrAnalyzerChanged, got %v", err)
	}
	y, err := Open("idx", Options{FS: fs}, &memSource{docs: docs})
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	if m := y.Metrics(); m.Dropped != 1 || m.Rebuilt != 2 || len(m.Repairs) != 1 || m.Repairs[0].Reason != RepairAnalyzerChanged {
		t.Fatalf("metrics %+v", m)
	}
	// stemmed by the project analyzer: "connection" matches "connections"
	if hits, _ := y.Search("connection pool", nil, 5, nil); len(hits) != 1 || hits[0].ID != 1 {
		t.Fatalf("hits %v", hits)
	}
}
