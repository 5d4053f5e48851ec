package main

import (
	"bytes"
	"context"
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
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// BenchmarkCluster compares a standalone daemon (mode=single) with a
// cluster of two daemons on three JetStream servers, stream R3
// (mode=cluster), side by side in one run, every server in this
// process on loopback: appends of one record and of 100 (latency p50
// and p99, records/s), and recalls answered by the owner of the agent's
// partition (mode=local) or forwarded to it by the other daemon
// (mode=forwarded), p50 and p99, as POST /v1/recall (op=recall) and as
// the MCP search tool (op=recall-mcp); an append read back at once
// through the same daemon (op=append-recall); and the replay of a daemon joining
// with an empty store (op=replay: 50k more records first, then the time
// from its start until it holds its share of the partitions, each caught up, lease TTL 1 s
// included). Both stores hold the same 5000
// workload records first. Each iteration runs every mode in turn and
// each mode's figures are reported apart (single-p50-us,
// cluster-p50-us, ...): on a shared machine the load weighs on all.
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
	logStreamSize(b, nc.URLs(), len(recs))
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

	// Each iteration runs every mode once, in turn, so that the load of
	// the machine weighs on all alike; each mode's latencies are reported
	// apart.
	interleaved := func(b *testing.B, modes []string, recsPerOp int, do func(mode string, i int)) {
		lat := make([][]time.Duration, len(modes))
		i := 0
		for b.Loop() {
			// The order rotates: no mode always follows another (a recall
			// just made warms the caches the next one reads).
			for k := range modes {
				m := (i + k) % len(modes)
				t0 := time.Now()
				do(modes[m], i)
				lat[m] = append(lat[m], time.Since(t0))
			}
			i++
		}
		for m, mode := range modes {
			l := lat[m]
			slices.Sort(l)
			var sum time.Duration
			for _, d := range l {
				sum += d
			}
			b.ReportMetric(float64(l[len(l)/2].Microseconds()), mode+"-p50-us")
			b.ReportMetric(float64(l[len(l)*99/100].Microseconds()), mode+"-p99-us")
			b.ReportMetric(float64(recsPerOp*len(l))/sum.Seconds(), mode+"-rec/s")
		}
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
		b.Run(fmt.Sprintf("op=append/n=%d", n), func(b *testing.B) {
			interleaved(b, []string{"single", "cluster"}, n, func(mode string, i int) {
				url := single
				if mode == "cluster" {
					url = nodes[i%2]
				}
				post(b, url+"/v1/records", bodies[i%len(bodies)])
			})
		})
	}
	// recalls times one recall per mode and iteration: the standalone
	// daemon, the owner of the agent's partition, the other node; each
	// mode asks another query of the list at a time. ask sends it.
	recalls := func(b *testing.B, ask func(b *testing.B, mode, url string, q []byte)) {
		interleaved(b, []string{"single", "local", "forwarded"}, 1, func(mode string, i int) {
			url, q := single, queries[i%len(queries)]
			switch mode {
			case "local":
				q = queries[(i+len(queries)/3)%len(queries)]
				url = q.owner
			case "forwarded":
				q = queries[(i+2*len(queries)/3)%len(queries)]
				url = q.forwarder
			}
			ask(b, mode, url, q.body)
		})
	}
	b.Run("op=recall", func(b *testing.B) {
		recalls(b, func(b *testing.B, _, url string, q []byte) { post(b, url+"/v1/recall", q) })
	})
	// The same recalls as MCP search calls (JSON-RPC over /mcp): a
	// cluster node routes the whole request, and waits for the sequence
	// it last published to the partition (read your node's writes).
	mcpBody := func(q []byte) []byte {
		var args map[string]any
		_ = json.Unmarshal(q, &args)
		args["query"] = args["text"]
		delete(args, "text")
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
			"params": map[string]any{"name": "search", "arguments": args}})
		return body
	}
	b.Run("op=recall-mcp", func(b *testing.B) {
		recalls(b, func(b *testing.B, mode, url string, q []byte) {
			if out := post(b, url+"/mcp", mcpBody(q)); bytes.Contains(out, []byte(`"isError":true`)) {
				b.Fatalf("%s: %s", mode, out)
			}
		})
	})
	// An append, then a recall of it through the same daemon with no
	// ?min_seq=: the time until a write is read back. The cluster node
	// waits until the owner applied what it published (read your node's
	// writes); local: both through the owner of the agent's partition,
	// forwarded: both through the other node. The record's word is new
	// each time: the recall must find that record.
	b.Run("op=append-recall", func(b *testing.B) {
		interleaved(b, []string{"single", "local", "forwarded"}, 1, func(mode string, i int) {
			q := queries[i%len(queries)]
			url := map[string]string{"single": single, "local": q.owner, "forwarded": q.forwarder}[mode]
			var agent struct{ Agent string }
			_ = json.Unmarshal(q.body, &agent)
			word := fmt.Sprintf("visibility%s%d", mode, i)
			var ack struct{ IDs []uint64 }
			_ = json.Unmarshal(post(b, url+"/v1/records", fmt.Appendf(nil, `{"agent":%q,"text":"probe %s"}`, agent.Agent, word)), &ack)
			var res struct{ Memories []struct{ ID uint64 } }
			_ = json.Unmarshal(post(b, url+"/v1/recall", fmt.Appendf(nil, `{"agent":%q,"text":%q,"mode":"sparse","k":1}`, agent.Agent, word)), &res)
			if len(ack.IDs) != 1 || len(res.Memories) != 1 || res.Memories[0].ID != ack.IDs[0] {
				b.Fatalf("%s: the recall after the append found %+v, want id %v", mode, res.Memories, ack.IDs)
			}
		})
	})
	// A daemon joining with an empty store takes its share of the
	// partitions and replays them from the stream: records/s of replay.
	b.Run("op=replay", func(b *testing.B) {
		for lo := 0; lo < 50_000; lo += 100 {
			post(b, nodes[lo/100%2]+"/v1/records", batchBody(lo, 100))
		}
		for b.Loop() {
			id := fmt.Sprintf("r%d", b.N)
			c, err := parseArgs(clusterArgs(b.TempDir(), id, nc.URLs(), 3), io.Discard)
			if err != nil {
				b.Fatal(err)
			}
			t0 := time.Now()
			u, stop := startServe(b, c)
			var st cluster.Status
			for {
				resp, err := client.Get(u + "/v1/stats")
				if err != nil {
					b.Fatal(err)
				}
				st = cluster.Status{}
				json.NewDecoder(resp.Body).Decode(&st)
				resp.Body.Close()
				// Done when the node holds its settled share of the
				// partitions, each caught up (a node that caught up with
				// the first partitions it took, before the others' leases
				// moved the rest to it, is not done).
				done := true
				for p := range 8 {
					settled := cluster.SettledOwner(p, []string{"n1", "n2", id}) == id
					caught, held := st.CaughtUp[fmt.Sprint(p)]
					done = done && held == settled && (!held || caught)
				}
				if done {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			d := time.Since(t0)
			var n uint64
			for _, r := range st.Records {
				n += r
			}
			b.ReportMetric(float64(n)/d.Seconds(), "replayed-rec/s")
			b.ReportMetric(float64(n), "replayed-records")
			b.StopTimer()
			if err := stop(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
}

// logStreamSize logs the stream's bytes per record (one replica's).
func logStreamSize(b *testing.B, natsURLs string, records int) {
	nc, err := nats.Connect(natsURLs)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	s, err := js.Stream(context.Background(), "LAZYMEM")
	if err != nil {
		b.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("stream: %d messages, %d bytes per replica, %.0f bytes per record (the workload's JSON: %d records)",
		info.State.Msgs, info.State.Bytes, float64(info.State.Bytes)/float64(info.State.Msgs), records)
}
