package index

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

func TestSettlePick(t *testing.T) {
	for _, c := range []struct {
		live []uint64
		max  uint64
		at   int // -1: none
	}{
		{[]uint64{524288, 131072, 131072, 131072, 82496}, 1 << 21, 0}, // a 1M load: everything
		{[]uint64{131072, 68928}, 1 << 21, 0},                         // 200k
		{[]uint64{4 << 20, 131072, 131072}, 1 << 21, 1},               // the old one is too big
		{[]uint64{131072}, 1 << 21, -1},                               // one segment
		{nil, 1 << 21, -1},
		{[]uint64{1 << 21, 1000}, 1 << 21, -1},  // the newest alone fits, not with its neighbour
		{[]uint64{800000, 100000}, 1 << 21, -1}, // the small one is under an eighth
		{[]uint64{700000, 100000}, 1 << 21, 0},  // an eighth exactly
		{[]uint64{10, 20, 30, 40}, 70, 2},       // the longest newest run that fits
		{[]uint64{0, 0, 50, 50}, 1 << 21, 0},    // empty segments keep their ranges
		{[]uint64{100, 100, 3 << 21, 100}, 1 << 21, -1},
	} {
		at, ok := settlePick(c.live, c.max)
		if !ok {
			at = -1
		}
		if at != c.at {
			t.Errorf("settlePick(%v, %d) = %d, want %d", c.live, c.max, at, c.at)
		}
	}
}

// settleIndex is an index of several sealed segments that the tiered
// policy leaves alone (a high merge factor), with docs' postings and a
// mutable tail; it returns the index and the docs.
func settleIndex(t *testing.T, fs vfs.FS, opts Options) (*Index, []*Doc) {
	t.Helper()
	opts.Analyzer, opts.FS, opts.FlushDocs, opts.MergeFactor = SimpleAnalyzer{}, fs, 100, 16
	x, err := Open("idx", opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	docs := genCorpus(rng, 470, 1, 60)
	for i := 0; i < len(docs); i += 50 {
		if err := x.Add(docs[i:min(i+50, len(docs))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := x.Delete([]uint64{docs[3].ID, docs[250].ID}); err != nil {
		t.Fatal(err)
	}
	return x, docs
}

// checkSearches compares the pruned search with the exhaustive one.
func checkSearches(t *testing.T, x *Index, vocab int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(9, 9))
	for q := 0; q < 60; q++ {
		query := randQuery(rng, vocab)
		got, err := x.Search(query, nil, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := x.SearchExhaustive(query, nil, 10)
		if err != nil {
			t.Fatal(err)
		}
		sameHits(t, fmt.Sprintf("query %q", query), got, want, 1e-6)
	}
}

// TestSettleInBackground: an index left alone for SettleAfter is merged
// into one segment by the background merger, with the same search
// results, and reopens as one segment.
func TestSettleInBackground(t *testing.T) {
	fs := vfs.NewMem()
	x, _ := settleIndex(t, fs, Options{SettleAfter: 20 * time.Millisecond})
	// The settle may begin before this line (under -race on a loaded
	// machine 20 ms can pass between two batches), so the segments it
	// starts from are counted by their flushes, not by Segments now; the
	// tiered policy (MergeFactor 16) merges none of them by itself.
	if n := x.Metrics().Flushes; n < 4 {
		t.Fatalf("%d flushes before the settle, want 4 or more sealed segments", n)
	}
	deadline := time.Now().Add(30 * time.Second)
	for x.Metrics().Segments != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("still %d segments 30 s after the last write", x.Metrics().Segments)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if m := x.Metrics(); m.Merges < 1 || m.Docs != 468 || m.MergeErrors != 0 {
		t.Fatalf("metrics after the settle: %+v, want a merge and 468 live documents", m)
	}
	checkSearches(t, x, 60)
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	x, err := Open("idx", Options{Analyzer: SimpleAnalyzer{}, FS: fs, DisableBackgroundMerge: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if n := x.Metrics().Segments; n != 1 {
		t.Fatalf("%d segments after a reopen, want 1", n)
	}
	checkSearches(t, x, 60)
}

// TestSettleOff: with SettleAfter negative the background merger leaves
// the segments alone (the same index settles within milliseconds with
// SettleAfter 20 ms: TestSettleInBackground); Settle merges them.
func TestSettleOff(t *testing.T) {
	x, _ := settleIndex(t, vfs.NewMem(), Options{SettleAfter: -1})
	defer x.Close()
	n := x.Metrics().Segments
	if n < 4 {
		t.Fatalf("%d sealed segments, want 4 or more", n)
	}
	time.Sleep(300 * time.Millisecond)
	if got := x.Metrics().Segments; got != n {
		t.Fatalf("%d segments became %d with the settle off", n, got)
	}
	if err := x.Settle(); err != nil {
		t.Fatal(err)
	}
	if got := x.Metrics().Segments; got != 1 {
		t.Fatalf("%d segments after Settle, want 1", got)
	}
	checkSearches(t, x, 60)
}

func TestSettleOptions(t *testing.T) {
	o := Options{SettleMaxDocs: 1}
	if err := o.EnsureDefaults().Validate(); err == nil {
		t.Fatal("SettleMaxDocs 1 accepted")
	}
	o = Options{}
	o.EnsureDefaults()
	if o.SettleAfter != 10*time.Second || o.SettleMaxDocs != 1<<21 {
		t.Fatalf("defaults: SettleAfter %v, SettleMaxDocs %d", o.SettleAfter, o.SettleMaxDocs)
	}
}

// TestImageSize: a merged segment's image is built in one allocation of
// exactly its size (finish computes it; growing a 1M-document image copied
// it once more), with fields, deletions and muted postings in play.
func TestImageSize(t *testing.T) {
	x, docs := settleIndex(t, vfs.NewMem(), Options{SettleAfter: -1})
	defer x.Close()
	x.mu.RLock()
	in := x.sealed()
	tomb := x.tomb.Clone()
	x.mu.RUnlock()
	if len(in) < 2 {
		t.Fatalf("%d sealed segments, want several", len(in))
	}
	mute := roaring.BitmapOf(uint32(docs[7].ID), uint32(docs[300].ID))
	for _, m := range []*roaring.Bitmap{nil, mute} {
		b, err := mergeBuilder(in, tomb, m)
		if err != nil {
			t.Fatal(err)
		}
		img, err := b.finish()
		if err != nil {
			t.Fatal(err)
		}
		if len(img) != cap(img) {
			t.Errorf("image of %d bytes in a buffer of %d", len(img), cap(img))
		}
		if _, err := openSegment("x", 99, img); err != nil {
			t.Fatal(err)
		}
	}
}
