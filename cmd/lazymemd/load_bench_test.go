package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/engine"
)

// BenchmarkLoad runs the real daemon (a child process) over a store of
// LAZYMEM_LOAD_N records (default 100k; workload.ParseScale syntax) and
// compares one client's recalls with 64 clients mixing recalls and
// appends, side by side in one run. It reports recall p50/p99 for both
// and the daemon's peak RSS (VmHWM, reset before each phase through
// /proc/PID/clear_refs) with the engine's cache sizes beside it.
//
//	LAZYMEM_LOAD_DIR=/tmp/lmload LAZYMEM_LOAD_N=1m \
//	  go test ./cmd/lazymemd -run XXX -bench Load -benchtime 1x
//
// LAZYMEM_LOAD_DIR keeps the built store between runs.
func BenchmarkLoad(b *testing.B) {
	n := 100_000
	if s := os.Getenv("LAZYMEM_LOAD_N"); s != "" {
		v, err := workload.ParseScale(s)
		if err != nil {
			b.Fatal(err)
		}
		n = v
	}
	cfg := workload.Config{Seed: 11, Records: n}
	dir := b.TempDir()
	if d := os.Getenv("LAZYMEM_LOAD_DIR"); d != "" {
		dir = filepath.Join(d, fmt.Sprintf("n=%d", n))
	}
	if _, err := os.Stat(filepath.Join(dir, "log")); err != nil {
		buildLoadStore(b, dir, cfg)
	}
	qs := workload.KeywordQueries(cfg, 400, 7)
	qbodies := make([][]byte, len(qs))
	for i, q := range qs {
		qbodies[i], _ = json.Marshal(map[string]any{"agent": q.Agent, "text": q.Text})
	}
	// Appends: batches of 100 fresh records from another seed.
	extra, err := workload.Records(workload.Config{Seed: 12, Records: 20_000})
	if err != nil {
		b.Fatal(err)
	}
	var abodies [][]byte
	for lo := 0; lo+100 <= len(extra); lo += 100 {
		buf := []byte(`{"records":[`)
		for i := lo; i < lo+100; i++ {
			if i > lo {
				buf = append(buf, ',')
			}
			buf = workload.AppendJSON(buf, &extra[i])
		}
		abodies = append(abodies, append(buf, "]}"...))
	}

	for i := 0; i < b.N; i++ {
		cmd, url := startLoadDaemon(b, dir)
		pid := cmd.Process.Pid
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 128}}
		post := func(path string, body []byte) (int, error) {
			resp, err := client.Post(url+path, "application/json", bytes.NewReader(body))
			if err != nil {
				return 0, err
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp.StatusCode, nil
		}
		// Warm: every query once (embedding cache), then reset the peak.
		for _, q := range qbodies {
			if st, err := post("/v1/recall", q); err != nil || st != 200 {
				b.Fatalf("warm recall: %d %v", st, err)
			}
		}
		phase := func(name string, clients int, appendEvery int, perClient int) {
			clearRefs(b, pid)
			var mu sync.Mutex
			var lat []time.Duration
			appended, busy := 0, 0
			var wg sync.WaitGroup
			t0 := time.Now()
			for c := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for j := range perClient {
						if appendEvery > 0 && j%appendEvery == appendEvery-1 {
							st, err := post("/v1/records", abodies[(c*perClient+j)%len(abodies)])
							mu.Lock()
							if err == nil && st == 200 {
								appended += 100
							} else if st == 503 {
								busy++
							} else {
								b.Errorf("append: %d %v", st, err)
							}
							mu.Unlock()
							continue
						}
						s := time.Now()
						st, err := post("/v1/recall", qbodies[(c*7+j)%len(qbodies)])
						d := time.Since(s)
						mu.Lock()
						if err == nil && st == 200 {
							lat = append(lat, d)
						} else if st == 503 {
							busy++
						} else {
							b.Errorf("recall: %d %v", st, err)
						}
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			el := time.Since(t0)
			slices.Sort(lat)
			hwm, rss := procMem(b, pid)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), name+"-recall-p50-us")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), name+"-recall-p99-us")
			b.ReportMetric(float64(len(lat))/el.Seconds(), name+"-recalls/s")
			if appended > 0 {
				b.ReportMetric(float64(appended)/el.Seconds(), name+"-appended-records/s")
			}
			b.ReportMetric(float64(busy), name+"-busy-503")
			b.ReportMetric(float64(hwm>>20), name+"-peak-rss-MiB")
			b.Logf("%s: %d recalls, %d appended, %d busy in %v; peak RSS %d MiB, RSS %d MiB",
				name, len(lat), appended, busy, el.Round(time.Millisecond), hwm>>20, rss>>20)
		}
		phase("clients=1", 1, 0, 400)
		phase("clients=64", 64, 4, 40)
		b.Logf("engine cache sizes: memory tier %d MiB, disk-cache blocks %d MiB, log cache %d MiB; daemon decode budget %d MiB",
			engine.DefaultCacheBytes>>20, engine.DefaultDiskCacheBlockBytes>>20, 64, defaultMaxDecode>>20)
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}
}

// buildLoadStore appends cfg's records in batches of 1000.
func buildLoadStore(b *testing.B, dir string, cfg workload.Config) {
	recs, err := workload.Records(cfg)
	if err != nil {
		b.Fatal(err)
	}
	db, err := engine.Open(dir, engine.Options{})
	if err != nil {
		b.Fatal(err)
	}
	batch := make([]engine.Record, 0, 1000)
	for i := range recs {
		r := &recs[i]
		batch = append(batch, engine.Record{Time: r.Time, Agent: r.Agent, Session: r.Session, Role: r.Role, Text: r.Text, Meta: r.Meta})
		if len(batch) == cap(batch) || i == len(recs)-1 {
			if _, err := db.AppendBatch(context.Background(), batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
}

// startLoadDaemon runs the test binary as the daemon over dir.
func startLoadDaemon(b *testing.B, dir string) (*exec.Cmd, string) {
	cmd := exec.Command(os.Args[0], "--db", dir, "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	urlRE := regexp.MustCompile(`url=(http://[0-9.:]+)`)
	sc := bufio.NewScanner(stderr)
	url := ""
	for url == "" && sc.Scan() {
		if m := urlRE.FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		b.Fatal("the daemon never said where it listens")
	}
	go io.Copy(io.Discard, stderr)
	for deadline := time.Now().Add(5 * time.Minute); ; {
		resp, err := http.Get(url + "/v1/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			b.Fatal("the daemon never became ready")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cmd, url
}

// clearRefs resets the process's peak RSS (Linux: "5" to clear_refs).
func clearRefs(b *testing.B, pid int) {
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		b.Logf("peak RSS not reset (%v): it covers the whole run", err)
	}
}

// procMem reads the process's peak and current RSS in bytes.
func procMem(b *testing.B, pid int) (hwm, rss int64) {
	f, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(f), "\n") {
		fs := strings.Fields(line)
		if len(fs) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(fs[1], 10, 64)
		switch fs[0] {
		case "VmHWM:":
			hwm = v << 10
		case "VmRSS:":
			rss = v << 10
		}
	}
	return hwm, rss
}
