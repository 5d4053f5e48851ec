//go:build diag

// The unsealed tail of the log while the whole engine loads a corpus (one
// writer, batches of 1000): every second, how many records wait for
// their seal, then the largest seen and the time to Close. The sealer
// keeps up when the tail stays within a few segments; without the
// append's assist (segment.Log.AppendBatch) bench/workload's tail grew to
// 166-214k records of 1M (docs/benchmarks/log-size.md, section 11):
//
//	LAZYMEM_BENCH_CORPUS=workload LAZYMEM_BENCH_N=1000000 go test -tags diag ./bench -run TestTailLagDiag -v
//
// LAZYMEM_KEEP=DIR keeps the store in DIR.

package bench

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/engine"
)

// TestTailLagDiag loads LAZYMEM_BENCH_CORPUS (zipf, the default, or
// workload) of LAZYMEM_BENCH_N records and logs the tail as it goes.
func TestTailLagDiag(t *testing.T) {
	var docs []Doc
	if os.Getenv("LAZYMEM_BENCH_CORPUS") == "workload" {
		c, err := Load(workload.Config{Seed: 1, Records: envInt("LAZYMEM_BENCH_N", 200000)}, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		docs = c.Docs
	} else {
		docs = zipfDocs(t)
	}
	recs := EngineRecords(docs)
	dir := t.TempDir()
	if k := os.Getenv("LAZYMEM_KEEP"); k != "" {
		dir = k
	}
	db, err := engine.Open(dir, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	var maxTail int
	next := time.Now()
	for lo := 0; lo < len(recs); lo += 1000 {
		if _, err := db.AppendBatch(context.Background(), recs[lo:min(lo+1000, len(recs))]); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(next) {
			m := db.Metrics()
			maxTail = max(maxTail, int(m.Log.TailRecords))
			t.Logf("%6.2fs appended %7d tail %7d segments %d", time.Since(t0).Seconds(), lo+1000, m.Log.TailRecords, m.Log.Segments)
			next = time.Now().Add(time.Second)
		}
	}
	m := db.Metrics()
	t.Logf("end appends %v tail %d (max %d)", time.Since(t0), m.Log.TailRecords, maxTail)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("closed %v", time.Since(t0))
}
