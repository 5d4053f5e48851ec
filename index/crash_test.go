package index

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// hookFS calls hook after every mutating filesystem operation, so a test
// can take a crash image between any two steps of a flush or a merge.
type hookFS struct {
	vfs.FS
	hook func(op string)
}

type hookFile struct {
	vfs.File
	h  *hookFS
	op string
}

func (f *hookFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.h.hook("write " + f.op)
	return n, err
}

func (f *hookFile) Sync() error {
	err := f.File.Sync()
	f.h.hook("sync " + f.op)
	return err
}

func (f *hookFile) Close() error {
	err := f.File.Close()
	f.h.hook("close " + f.op)
	return err
}

func (h *hookFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := h.FS.Create(name, c)
	h.hook("create " + name)
	if err != nil {
		return nil, err
	}
	return &hookFile{File: f, h: h, op: name}, nil
}

func (h *hookFS) OpenDir(name string) (vfs.File, error) {
	f, err := h.FS.OpenDir(name)
	if err != nil {
		return nil, err
	}
	return &hookFile{File: f, h: h, op: "dir " + name}, nil
}

func (h *hookFS) Rename(a, b string) error {
	err := h.FS.Rename(a, b)
	h.hook("rename " + a)
	return err
}

func (h *hookFS) Remove(name string) error {
	err := h.FS.Remove(name)
	h.hook("remove " + name)
	return err
}

// crashPoint is a crash image and what the log held at that moment.
type crashPoint struct {
	op       string
	fs       *vfs.MemFS
	logLen   int             // docs the log holds (Add calls issued)
	acked    map[uint64]bool // deletions acknowledged before the crash
	inflight []uint64        // deletion in progress, if any
}

// TestCrashConsistency is acceptance point 3: a crash image is taken after
// every filesystem operation of a run of adds, flushes, deletions and
// merges (with unsynced data kept, dropped, or partly kept); each image is
// reopened with a Source holding the log's records, and must answer every
// query and filter exactly like an index rebuilt from that log.
func TestCrashConsistency(t *testing.T) {
	seeds := 3
	if testing.Short() || raceEnabled {
		seeds = 1
	}
	for seed := 1; seed <= seeds; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { crashRun(t, uint64(seed)) })
	}
}

