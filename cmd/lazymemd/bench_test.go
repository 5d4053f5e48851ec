package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/engine"
)

// BenchmarkHTTP measures what the daemon adds to the engine: the same
// appends and recalls through the HTTP/JSON API on loopback (via=http)
// and as library calls (via=engine), side by side in one run.
//
//	go test ./cmd/lazymemd -run XXX -bench HTTP -benchtime 200x
func BenchmarkHTTP(b *testing.B) {
	cfg := workload.Config{Seed: 5, Records: 20_000}
	recs, err := workload.Records(cfg)
	if err != nil {
		b.Fatal(err)
	}
	batch := make([]engine.Record, len(recs))
	for i, r := range recs {
		batch[i] = engine.Record{Time: r.Time, Agent: r.Agent, Session: r.Session, Role: r.Role, Text: r.Text, Meta: r.Meta}
	}
	// One JSON body per batch of 1000, encoded before the clock starts.
	var bodies [][]byte
	for lo := 0; lo < len(recs); lo += 1000 {
		buf := []byte(`{"records":[`)
		for i := lo; i < lo+1000; i++ {
			if i > lo {
				buf = append(buf, ',')
			}
			buf = workload.AppendJSON(buf, &recs[i])
		}
		bodies = append(bodies, append(buf, "]}"...))
	}
	open := func(b *testing.B) (*engine.DB, *httptest.Server) {
		db, err := engine.Open(b.TempDir(), engine.Options{})
		if err != nil {
			b.Fatal(err)
		}
		ts := httptest.NewServer(newServer(db, defaultLimits()).routes())
		b.Cleanup(func() { ts.Close(); db.Close() })
		return db, ts
	}
	post := func(b *testing.B, url string, body []byte) {
		resp, err := http.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		var out bytes.Buffer
		out.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("%s: %d %s", url, resp.StatusCode, out.Bytes())
		}
	}
	for _, via := range []string{"http", "engine"} {
		b.Run("append/batch=1000/via="+via, func(b *testing.B) {
			db, ts := open(b)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				j := i % len(bodies)
				if via == "http" {
					post(b, ts.URL+"/v1/records", bodies[j])
				} else if _, err := db.AppendBatch(context.Background(), batch[j*1000:(j+1)*1000]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "records/s")
		})
	}
	// Recall: a 20k-record store, the workload's keyword queries, warm cache
	// (each query asked once before the clock starts).
	db, ts := open(b)
	if _, err := db.AppendBatch(context.Background(), batch); err != nil {
		b.Fatal(err)
	}
	qs := workload.KeywordQueries(cfg, 200, 7)
	queries := make([]engine.Query, len(qs))
	qbodies := make([][]byte, len(qs))
	for i, q := range qs {
		queries[i] = engine.Query{Agent: q.Agent, Text: q.Text}
		qbodies[i], _ = json.Marshal(map[string]any{"agent": q.Agent, "text": q.Text, "parse_time": false})
		if _, err := db.Recall(context.Background(), queries[i]); err != nil {
			b.Fatal(err)
		}
	}
	for _, via := range []string{"http", "engine"} {
		b.Run("recall/k=10/via="+via, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if via == "http" {
					post(b, ts.URL+"/v1/recall", qbodies[i%len(qbodies)])
				} else if _, err := db.Recall(context.Background(), queries[i%len(queries)]); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-us")
		})
	}
	// Concurrent single appends from 16 clients: the group commit shares
	// one fsync among the requests waiting for it.
	b.Run("append/batch=1/clients=16/via=http", func(b *testing.B) {
		_, ts := open(b)
		single := make([][]byte, 1000)
		for i := range single {
			single[i] = workload.AppendJSON(nil, &recs[i])
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		next := 0
		b.ResetTimer()
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					mu.Lock()
					i := next
					next++
					mu.Unlock()
					if i >= b.N {
						return
					}
					post(b, ts.URL+"/v1/records", single[i%len(single)])
				}
			}()
		}
		wg.Wait()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	})
	_ = fmt.Sprint
}
