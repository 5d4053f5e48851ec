package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/lazymem/lazymem/cmd/internal/cluster/clustertest"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/internal/storetest"
)

// TestForgetPurgedSharedBlock: a record purged from the stream below a
// snapshot, then forgotten, while other partitions' messages share the
// stream's message blocks with it. Three agents in three partitions
// append in turn; the first agent's partition is snapshotted and purged
// (the others are not); then one of its purged records is forgotten.
// Once every partition has taken the snapshot its purge message (or
// the forget) made due, no stream file of the three NATS servers (R3)
// and no file of the node holds the forgotten text; the Raft logs are
// reported, as TestForgetBytes does (their bound is docs/CLUSTER.md's).
// Records appended after the purge messages do not keep the forgotten
// record's block. A node with no copy then restores every record but
// the forgotten one.
//
// Before the purge messages, the text stayed in the stream's block file
// (msgs/1.blk): the other partitions' messages kept the block. Before
// that, the forget failed: its erase answered "sequence N not found".
func TestForgetPurgedSharedBlock(t *testing.T) {
	nc := clustertest.Start(t, 3)
	// One node at a time owns every partition, and no failover is tested:
	// a lease of 5 s survives renewals delayed by a loaded machine (with
	// 1 s, the -race suite on two cores once lost a lease mid-test, and
	// the test's Wait answered "partition not owned here"). Close
	// releases the leases, so the second node does not wait for them.
	open := func(id, dir string) *Node {
		n, err := Open(Options{NATS: nc.URLs(), NodeID: id, URL: "http://" + id, Dir: dir, Partitions: 4,
			Replicas: 3, LeaseTTL: 5 * time.Second, OpenDB: openDB, SnapshotEvery: 1000, SnapshotInterval: -1,
			Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	dir := t.TempDir()
	a := open("a", dir) // snapshots when asked, and after a forget or a purge message
	defer a.Close()
	waitOwned(t, a)
	ctx := context.Background()
	const secret = "kqzvwjxp"
	agents := []string{"ag"}
	seen := map[int]bool{a.Partition("ag"): true}
	for i := 0; len(agents) < 3; i++ {
		name := fmt.Sprintf("other%d", i)
		if q := a.Partition(name); !seen[q] {
			seen[q] = true
			agents = append(agents, name)
		}
	}
	p := a.Partition(agents[0])
	var forget []uint64
	var last uint64
	for i := range 10 {
		for j, agent := range agents {
			text := fmt.Sprintf("note %d of agent %d", i, j)
			if i == 3 && j == 0 {
				text = "the passcode is " + secret
			}
			ids, seq, err := a.Append(ctx, []engine.Record{{Agent: agent, Text: text}}, true, "")
			if err != nil {
				t.Fatal(err)
			}
			if i == 3 && j == 0 {
				forget = ids
			}
			last = seq
		}
	}
	if err := a.Wait(ctx, p, last); err != nil {
		t.Fatal(err)
	}
	// A snapshot of p, which purges the stream of p below it. On three
	// servers under load a JetStream request may find no responder for a
	// moment (a leader election): tried again, as an owner's next
	// snapshot would be.
	var s uint64
	for try := 1; ; try++ {
		var err error
		if s, err = part(t, a, p).snapshot(ctx); err == nil {
			break
		} else if try == 5 {
			t.Fatal(err)
		} else {
			t.Logf("snapshot of partition %d: %v; trying again", p, err)
			time.Sleep(time.Second)
		}
	}
	if first, _ := streamFloor(t, a, p); first != 0 && first <= s {
		t.Fatalf("partition %d's stream starts at %d after the purge below %d", p, first, s)
	}
	for _, agent := range agents[1:] {
		if _, count := streamFloor(t, a, a.Partition(agent)); count != 10 {
			t.Fatalf("%s's partition holds %d messages, want its 10", agent, count)
		}
	}
	tf := time.Now()
	fseq, err := a.Forget(ctx, p, forget)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the forget of a purged record (its sweep included) took %v", time.Since(tf).Round(time.Millisecond))
	// Each partition's last message is now its purge message.
	purges := make([]uint64, a.Partitions())
	for q := range purges {
		if purges[q], err = a.lastSeq(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	// Records appended after the purge messages, while the snapshots
	// they make due are taken: the stream keeps them, and they must not
	// keep the forgotten record's block.
	var later uint64
	for i := range 3 {
		if _, later, err = a.Append(ctx, []engine.Record{{Agent: agents[1], Text: fmt.Sprintf("a later note %d", i)}}, true, ""); err != nil {
			t.Fatal(err)
		}
	}
	for q, seq := range purges {
		if err := a.Wait(ctx, q, seq); err != nil {
			t.Fatal(err)
		}
		waitSnapshot(t, a, q, max(seq, fseq))
	}
	for j, agent := range agents {
		want := []int{9, 13, 10}[j]
		if got := recordsOf(t, a, agent, later); len(got) != want {
			t.Fatalf("%d records of %s after the forget, want %d", len(got), agent, want)
		}
	}
	for i := range 3 {
		for _, f := range storetest.Find(storetest.Images(t, nc.StoreDir(i)), []byte(secret)) {
			if isRaft(f) {
				t.Logf("NATS server %d: a Raft log file holds the forgotten text (until its group's next snapshot): %s", i, f)
			} else {
				t.Errorf("NATS server %d: a stream file holds the forgotten text: %s", i, f)
			}
		}
	}
	if where := storetest.Find(storetest.Images(t, dir), []byte(secret)); len(where) > 0 {
		t.Errorf("the node's files hold the forgotten text: %v", where)
	}
	if t.Failed() {
		for q := range purges {
			first, count := streamFloor(t, a, q)
			t.Logf("partition %d: purge message %d, snapshot %d; the stream holds %d of its messages from %d", q, purges[q], part(t, a, q).snapSeq, count, first)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b := open("b", t.TempDir())
	defer b.Close()
	waitOwned(t, b)
	for j, agent := range agents {
		want := []int{9, 13, 10}[j]
		if got := recordsOf(t, b, agent, later); len(got) != want {
			t.Fatalf("%d records of %s restored, want %d", len(got), agent, want)
		}
	}
}

// testWriter writes a node's log lines to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(b))
	return len(b), nil
}
