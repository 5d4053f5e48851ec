package bench

import (
	"strings"
	"testing"
	"time"
)

// TestAccepted: issue 16's acceptance 1 per cell, at its edges.
func TestAccepted(t *testing.T) {
	us := time.Microsecond
	row := func(l50, l99, b50, b99 time.Duration, exact int) ClassRow {
		return ClassRow{Class: "mid/agent", Queries: 100, Exact: exact,
			Lazymem: Latency{P50: l50, P99: l99}, Bleve: Latency{Engine: "bleve", P50: b50, P99: b99}}
	}
	for _, c := range []struct {
		name string
		r    ClassRow
		want bool
	}{
		{"10x and 5x", row(100*us, 400*us, 1000*us, 2000*us, 100), true},
		{"9.9x at p50", row(100*us, 400*us, 990*us, 2000*us, 100), false},
		{"4.9x at p99", row(100*us, 400*us, 1000*us, 1960*us, 100), false},
		{"under the floor", row(49*us, 400*us, 100*us, 100*us, 100), true},
		{"at the floor", row(50*us, 400*us, 100*us, 100*us, 100), false},
		{"a query not exact", row(10*us, 20*us, 1000*us, 2000*us, 99), false},
		{"no query", ClassRow{Class: "x"}, false},
	} {
		if got := c.r.Accepted(); got != c.want {
			t.Errorf("%s: Accepted %v, want %v", c.name, got, c.want)
		}
	}
	r := &ClassReport{Records: 1, K: 10, Rounds: 1, Rows: []ClassRow{
		row(100*us, 400*us, 1000*us, 2000*us, 100),
		row(100*us, 400*us, 500*us, 2000*us, 100),
		{Class: "all", Queries: 200, Exact: 200, Lazymem: Latency{P50: 100 * us, P99: 400 * us}, Bleve: Latency{P50: us, P99: us}},
	}}
	r.Rows[1].Class = "rare/agent"
	md := r.Markdown()
	for _, want := range []string{"| 100/100 | yes |", "| 100/100 | no |", "| 200/200 |  |", "1 of 2 cells."} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}
