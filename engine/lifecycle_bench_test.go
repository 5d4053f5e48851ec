package engine

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/lazymem/lazymem/bench/workload"
)

// BenchmarkAppendDuringLifecycle measures single durable appends (one
// fsync each) side by side: with retention and compaction idle, then while
// a retention pass expires the older half of the store and Compact purges
// it. The store holds n workload records spread over 90 days; the clock
// stands at the end of that span and the window is 45 days. Reported:
// append p50/p99 in µs for both phases, and how long the retention pass
// and the compaction took.
//
//	go test ./engine -run '^$' -bench 'AppendDuringLifecycle/records=100000' -benchtime 1x
func BenchmarkAppendDuringLifecycle(b *testing.B) {
	for _, n := range []int{20_000, 100_000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			cfg := workload.Config{Seed: 9, Records: n}
			recs, err := workload.Records(cfg)
			if err != nil {
				b.Fatal(err)
			}
			now := recs[len(recs)-1].Time.Add(time.Minute)
			batch := make([]Record, len(recs))
			for i, r := range recs {
				batch[i] = Record{Time: r.Time, Agent: r.Agent, Session: r.Session, Role: r.Role, Text: r.Text, Meta: r.Meta}
			}
			ctx := context.Background()
			for range b.N {
				b.StopTimer()
				o := benchOptions(64 << 20)
				o.Clock = func() time.Time { return now }
				o.Retention = RetentionOptions{Window: 45 * 24 * time.Hour, Interval: -1}
				db, err := Open(b.TempDir(), o)
				if err != nil {
					b.Fatal(err)
				}
				for lo := 0; lo < len(batch); lo += 10_000 {
					if _, err := db.AppendBatch(ctx, batch[lo:min(lo+10_000, len(batch))]); err != nil {
						b.Fatal(err)
					}
				}
				if err := db.log.Seal(); err != nil {
					b.Fatal(err)
				}
				appendOne := func(i int) time.Duration {
					t0 := time.Now()
					if _, err := db.Append(ctx, Record{Agent: "bench", Session: "live", Role: "user",
						Text: fmt.Sprintf("live turn %d about the rollout checklist", i)}); err != nil {
						b.Fatal(err)
					}
					return time.Since(t0)
				}
				b.StartTimer()
				// Idle: retention and compaction not running.
				idle := make([]time.Duration, 0, 1000)
				for i := range 1000 {
					idle = append(idle, appendOne(i))
				}
				// Busy: a retention pass then a compaction run beside the appends.
				type result struct {
					expired      int
					ret, compact time.Duration
					err          error
				}
				done := make(chan result, 1)
				go func() {
					var r result
					t0 := time.Now()
					r.expired, r.err = db.ApplyRetention(ctx)
					r.ret = time.Since(t0)
					if r.err == nil {
						t1 := time.Now()
						r.err = db.Compact(ctx)
						r.compact = time.Since(t1)
					}
					done <- r
				}()
				var busy []time.Duration
				var r result
			loop:
				for i := 1000; ; i++ {
					busy = append(busy, appendOne(i))
					select {
					case r = <-done:
						break loop
					default:
					}
				}
				b.StopTimer()
				if r.err != nil {
					b.Fatal(r.err)
				}
				pct := func(d []time.Duration, p int) float64 {
					slices.Sort(d)
					return float64(d[len(d)*p/100].Microseconds())
				}
				b.ReportMetric(pct(idle, 50), "idle-append-p50-us")
				b.ReportMetric(pct(idle, 99), "idle-append-p99-us")
				b.ReportMetric(pct(busy, 50), "busy-append-p50-us")
				b.ReportMetric(pct(busy, 99), "busy-append-p99-us")
				b.ReportMetric(float64(len(busy)), "busy-appends")
				b.ReportMetric(float64(r.expired), "expired")
				b.ReportMetric(float64(r.ret.Milliseconds()), "retention-ms")
				b.ReportMetric(float64(r.compact.Milliseconds()), "compact-ms")
				if err := db.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
