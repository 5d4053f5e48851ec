package engine

import (
	"runtime/metrics"
	"slices"
	"testing"
	"time"
)

// gcProbe attributes a recall benchmark's latencies to the collector: it
// reads the runtime's GC CPU counters (runtime/metrics, which include a
// mark phase in progress; no stop-the-world, unlike ReadMemStats) around
// each timed recall. A recall during which the collector ran (GC CPU on
// any core moved) is a "gc" recall; the p99 of the others says how much
// of the tail the collector explains.
type gcProbe struct {
	s          []metrics.Sample
	gc, assist float64 // counters at the recall's start
	lat        []time.Duration
	gcLat      []time.Duration
	assistSum  float64
}

func newGCProbe() *gcProbe {
	return &gcProbe{s: []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}, {Name: "/cpu/classes/gc/mark/assist:cpu-seconds"}}}
}

func (p *gcProbe) read() (gc, assist float64) {
	metrics.Read(p.s)
	return p.s[0].Value.Float64(), p.s[1].Value.Float64()
}

// start is called just before a timed recall, done just after with its
// latency.
func (p *gcProbe) start() { p.gc, p.assist = p.read() }

func (p *gcProbe) done(d time.Duration) {
	gc, assist := p.read()
	p.assistSum += assist - p.assist
	if gc > p.gc {
		p.gcLat = append(p.gcLat, d)
	} else {
		p.lat = append(p.lat, d)
	}
}

// report adds gc-recalls/op (the share of recalls the collector ran
// during), assist-ms/op (mark assists, CPU, mean) and the p50 and p99 of
// the recalls it did not run during.
func (p *gcProbe) report(b *testing.B) {
	n := len(p.lat) + len(p.gcLat)
	if n == 0 {
		return
	}
	b.ReportMetric(float64(len(p.gcLat))/float64(n), "gc-recalls/op")
	b.ReportMetric(p.assistSum*1000/float64(n), "assist-ms/op")
	if len(p.lat) > 0 {
		slices.Sort(p.lat)
		b.ReportMetric(float64(p.lat[len(p.lat)/2].Microseconds())/1000, "p50-nogc-ms")
		b.ReportMetric(float64(p.lat[len(p.lat)*99/100].Microseconds())/1000, "p99-nogc-ms")
	}
	if len(p.gcLat) > 0 {
		slices.Sort(p.gcLat)
		b.ReportMetric(float64(p.gcLat[len(p.gcLat)/2].Microseconds())/1000, "p50-gc-ms")
	}
}
