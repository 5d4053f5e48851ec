package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lazymem/lazymem/bench/workload"
	"github.com/lazymem/lazymem/cmd/internal/cluster/clustertest"
	"github.com/lazymem/lazymem/engine"
)

// benchLogger shows the nodes' warnings (LAZYMEM_BENCH_LOG=info: their
// restores too, with the time each took).
var benchLogger = func() *slog.Logger {
	level := slog.LevelWarn
	if os.Getenv("LAZYMEM_BENCH_LOG") == "info" {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}()

// BenchmarkRebuild measures how long a node with an empty directory
// takes to open every partition and catch up, side by side on one
// JetStream cluster (three servers in this process, R3): mode=replay
// on a stream without snapshots (the whole stream is replayed) and
// mode=snapshot on a stream holding the same records whose owner took
// snapshots every `every` partition messages (the newest snapshot is
// restored, then the messages after it are replayed), and
// mode=snapshot-noindex the same with snapshots that do not carry the
// index (engine Backup: the restore re-indexes the log; the snapshots
// before the index was added), at 20k and 80k records over 4
// partitions. Each iteration rebuilds all three, in rotating order.
// Reported: ms to caught up per mode, the ratios snapshot/replay and
// snapshot/noindex, and the messages the snapshots do not cover (what a
// restore replays).
//
//	go test ./cmd/internal/cluster -run XXX -bench Rebuild -benchtime 4x
func BenchmarkRebuild(b *testing.B) {
	for _, c := range []struct{ total, every int }{{20000, 5000}, {80000, 5000}, {80000, 1000}} {
		b.Run(fmt.Sprintf("records=%d/every=%d", c.total, c.every), func(b *testing.B) { benchRebuild(b, c.total, c.every) })
	}
}

// caughtUp waits until n has opened and caught up every partition.
func caughtUp(b *testing.B, n *Node) {
	deadline := time.Now().Add(5 * time.Minute)
	for p := range n.Partitions() {
		for {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			err := n.Wait(ctx, p, math.MaxUint64)
			cancel()
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("partition %d not caught up: %v", p, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func benchRebuild(b *testing.B, total, every int) {
	const parts = 4
	recs, err := workload.Records(workload.Config{Seed: 7, Records: total})
	if err != nil {
		b.Fatal(err)
	}
	nc := clustertest.Start(b, 3)
	open := func(stream, id, dir string, every int) *Node {
		n, err := Open(Options{NATS: nc.URLs(), NodeID: id, URL: "http://" + id, Dir: dir, Partitions: parts,
			Replicas: 3, LeaseTTL: 10 * time.Second, Stream: stream, OpenDB: openDB, SnapshotEvery: every, SnapshotInterval: -1, Logger: benchLogger,
			snapshotNoIndex: stream == "SNAPPLAIN"})
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	caughtUp := func(n *Node) { caughtUp(b, n) }
	// load appends every record to stream and returns the messages the
	// newest snapshots do not cover: what a restore replays.
	load := func(stream string, every int) (tail uint64) {
		n := open(stream, "loader", b.TempDir(), every)
		caughtUp(n)
		ctx := context.Background()
		batch := make([]engine.Record, 0, 500)
		for i := range recs {
			r := &recs[i]
			batch = append(batch, engine.Record{Time: r.Time, Agent: r.Agent, Session: r.Session, Role: r.Role, Text: r.Text, Meta: r.Meta})
			if len(batch) == cap(batch) || i == len(recs)-1 {
				if _, _, err := n.Append(ctx, batch, false, ""); err != nil {
					b.Fatal(err)
				}
				batch = batch[:0]
			}
		}
		caughtUp(n)
		if every > 0 {
			for p := range parts { // the snapshots due are taken
				for {
					n.mu.RLock()
					pt := n.parts[p]
					n.mu.RUnlock()
					pt.mu.Lock()
					done, since := !pt.snapping && pt.sinceSnap < uint64(every), pt.sinceSnap
					pt.mu.Unlock()
					if done {
						tail += since
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
		}
		if err := n.Close(); err != nil {
			b.Fatal(err)
		}
		return tail
	}
	load("REPLAY", -1)
	tail := load("SNAPSHOT", every)
	load("SNAPPLAIN", every)
	rebuild := func(b *testing.B, stream string) (time.Duration, Status) {
		dir := filepath.Join(b.TempDir(), "node")
		start := time.Now()
		n := open(stream, "fresh", dir, -1)
		caughtUp(n)
		d := time.Since(start)
		st := n.Status()
		if err := n.Close(); err != nil {
			b.Fatal(err)
		}
		if err := os.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
		return d, st
	}
	modes := []struct{ stream, name string }{{"REPLAY", "replay"}, {"SNAPSHOT", "snapshot"}, {"SNAPPLAIN", "snapshot-noindex"}}
	var sum [3]time.Duration
	b.ResetTimer()
	for i := range b.N {
		for j := range modes {
			k := (i + j) % len(modes)
			d, st := rebuild(b, modes[k].stream)
			sum[k] += d
			if restored := len(st.Restored) > 0; restored != (k > 0) {
				b.Fatalf("%s: restored %v", modes[k].name, st.Restored)
			}
		}
	}
	b.StopTimer()
	for k, m := range modes {
		b.ReportMetric(float64(sum[k].Milliseconds())/float64(b.N), m.name+"-ms")
	}
	b.ReportMetric(float64(sum[1])/float64(sum[0]), "snapshot/replay")
	b.ReportMetric(float64(sum[1])/float64(sum[2]), "snapshot/noindex")
	b.ReportMetric(float64(tail), "snapshot-tail-msgs")
}

// BenchmarkSnapshotGrowth measures a snapshot of a partition that grew
// by 1% since the last one, side by side on one JetStream cluster (three
// servers in this process, R3): mode=incremental (today's: the pieces
// the kept snapshots hold are referenced) and mode=whole (the copy
// uploaded whole as a tar, before), one partition of `records` workload
// records each. Each iteration appends 1% to both, snapshots both in
// rotating order, then rebuilds an empty node from each (restore, then
// caught up). Reported per mode: KB uploaded and ms per snapshot, ms per
// rebuild; and the ratios incremental/whole.
//
//	go test ./cmd/internal/cluster -run XXX -bench SnapshotGrowth -benchtime 3x
func BenchmarkSnapshotGrowth(b *testing.B) {
	for _, total := range []int{20000, 100000} {
		b.Run(fmt.Sprintf("records=%d", total), func(b *testing.B) { benchSnapshotGrowth(b, total) })
	}
}

func benchSnapshotGrowth(b *testing.B, total int) {
	grow := total / 100
	recs, err := workload.Records(workload.Config{Seed: 11, Records: total + (b.N+1)*grow})
	if err != nil {
		b.Fatal(err)
	}
	nc := clustertest.Start(b, 3)
	open := func(stream, id, dir string) *Node {
		n, err := Open(Options{NATS: nc.URLs(), NodeID: id, URL: "http://" + id, Dir: dir, Partitions: 1,
			Replicas: 3, LeaseTTL: 10 * time.Second, Stream: stream, OpenDB: openDB, SnapshotEvery: -1, SnapshotInterval: -1,
			Logger: benchLogger, snapshotWhole: stream == "WHOLE"})
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	next := 0
	add := func(nodes []*Node, count int) {
		ctx := context.Background()
		batch := make([]engine.Record, 0, 500)
		for i := next; i < next+count; i++ {
			r := &recs[i]
			batch = append(batch, engine.Record{Time: r.Time, Agent: r.Agent, Session: r.Session, Role: r.Role, Text: r.Text, Meta: r.Meta})
			if len(batch) == cap(batch) || i == next+count-1 {
				for _, n := range nodes {
					if _, _, err := n.Append(ctx, batch, false, ""); err != nil {
						b.Fatal(err)
					}
				}
				batch = batch[:0]
			}
		}
		next += count
		for _, n := range nodes {
			caughtUp(b, n)
		}
	}
	modes := []string{"incremental", "whole"}
	nodes := []*Node{open("INCR", "owner", b.TempDir()), open("WHOLE", "owner", b.TempDir())}
	defer func() {
		for _, n := range nodes {
			if err := n.Close(); err != nil {
				b.Error(err)
			}
		}
	}()
	caughtUp(b, nodes[0])
	caughtUp(b, nodes[1])
	add(nodes, total)
	snap := func(n *Node) (uploadStats, time.Duration) {
		n.mu.RLock()
		pt := n.parts[0]
		n.mu.RUnlock()
		t0 := time.Now()
		if _, err := pt.snapshot(context.Background()); err != nil {
			b.Fatal(err)
		}
		return pt.lastUpload, time.Since(t0)
	}
	for _, n := range nodes {
		snap(n) // the first snapshot: whole in both modes
	}
	rebuild := func(stream string) time.Duration {
		dir := filepath.Join(b.TempDir(), "fresh")
		t0 := time.Now()
		n := open(stream, "fresh", dir)
		caughtUp(b, n)
		d := time.Since(t0)
		if st := n.Status(); st.Restored["0"] == 0 {
			b.Fatalf("%s: the fresh node restored nothing: %+v", stream, st)
		}
		if err := n.Close(); err != nil {
			b.Fatal(err)
		}
		if err := os.RemoveAll(dir); err != nil {
			b.Fatal(err)
		}
		return d
	}
	var bytes [2]int64
	var took, rebuilt [2]time.Duration
	b.ResetTimer()
	for i := range b.N {
		add(nodes, grow)
		for j := range nodes {
			k := (i + j) % 2
			st, d := snap(nodes[k])
			bytes[k] += st.Uploaded + int64(st.Manifest)
			took[k] += d
		}
		for j := range nodes {
			k := (i + j) % 2
			rebuilt[k] += rebuild([]string{"INCR", "WHOLE"}[k])
		}
	}
	b.StopTimer()
	for k, m := range modes {
		b.ReportMetric(float64(bytes[k])/1024/float64(b.N), m+"-KB")
		b.ReportMetric(float64(took[k].Milliseconds())/float64(b.N), m+"-ms")
		b.ReportMetric(float64(rebuilt[k].Milliseconds())/float64(b.N), m+"-rebuild-ms")
	}
	b.ReportMetric(float64(bytes[0])/float64(bytes[1]), "KB-incr/whole")
	b.ReportMetric(float64(took[0])/float64(took[1]), "ms-incr/whole")
	b.ReportMetric(float64(rebuilt[0])/float64(rebuilt[1]), "rebuild-incr/whole")
}
