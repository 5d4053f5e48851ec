package cluster

import (
	"context"
	"fmt"
	"testing"

	"github.com/lazymem/lazymem/cmd/internal/cluster/clustertest"
	"github.com/lazymem/lazymem/engine"
	"github.com/lazymem/lazymem/internal/storetest"
)

// TestForgetPurgedSharedBlock: a record purged from the stream below a
// snapshot, then forgotten, while other partitions' messages share the
// stream's message blocks with it. Two agents in two partitions append
// in turn; the first partition is snapshotted and purged (the second
// is not); then one of its purged records is forgotten and the
// forget's own snapshot is taken. No file of the NATS server nor of the
// node may hold the forgotten text afterwards. (Before the purge
// messages, the text stayed in the stream's block file: the other
// partition's messages kept the block; and the forget failed, its
// erase answered "sequence N not found".)
func TestForgetPurgedSharedBlock(t *testing.T) {
	nc := clustertest.Start(t, 1)
	dir := t.TempDir()
	a := snapNode(t, nc, "a", dir, 1000, nil) // snapshots when asked, and after a forget
	defer a.Close()
	waitOwned(t, a)
	ctx := context.Background()
	const secret = "kqzvwjxp"
	agent := "ag"
	p := a.Partition(agent)
	other := ""
	for i := 0; other == ""; i++ {
		if name := fmt.Sprintf("other%d", i); a.Partition(name) != p {
			other = name
		}
	}
	var forget []uint64
	var last uint64
	for i := range 10 {
		text := fmt.Sprintf("ordinary note number %d", i)
		if i == 3 {
			text = "the passcode is " + secret
		}
		ids, _, err := a.Append(ctx, []engine.Record{{Agent: agent, Text: text}}, true, "")
		if err != nil {
			t.Fatal(err)
		}
		if i == 3 {
			forget = ids
		}
		if _, last, err = a.Append(ctx, []engine.Record{{Agent: other, Text: fmt.Sprintf("another agent's note %d", i)}}, true, ""); err != nil {
			t.Fatal(err)
		}
	}
	s := snapshotAt(t, a, p, last)
	if first, _ := streamFloor(t, a, p); first != 0 && first <= s {
		t.Fatalf("partition %d's stream starts at %d after the purge below %d", p, first, s)
	}
	if _, count := streamFloor(t, a, a.Partition(other)); count != 10 {
		t.Fatalf("the other partition holds %d messages, want its 10", count)
	}
	fseq, err := a.Forget(ctx, p, forget)
	if err != nil {
		t.Fatal(err)
	}
	// The forget's snapshot of p, and the other partitions' snapshots
	// that the purge messages after the forget make due.
	for q := range a.Partitions() {
		waitSnapshot(t, a, q, fseq)
	}
	if got := recordsOf(t, a, agent, fseq); len(got) != 9 {
		t.Fatalf("%d records after the forget, want 9", len(got))
	}
	if where := storetest.Find(storetest.Images(t, nc.StoreDir(0)), []byte(secret)); len(where) > 0 {
		t.Errorf("the NATS server's files hold the forgotten text: %v", where)
	}
	if where := storetest.Find(storetest.Images(t, dir), []byte(secret)); len(where) > 0 {
		t.Errorf("the node's files hold the forgotten text: %v", where)
	}
	if got := recordsOf(t, a, other, fseq); len(got) != 10 {
		t.Fatalf("%d records of the other agent after the forget, want 10", len(got))
	}
	// Every partition was purged through its new snapshot: a node with
	// no copy restores them and holds every record.
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b := snapNode(t, nc, "b", t.TempDir(), 1000, nil)
	defer b.Close()
	waitOwned(t, b)
	if got := recordsOf(t, b, agent, fseq); len(got) != 9 {
		t.Fatalf("%d records restored after the forget, want 9", len(got))
	}
	if got := recordsOf(t, b, other, fseq); len(got) != 10 {
		t.Fatalf("%d records of the other agent restored, want 10", len(got))
	}
}
