//go:build diag

// Compact's cost with and without a dictionary rebuild:
//
//	LAZYMEM_LOG_DIR=/path/to/store/log go test -tags diag ./segment -run TestCompactRebuildDiag -v

package segment

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestCompactRebuildDiag copies the log in LAZYMEM_LOG_DIR and times
// Compact after deleting 100 records none of which the dictionary holds
// ("plain"), and after deleting the same 99 and one it holds
// ("rebuild"), alternating, three rounds each.
func TestCompactRebuildDiag(t *testing.T) {
	dir := os.Getenv("LAZYMEM_LOG_DIR")
	if dir == "" {
		t.Skip("set LAZYMEM_LOG_DIR to a log directory")
	}
	ctx := context.Background()
	for round := range 3 {
		for _, mode := range []string{"plain", "rebuild"} {
			tmp := filepath.Join(t.TempDir(), "log")
			if err := os.CopyFS(tmp, os.DirFS(dir)); err != nil {
				t.Fatal(err)
			}
			l, err := Open(tmp, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Seal(); err != nil {
				t.Fatal(err)
			}
			cur := l.comp.encDict()
			hist := l.dict.hist[cur.id()]
			if cur == nil || len(hist) == 0 {
				t.Fatalf("dictionary %v, %d records in its history: rebuild the store with this code", cur, len(hist))
			}
			r := rand.New(rand.NewPCG(uint64(round), 1))
			var del []uint64
			for len(del) < 99 {
				id := 1 + r.Uint64N(l.Next()-2)
				if !slices.Contains(hist, id) && !slices.Contains(del, id) {
					del = append(del, id)
				}
			}
			if mode == "rebuild" {
				del = append(del, hist[r.IntN(len(hist))])
			}
			if err := l.Delete(ctx, del); err != nil {
				t.Fatal(err)
			}
			before := l.Metrics().SegmentBytes
			start := time.Now()
			if err := l.Compact(ctx); err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			if err := l.WaitPurged(ctx, time.Minute); err != nil {
				t.Fatal(err)
			}
			all := time.Since(start)
			after := l.Metrics().SegmentBytes
			fmt.Printf("round %d %-7s: Compact %v (with WaitPurged %v), dictionary %d (%d records of %d) -> %d, segments %d -> %d bytes\n",
				round, mode, took.Round(time.Millisecond), all.Round(time.Millisecond), cur.id(), len(hist), l.Next()-1, l.comp.encDict().id(), before, after)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			os.RemoveAll(tmp)
		}
	}
}
