//go:build diag

package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/lazymem/lazymem/bench/zipf"
	"golang.org/x/sys/unix"
)

// The cold recall of a new process, in a new process: BenchmarkRecallZipf's
// cache=cold-open reopens the store inside one long benchmark process,
// whose heap also holds the generated corpus and the previous stores'
// garbage; here a process opens the store, recalls once and exits.
//
//	LAZYMEM_BENCH_N=1m LAZYMEM_QUERIES=q.json go test -tags diag ./engine -run TestZipfQueriesDiag
//	go test -c -tags diag -o diag.test ./engine
//	for i in $(seq 0 99); do LAZYMEM_BENCH_DIR=DIR LAZYMEM_BENCH_N=1m LAZYMEM_QUERIES=q.json \
//	  LAZYMEM_QUERY=$i ./diag.test -test.run TestNewProcessRecallDiag -test.v | grep newprocess; done
//
// Each line gives the recall's wall time, whether a GC cycle ended during
// it, and whether one was marking when it ended (runtime.GC then completes
// two cycles, not one).

type diagQuery struct {
	Filter, Class        string
	Text, Agent, Session string
	Since, Until         time.Time
}

// TestZipfQueriesDiag writes BenchmarkRecallZipf's agent and session
// queries, in its order, to LAZYMEM_QUERIES.
func TestZipfQueriesDiag(t *testing.T) {
	name := os.Getenv("LAZYMEM_QUERIES")
	if name == "" {
		t.Skip("set LAZYMEM_QUERIES")
	}
	n := 100_000
	if s := os.Getenv("LAZYMEM_BENCH_N"); s == "1m" {
		n = 1_000_000
	}
	cfg := zipf.Config{Seed: 1, Records: n}
	cfg.EnsureDefaults()
	recs, err := zipf.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	all, err := zipf.Queries(cfg, recs, 20, 42)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for _, kind := range []zipf.FilterKind{zipf.Agent, zipf.Session} {
		for _, q := range all {
			if q.Filter == kind {
				if err := enc.Encode(diagQuery{Filter: string(kind), Class: string(q.Class), Text: q.Text, Agent: q.Agent, Session: q.Session, Since: q.Since, Until: q.Until}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// TestNewProcessRecallDiag opens the Zipf store under LAZYMEM_BENCH_DIR
// and runs query LAZYMEM_QUERY of LAZYMEM_QUERIES once, as a new process's
// first recall (the embedding cache's disk tier emptied first).
func TestNewProcessRecallDiag(t *testing.T) {
	dir, name, qs := os.Getenv("LAZYMEM_BENCH_DIR"), os.Getenv("LAZYMEM_QUERIES"), os.Getenv("LAZYMEM_QUERY")
	if dir == "" || name == "" || qs == "" {
		t.Skip("set LAZYMEM_BENCH_DIR, LAZYMEM_QUERIES and LAZYMEM_QUERY")
	}
	n := 100_000
	if s := os.Getenv("LAZYMEM_BENCH_N"); s == "1m" {
		n = 1_000_000
	}
	qi, err := strconv.Atoi(qs)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	var all []diagQuery
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var q diagQuery
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			t.Fatal(err)
		}
		all = append(all, q)
	}
	f.Close()
	toQuery := func(q diagQuery) Query {
		query := Query{Text: q.Text, Agent: q.Agent, Since: q.Since, Until: q.Until}
		if q.Session != "" {
			query.Sessions = []string{q.Session}
		}
		return query
	}
	q := all[qi]
	t0 := time.Now()
	db, err := Open(filepath.Join(dir, fmt.Sprintf("zipf-n=%d", n)), benchOptions(0))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// LAZYMEM_WARMUP=j: query j first (the process's first recall), then
	// the embedding cache emptied again: what the measured recall gains
	// is what a process pays once (its code's and heap's first touch).
	if ws := os.Getenv("LAZYMEM_WARMUP"); ws != "" {
		j, err := strconv.Atoi(ws)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Recall(context.Background(), toQuery(all[j])); err != nil {
			t.Fatal(err)
		}
		if os.Getenv("LAZYMEM_WARMUP_GC") != "" {
			runtime.GC() // the warm-up's garbage freed: its pages are reused
		}
	}
	if err := db.cache.clear(); err != nil {
		t.Fatal(err)
	}
	open := time.Since(t0)
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	before := s[0].Value.Uint64()
	query := toQuery(q)
	// LAZYMEM_PROFILE: a CPU profile of the recall alone, at 2 kHz (the
	// profiles of many processes merge: go tool pprof -top diag.test p.*).
	if pf := os.Getenv("LAZYMEM_PROFILE"); pf != "" {
		w, err := os.Create(pf)
		if err != nil {
			t.Fatal(err)
		}
		runtime.SetCPUProfileRate(2000)
		if err := pprof.StartCPUProfile(w); err != nil {
			t.Fatal(err)
		}
		defer w.Close()
	}
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	// LAZYMEM_MARK: print CLOCK_MONOTONIC at the recall's start and end,
	// to cut a `perf record -k CLOCK_MONOTONIC -e page-faults -g` of the
	// process to the recall (perf script prints the same clock).
	var m0, m1 unix.Timespec
	mark := os.Getenv("LAZYMEM_MARK") != ""
	if mark {
		_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &m0)
	}
	start := time.Now()
	res, err := db.Recall(context.Background(), query)
	wall := time.Since(start)
	if mark {
		_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &m1)
		fmt.Printf("mark %d.%09d %d.%09d\n", m0.Sec, m0.Nsec, m1.Sec, m1.Nsec)
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	pprof.StopCPUProfile() // a no-op without LAZYMEM_PROFILE
	if err != nil {
		t.Fatal(err)
	}
	metrics.Read(s)
	ended := s[0].Value.Uint64() - before
	live := s[1].Value.Uint64()
	c0 := s[0].Value.Uint64()
	runtime.GC()
	metrics.Read(s)
	marking := s[0].Value.Uint64()-c0 > 1
	d := res.Stats.Durations
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	fmt.Printf("newprocess filter=%s q=%d class=%s wall-us=%d cpu-us=%d minflt=%d open-ms=%d gc-cycles-before=%d gc-ended-during=%d marking-at-end=%v live-MB=%d filter-us=%d broad-us=%d fetch-us=%d embed-us=%d score-us=%d total-us=%d\n",
		q.Filter, qi, q.Class, wall.Microseconds(), cpu.Microseconds(), ru1.Minflt-ru0.Minflt, open.Milliseconds(), before, ended, marking, live>>20, d.Filter.Microseconds(), d.Broad.Microseconds(), d.Fetch.Microseconds(), d.Embed.Microseconds(), d.Score.Microseconds(), d.Total.Microseconds())
}
