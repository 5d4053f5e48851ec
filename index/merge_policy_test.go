package index

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestMergeTranscripts replays the transcripts in testdata/merge: a sequence of
// flushes (and deletions) with segment sizes, the runs the policy picks
// after each flush, as the background merger does (merge until nothing is
// picked), and the segments that result.
//
// Commands:
//
//	init factor=F min-docs=M      a fresh index with MergeFactor F, MergeMinDocs M
//	flush docs=N [times=T]        seal T (default 1) segments of N documents, merging after each
//	delete seg=I docs=N           tombstone N documents of segment I (no merge: Delete kicks none)
//	merge-all                     Merge: every segment into one, deletions dropped
func TestMergeTranscripts(t *testing.T) {
	datadriven.Walk(t, "testdata/merge", func(t *testing.T, path string) {
		var p mergePolicy
		var live []uint64
		show := func(b *strings.Builder) {
			b.WriteString("segments:")
			if len(live) == 0 {
				b.WriteString(" none")
			}
			for _, n := range live {
				fmt.Fprintf(b, " %d/t%d", n, p.tier(n))
			}
			b.WriteString("\n")
		}
		merge := func(b *strings.Builder, i, j int) {
			var sum uint64
			parts := make([]string, 0, j-i)
			for _, n := range live[i:j] {
				sum += n
				parts = append(parts, fmt.Sprint(n))
			}
			fmt.Fprintf(b, "merge [%d:%d) tier %d: %s -> %d\n", i, j, p.tier(live[i]), strings.Join(parts, "+"), sum)
			live = append(live[:i], append([]uint64{sum}, live[j:]...)...)
		}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var b strings.Builder
			switch d.Cmd {
			case "init":
				p = mergePolicy{}
				d.ScanArgs(t, "factor", &p.factor)
				d.ScanArgs(t, "min-docs", &p.minDocs)
				opts := Options{MergeFactor: p.factor, MergeMinDocs: int(p.minDocs)}
				if err := opts.EnsureDefaults().Validate(); err != nil {
					return err.Error() + "\n"
				}
				live = live[:0]
				show(&b)
			case "flush":
				var n uint64
				times := 1
				d.ScanArgs(t, "docs", &n)
				d.MaybeScanArgs(t, "times", &times)
				for range times {
					live = append(live, n)
					fmt.Fprintf(&b, "flush %d\n", n)
					for {
						i, j, ok := p.pick(live)
						if !ok {
							break
						}
						merge(&b, i, j)
					}
				}
				show(&b)
			case "delete":
				var i int
				var n uint64
				d.ScanArgs(t, "seg", &i)
				d.ScanArgs(t, "docs", &n)
				if i < 0 || i >= len(live) || n > live[i] {
					d.Fatalf(t, "delete: no segment %d or fewer than %d documents", i, n)
				}
				live[i] -= n
				show(&b)
			case "merge-all":
				if len(live) > 0 {
					merge(&b, 0, len(live))
				}
				show(&b)
			default:
				d.Fatalf(t, "unknown command %q", d.Cmd)
			}
			return b.String()
		})
	})
}

// TestMergePolicyMatchesIndex: an index driven like the transcripts (flushes
// of given sizes, merging to a fixed point after each, as the background
// merger does) ends with the segment sizes the pure policy predicts, so the
// transcripts describe the real merger.
func TestMergePolicyMatchesIndex(t *testing.T) {
	p := mergePolicy{factor: 3, minDocs: 100}
	x, err := Open("", Options{Analyzer: SimpleAnalyzer{}, FlushDocs: -1, DisableBackgroundMerge: true,
		MergeFactor: p.factor, MergeMinDocs: int(p.minDocs)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	rng := rand.New(rand.NewPCG(5, 5))
	var want []uint64
	next := uint64(1)
	for _, n := range []int{100, 100, 100, 60, 100, 400, 100, 100, 100, 100, 50, 50, 50, 300, 300} {
		docs := genCorpus(rng, n, next, 30)
		next = docs[len(docs)-1].ID + 1
		if err := x.Add(docs); err != nil {
			t.Fatal(err)
		}
		if err := x.Flush(); err != nil {
			t.Fatal(err)
		}
		for {
			did, err := x.mergeOnce(false)
			if err != nil {
				t.Fatal(err)
			}
			if !did {
				break
			}
		}
		want = append(want, uint64(n))
		for {
			i, j, ok := p.pick(want)
			if !ok {
				break
			}
			var sum uint64
			for _, v := range want[i:j] {
				sum += v
			}
			want = append(want[:i], append([]uint64{sum}, want[j:]...)...)
		}
		var got []uint64
		x.mu.RLock()
		for _, s := range x.segs {
			got = append(got, uint64(s.nDocs-s.nDeleted))
		}
		x.mu.RUnlock()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("after a flush of %d: index segments %v, policy predicts %v", n, got, want)
		}
	}
}
