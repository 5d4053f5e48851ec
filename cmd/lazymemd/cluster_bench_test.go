package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/cmd/internal/cluster"
	"github.com/lazymem/lazymem/cmd/internal/cluster/clustertest"
)

// BenchmarkCluster compares a standalone daemon (mode=single) with a
// cluster of two daemons on three JetStream servers, stream R3
// (mode=cluster), side by side in one run, every server in this
// process on loopback: appends of one record and of 100 (latency p50
// and p99, records/s), and recalls answered by the owner of the agent's
// partition (mode=local) or forwarded to it by the other daemon
// (mode=forwarded), p50 and p99. Both stores hold the same 5000
// workload records first.
//
//	go test ./cmd/lazymemd -run XXX -bench Cluster -benchtime 300x
func BenchmarkCluster(b *testing.B) {
	cfg := workload.Config{Seed: 21, Records: 5000}
	recs, err := workload.Records(cfg)
	if err != nil {
		b.Fatal(err)
	}
	batchBody := func(lo, n int) []byte {
		buf := []byte(`{"records":[`)
		for i := lo; i < lo+n; i++ {
			if i > lo {
				buf = append(buf, ',')
			}
			buf = workload.AppendJSON(buf, &recs[i%len(recs)])
		}
		return append(buf, "]}"...)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	post := func(b *testing.B, url string, body []byte) []byte {
		resp, err := client.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("POST %s: %d %s", url, resp.StatusCode, out)
		}
		return out
	}

	single, stopSingle := startServe(b, testConfig(b.TempDir()))
	defer stopSingle()
	nc := clustertest.Start(b, 3)
	var nodes []string
	for _, id := range []string{"n1", "n2"} {
		c, err := parseArgs(clusterArgs(b.TempDir(), id, nc.URLs(), 3), io.Discard)
		if err != nil {
			b.Fatal(err)
		}
		u, stop := startServe(b, c)
		defer stop()
		nodes = append(nodes, u)
	}
	var last uint64
	for lo := 0; lo < len(recs); lo += 100 {
		post(b, single+"/v1/records", batchBody(lo, 100))
		var ack struct{ Seq uint64 }
		if err := json.Unmarshal(post(b, nodes[lo/100%2]+"/v1/records", batchBody(lo, 100)), &ack); err != nil {
			b.Fatal(err)
		}
		last = max(last, ack.Seq)
	}
	// Each query goes to its agent's owner (local) or the other node
	// (forwarded); which is which is read from the owners' status.
	owned := map[int]string{}
	deadline := time.Now().Add(30 * time.Second)
	for len(owned) < 8 && time.Now().Before(deadline) {
		for i, u := range nodes {
			resp, err := client.Get(u + "/v1/stats")
			if err != nil {
				b.Fatal(err)
			}
			var st cluster.Status
			json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			for p := range st.Applied {
				var n int
				fmt.Sscan(p, &n)
				owned[n] = nodes[i]
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	qs := workload.KeywordQueries(cfg, 200, 3)
	type query struct {
		body             []byte
		owner, forwarder string
	}
	var queries []query
	for _, q := range qs {
		body, _ := json.Marshal(map[string]any{"agent": q.Agent, "text": q.Text})
		o := owned[cluster.PartitionOf(q.Agent, 8)]
		f := nodes[0]
		if o == nodes[0] {
			f = nodes[1]
		}
		queries = append(queries, query{body, o, f})
	}
	// Wait until the owners have applied the load, and warm every
	// store's embedding cache with every query, so that no mode runs
	// colder than another.
	for _, q := range queries {
		post(b, fmt.Sprintf("%s/v1/recall?min_seq=%d&wait=30s", q.owner, last), q.body)
		post(b, single+"/v1/recall", q.body)
	}

	report := func(b *testing.B, lat []time.Duration, recsPerOp int) {
		slices.Sort(lat)
		if len(lat) == 0 {
			return
		}
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-us")
		var sum time.Duration
		for _, d := range lat {
			sum += d
		}
		b.ReportMetric(float64(recsPerOp*len(lat))/sum.Seconds(), "records/s")
	}
	for _, n := range []int{1, 100} {
		var bodies [][]byte
		for lo := 0; lo < len(recs); lo += n {
			if n == 1 {
				bodies = append(bodies, workload.AppendJSON(nil, &recs[lo]))
			} else {
				bodies = append(bodies, batchBody(lo, n))
			}
		}
		for _, mode := range []string{"single", "cluster"} {
			b.Run(fmt.Sprintf("op=append/n=%d/mode=%s", n, mode), func(b *testing.B) {
				url := single
				lat := make([]time.Duration, 0, b.N)
				i := 0
				for b.Loop() {
					if mode == "cluster" {
						url = nodes[i%2]
					}
					t0 := time.Now()
					post(b, url+"/v1/records", bodies[i%len(bodies)])
					lat = append(lat, time.Since(t0))
					i++
				}
				report(b, lat, n)
			})
		}
	}
	for _, mode := range []string{"single", "local", "forwarded"} {
		b.Run("op=recall/mode="+mode, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			i := 0
			for b.Loop() {
				q := queries[i%len(queries)]
				url := single
				switch mode {
				case "local":
					url = q.owner
				case "forwarded":
					url = q.forwarder
				}
				t0 := time.Now()
				post(b, url+"/v1/recall", q.body)
				lat = append(lat, time.Since(t0))
				i++
			}
			report(b, lat, 1)
		})
	}
}
