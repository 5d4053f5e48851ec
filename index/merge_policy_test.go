package index

import (
	"fmt"
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