func crashRun(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 99))
	vocab := 60
	docs := genCorpus(rng, 700, 1, vocab)
	mem := vfs.NewCrashableMem()
	var points []crashPoint
	logLen := 0
	acked := map[uint64]bool{}
	var inflight []uint64
	cloneRNG := rand.New(rand.NewPCG(seed, 5))
	h := &hookFS{FS: mem}
	h.hook = func(op string) {
		a := make(map[uint64]bool, len(acked))
		for k := range acked {
			a[k] = true
		}
		pct := []int{0, 100, 50}[len(points)%3]
		c := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: pct, RNG: rand.New(rand.NewPCG(cloneRNG.Uint64(), 1))})
		points = append(points, crashPoint{op: op, fs: c, logLen: logLen, acked: a, inflight: inflight})
	}
	opts := Options{Analyzer: SimpleAnalyzer{}, FS: h, FlushDocs: -1, DisableBackgroundMerge: true, MergeFactor: 3, MergeMinDocs: 10}
	x, err := Open("idx", opts, &memSource{docs: docs[:0]})
	if err != nil {
		t.Fatal(err)
	}
	for logLen < len(docs) {
		n := min(1+rng.IntN(80), len(docs)-logLen)
		logLen += n
		if err := x.Add(docs[logLen-n : logLen]); err != nil {
			t.Fatal(err)
		}
		switch rng.IntN(4) {
		case 0, 1:
			if err := x.Flush(); err != nil {
				t.Fatal(err)
			}
		case 2:
			inflight = []uint64{docs[rng.IntN(logLen)].ID, docs[rng.IntN(logLen)].ID}
			if err := x.Delete(inflight); err != nil {
				t.Fatal(err)
			}
			for _, id := range inflight {
				acked[id] = true
			}
			inflight = nil
		case 3:
			if _, err := x.mergeOnce(rng.IntN(3) == 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := x.Merge(); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d crash points", len(points))
	if len(points) < 50 {
		t.Fatalf("only %d crash points", len(points))
	}
	queries := make([]string, 30)
	for i := range queries {
		queries[i] = randQuery(rng, vocab)
	}
	filters := make([]*Filter, 10)
	for i := range filters {
		filters[i] = randFilter(rng, docs)
	}
	ropts := opts
	rebuilt := 0
	for i, p := range points {
		ropts.FS = p.fs
		src := &memSource{docs: docs[:p.logLen]}
		got, err := Open("idx", ropts, src)
		if err != nil {
			t.Fatalf("point %d (%s): reopen: %v", i, p.op, err)
		}
		rebuilt += int(got.Metrics().Rebuilt)
		candidates := [][]uint64{keys(p.acked)}
		if p.inflight != nil {
			candidates = append(candidates, append(keys(p.acked), p.inflight...))
		}
		var lastErr error
		for _, del := range candidates {
			if lastErr = sameIndex(got, src, del, queries, filters); lastErr == nil {
				break
			}
		}
		if lastErr != nil {
			t.Fatalf("point %d (after %s, log %d docs): %v", i, p.op, p.logLen, lastErr)
		}
		if err := got.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("docs re-indexed from the log over all reopens: %d", rebuilt)
}

func keys(m map[uint64]bool) []uint64 {
	out := make([]uint64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// sameIndex compares x with a fresh in-memory rebuild from src minus del.
func sameIndex(x *Index, src *memSource, del []uint64, queries []string, filters []*Filter) error {
	ref, err := Open("", Options{Analyzer: SimpleAnalyzer{}, FlushDocs: -1, DisableBackgroundMerge: true}, src)
	if err != nil {
		return err
	}
	defer ref.Close()
	if err := ref.Delete(del); err != nil {
		return err
	}
	if a, b := x.Metrics().Docs, ref.Metrics().Docs; a != b {
		return fmt.Errorf("docs %d, rebuild %d", a, b)
	}
	all, _ := x.Filter(nil)
	rall, _ := ref.Filter(nil)
	if !all.Equals(rall) {
		return fmt.Errorf("live sets differ: %d vs %d", all.GetCardinality(), rall.GetCardinality())
	}
	for _, f := range filters {
		a, err := x.Filter(f)
		if err != nil {
			return err
		}
		b, _ := ref.Filter(f)
		if !a.Equals(b) {
			return fmt.Errorf("Filter(%+v): %d vs %d ids", f, a.GetCardinality(), b.GetCardinality())
		}
	}
	for qi, q := range queries {
		var fb *roaring.Bitmap
		if qi%2 == 1 {
			fb, _ = ref.Filter(filters[qi%len(filters)])
		}
		a, err := x.Search(q, fb, 10, nil)
		if err != nil {
			return err
		}
		b, _ := ref.Search(q, fb, 10, nil)
		if len(a) != len(b) {
			return fmt.Errorf("query %q: %d hits vs %d", q, len(a), len(b))
		}
		for i := range a {
			if a[i] != b[i] {
				return fmt.Errorf("query %q: hit %d %v vs %v", q, i, a[i], b[i])
			}
		}
	}
	return nil
}

// TestOpenDropsIDsBeyondLog: when the log lost a tail the index had
// already persisted, Open must not claim those ids.
func TestOpenDropsIDsBeyondLog(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	docs := genCorpus(rng, 500, 1, 50)
	fs := vfs.NewMem()
	opts := Options{Analyzer: SimpleAnalyzer{}, FS: fs, FlushDocs: 100, DisableBackgroundMerge: true}
	x, err := Open("idx", opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(docs); i += 50 {
		if err := x.Add(docs[i : i+50]); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	x.Close()
	for _, keep := range []int{499, 430, 250, 1, 0} {
		src := &memSource{docs: docs[:keep]}
		y, err := Open("idx", opts, src)
		if err != nil {
			t.Fatal(err)
		}
		if err := sameIndex(y, src, nil, []string{"w1 w2", "w3", "w10 w1"}, []*Filter{{Agents: []string{"a1"}}}); err != nil {
			t.Fatalf("keep %d: %v", keep, err)
		}
		// Each dropped segment is reported as beyond the log.
		m := y.Metrics()
		if keep == 499 && len(m.Repairs) == 0 {
			t.Fatal("keep 499: the segment holding the lost id was not reported")
		}
		for _, r := range m.Repairs {
			if r.Reason != RepairBeyondLog || r.Err != nil || (keep > 0 && r.Hi <= docs[keep-1].ID) {
				t.Fatalf("keep %d: repair %v, want segments beyond id %d, reason beyond the log", keep, r, docs[max(keep-1, 0)].ID)
			}
		}
		all, _ := y.Filter(nil)
		if keep > 0 && uint64(all.Maximum()) > docs[keep-1].ID {
			t.Fatalf("keep %d: index claims id %d beyond log", keep, all.Maximum())
		}
		y.Close()
	}
}

// TestReopen: flushed segments load back; unflushed docs come from the log.
func TestReopen(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	docs := genCorpus(rng, 800, 10, 80)
	fs := vfs.NewMem()
	opts := Options{Analyzer: SimpleAnalyzer{}, FS: fs, FlushDocs: 128, MergeFactor: 2, MergeMinDocs: 64}
	x, err := Open("idx", opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 700; i += 100 {
		if err := x.Add(docs[i : i+100]); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.Delete([]uint64{docs[3].ID, docs[650].ID}); err != nil {
		t.Fatal(err)
	}
	if err := x.Add(docs[700:760]); err != nil { // 760..800: in the log only
		t.Fatal(err)
	}
	x.Close()
	src := &memSource{docs: docs}
	y, err := Open("idx", opts, src)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	m := y.Metrics()
	if m.Segments == 0 || m.Rebuilt == 0 || m.Rebuilt >= 800 {
		t.Fatalf("metrics %+v: want segments loaded and a rebuilt tail", m)
	}
	if err := sameIndex(y, src, []uint64{docs[3].ID, docs[650].ID}, []string{"w1 w2", "w3", "w10 w1 w5"}, []*Filter{{Agents: []string{"a1"}}, {Since: docs[100].Time}}); err != nil {
		t.Fatal(err)
	}
}
