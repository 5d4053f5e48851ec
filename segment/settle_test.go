package segment

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestOpenSettlesTables: Open returns once Pebble's initial scan of its
// tables' statistics is over (settleTables), so a read right after Open
// does not share the cores with it nor open the tables itself.
func TestOpenSettlesTables(t *testing.T) {
	// The bound is for slow disks; the check is that Open waits for the
	// scan, which under -race on a loaded machine can take longer than
	// 50 ms (the fresh-clone race pass failed at load 37).
	defer func(d time.Duration) { settleMax = d }(settleMax)
	settleMax = time.Minute
	fs := vfs.NewMem()
	opts := Options{FS: fs, SegmentRecords: 64, SegmentBytes: 1 << 20, DisableBackgroundSeal: true}
	l, err := Open("log", opts)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 4 {
		recs := make([][]byte, 300)
		for i := range recs {
			recs[i] = chatRecord(r, r.IntN(40))
		}
		if _, err := l.AppendBatch(ctx, recs); err != nil {
			t.Fatal(err)
		}
		if err := l.Seal(); err != nil {
			t.Fatal(err)
		}
		if err := l.db.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		l, err := Open("log", opts)
		if err != nil {
			t.Fatal(err)
		}
		m := l.db.Metrics()
		if !m.Table.InitialStatsCollectionComplete {
			t.Errorf("Open returned before Pebble's table statistics were loaded (%d tables)", m.Total().TablesCount)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
