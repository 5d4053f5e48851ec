//go:build diag

package engine

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRecallTraceGCDiag reads a recall trace (LAZYMEM_TRACE, written by a
// recall benchmark run with LAZYMEM_BENCH_TRACE) and the same run's
// GODEBUG=gctrace=1 output (LAZYMEM_GCTRACE, its stderr), and prints for
// each cell how many recalls ran while a GC cycle marked and the latency
// of those and of the others:
//
//	GODEBUG=gctrace=1 LAZYMEM_BENCH_TRACE=trace.txt LAZYMEM_BENCH_DIR=DIR LAZYMEM_BENCH_N=1m \
//	  go test ./engine -run XXX -bench 'RecallZipf/n=1000000/filter=session$/cache=cold-open$' -benchtime 100x 2>gc.txt
//	LAZYMEM_TRACE=$PWD/trace.txt LAZYMEM_GCTRACE=$PWD/gc.txt go test -tags diag ./engine -run TestRecallTraceGCDiag -v
//
// A cycle's span is its end (the trace's gcend, from debug.ReadGCStats)
// less its wall time (gctrace's "a+b+c ms clock").
func TestRecallTraceGCDiag(t *testing.T) {
	trName, gcName := os.Getenv("LAZYMEM_TRACE"), os.Getenv("LAZYMEM_GCTRACE")
	if trName == "" || gcName == "" {
		t.Skip("set LAZYMEM_TRACE and LAZYMEM_GCTRACE")
	}
	clock := map[int64]float64{} // cycle -> wall ms
	re := regexp.MustCompile(`^gc (\d+) @[\d.]+s \d+%: ([\d.]+)\+([\d.]+)\+([\d.]+) ms clock`)
	eachLine(t, gcName, func(l string) {
		if m := re.FindStringSubmatch(l); m != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			var ms float64
			for _, s := range m[2:] {
				f, _ := strconv.ParseFloat(s, 64)
				ms += f
			}
			clock[n] = ms
		}
	})
	type recall struct {
		cell, class string
		start, end  int64
		wall        time.Duration
	}
	var recs []recall
	ends := map[int64]int64{}
	eachLine(t, trName, func(l string) {
		f := strings.Fields(l)
		if len(f) < 2 {
			return
		}
		v := map[string]string{}
		for _, kv := range f[1:] {
			if k, x, ok := strings.Cut(kv, "="); ok {
				v[k] = x
			}
		}
		for _, e := range strings.Split(strings.TrimSuffix(v["gcend"], ","), ",") {
			if n, ns, ok := strings.Cut(e, ":"); ok {
				a, _ := strconv.ParseInt(n, 10, 64)
				b, _ := strconv.ParseInt(ns, 10, 64)
				ends[a] = b
			}
		}
		r := recall{cell: f[0], class: v["class"]}
		r.start, _ = strconv.ParseInt(v["start"], 10, 64)
		r.end, _ = strconv.ParseInt(v["end"], 10, 64)
		us, _ := strconv.ParseInt(v["wall-us"], 10, 64)
		r.wall = time.Duration(us) * time.Microsecond
		recs = append(recs, r)
	})
	type span struct{ a, b int64 }
	var marks []span
	for n, end := range ends {
		if ms, ok := clock[n]; ok {
			marks = append(marks, span{end - int64(ms*1e6), end})
		}
	}
	pct := func(d []time.Duration, p float64) string {
		if len(d) == 0 {
			return "-"
		}
		slices.Sort(d)
		return fmt.Sprintf("%.2f", float64(d[min(len(d)-1, int(float64(len(d))*p))].Microseconds())/1000)
	}
	var cells []string
	for _, r := range recs {
		if !slices.Contains(cells, r.cell) {
			cells = append(cells, r.cell)
		}
	}
	for _, c := range cells {
		var in, out []time.Duration
		for _, r := range recs {
			if r.cell != c {
				continue
			}
			if slices.ContainsFunc(marks, func(m span) bool { return m.a < r.end && r.start < m.b }) {
				in = append(in, r.wall)
			} else {
				out = append(out, r.wall)
			}
		}
		fmt.Printf("%s: %d recalls, %d while a GC cycle marked (p50 %s, max %s ms), the others p50 %s, p99 %s, max %s ms\n",
			c, len(in)+len(out), len(in), pct(in, 0.5), pct(in, 1), pct(out, 0.5), pct(out, 0.99), pct(out, 1))
	}
}

func eachLine(t *testing.T, name string, fn func(string)) {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		fn(sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}
