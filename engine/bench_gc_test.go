package engine

import (
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"testing"
	"time"
)

// gcProbe attributes a recall benchmark's latencies to the collector. It
// counts completed GC cycles (runtime/metrics, no stop-the-world, unlike
// ReadMemStats) around each timed recall: a "gc" recall saw a cycle end.
// A mark phase that spans the whole recall is not seen that way (the
// runtime's GC CPU counters are only updated when a cycle ends), so with
// LAZYMEM_BENCH_GC=settle the cold benchmarks also run a collection to
// its end after the reopen, outside the timer: no mark phase is then
// running when the recall starts, and the recall's ~1.2 MB stays far
// below the next cycle's trigger. Comparing p99 with and without settle
// says how much of the tail the collector explains. Since Open collects
// its loading's garbage itself (collectOpenGarbage), settle adds a second
// collection after a reopen, which finds little to do.
type gcProbe struct {
	s      []metrics.Sample
	cycles uint64 // at the recall's start
	settle bool
	lat    []time.Duration
	gcLat  []time.Duration
}

func newGCProbe() *gcProbe {
	return &gcProbe{s: []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}, settle: os.Getenv("LAZYMEM_BENCH_GC") == "settle"}
}

func (p *gcProbe) read() uint64 {
	metrics.Read(p.s)
	return p.s[0].Value.Uint64()
}

// settled runs a collection to its end when LAZYMEM_BENCH_GC=settle
// (call it with the timer stopped).
func (p *gcProbe) settled() {
	if p.settle {
		runtime.GC()
	}
}

// start is called just before a timed recall, done just after with its
// latency.
func (p *gcProbe) start() { p.cycles = p.read() }

func (p *gcProbe) done(d time.Duration) {
	if p.read() != p.cycles {
		p.gcLat = append(p.gcLat, d)
	} else {
		p.lat = append(p.lat, d)
	}
}

// report adds gc-recalls/op (the share of recalls a GC cycle ended
// during) and the p50 and p99 of the recalls none ended during.
func (p *gcProbe) report(b *testing.B) {
	n := len(p.lat) + len(p.gcLat)
	if n == 0 {
		return
	}
	b.ReportMetric(float64(len(p.gcLat))/float64(n), "gc-recalls/op")
	if len(p.lat) > 0 {
		slices.Sort(p.lat)
		b.ReportMetric(float64(p.lat[len(p.lat)/2].Microseconds())/1000, "p50-nogc-ms")
		b.ReportMetric(float64(p.lat[len(p.lat)*99/100].Microseconds())/1000, "p99-nogc-ms")
	}
}
